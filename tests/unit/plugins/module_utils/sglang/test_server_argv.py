# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for module_utils/sglang/argv.py and the sglang_argv filter."""
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.filter.sglang_argv import FilterModule
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render, shell_join

FILTERS = FilterModule().filters()


def gpus(major, count=8, pcie_only=True):
    return {"present": True, "count": count,
            "gpus": [{"compute_cap": "%d.0" % major, "compute_major": major}] * count,
            "topology": {"all_nvlink": not pcie_only, "pcie_only": pcie_only}}


SEED = {
    "model_path": "/models/kimi-k2.5-int4", "tp": 8, "host": "0.0.0.0", "port": 30000,
    "speculative": {"algorithm": "EAGLE3", "draft_model_path": "/models/eagle3", "num_steps": 3,
                    "eagle_topk": 1, "num_draft_tokens": 4, "adaptive": False, "adaptive_config": None},
    "args": {"cuda-graph-max-bs": 128, "disable_custom_all_reduce": True, "trust_remote_code": True},
}


def opt(argv, flag):
    i = argv.index(flag)
    return argv[i + 1]


@pytest.mark.parametrize("version,flag", [("0.5.9", "--cuda-graph-max-bs"), ("0.5.10.post1", "--cuda-graph-max-bs"),
                                          ("0.5.23", "--cuda-graph-max-bs-decode")])
def test_cuda_graph_max_bs_name_per_version(version, flag):
    r = render(SEED, version, gpus(12))
    assert r["errors"] == []
    assert opt(r["argv"], flag) == "128"
    assert "--cuda-graph-max-bs-prefill" not in r["argv"]


def test_order_model_first_core_spec_then_sorted_args():
    r = render(dict(SEED, args={"zeta_thing": 1, "alpha_thing": True, "cuda_graph_max_bs": 64}), "0.5.23")
    argv = r["argv"]
    assert argv[:2] == ["--model-path", "/models/kimi-k2.5-int4"]
    assert argv.index("--tp-size") < argv.index("--speculative-algorithm") < argv.index("--alpha-thing")
    assert argv.index("--alpha-thing") < argv.index("--cuda-graph-max-bs-decode") < argv.index("--zeta-thing")
    assert render(SEED, "0.5.23") == render(SEED, "0.5.23")


def test_value_shapes():
    r = render({"model_path": "m",
                "args": {"a_flag": True, "trust_remote_code": False, "none": None,
                         "cuda_graph_bs": [1, 2, 4], "json_model_override_args": {"b": 1, "a": [2]}}},
               "0.5.23")
    argv = r["argv"]
    assert "--a-flag" in argv and "--trust-remote-code" not in argv and "--none" not in argv
    i = argv.index("--cuda-graph-bs-decode")
    assert argv[i:i + 4] == ["--cuda-graph-bs-decode", "1", "2", "4"] and argv.count("--cuda-graph-bs-decode") == 1
    assert opt(argv, "--json-model-override-args") == '{"a":[2],"b":1}'


def test_fusion_deprecated_on_0523_and_backend_on_old():
    r = render(dict(SEED, args={"enable_flashinfer_allreduce_fusion": True}), "0.5.23", gpus(10, pcie_only=False))
    assert opt(r["argv"], "--flashinfer-allreduce-fusion-backend") == "auto"
    assert "--enable-flashinfer-allreduce-fusion" not in r["argv"]
    assert any("deprecated" in w for w in r["warnings"])
    r = render(dict(SEED, args={"flashinfer_allreduce_fusion_backend": "mnnvl"}), "0.5.9")
    assert any("0.5.23" in e for e in r["errors"])


def test_pcie_only_adds_disable_custom_all_reduce_nvlink_does_not():
    s = dict(SEED, args={})
    r = render(s, "0.5.23", gpus(12, pcie_only=True))
    assert "--disable-custom-all-reduce" in r["argv"]
    assert any("PCIe-only" in w for w in r["warnings"])
    assert "--disable-custom-all-reduce" not in render(s, "0.5.23", gpus(9, pcie_only=False))["argv"]
    assert "--disable-custom-all-reduce" not in render(s, "0.5.23", gpus(12, count=2))["argv"]
    r = render(dict(s, args={"disable_custom_all_reduce": False}), "0.5.23", gpus(12))
    assert "--disable-custom-all-reduce" not in r["argv"] and r["warnings"]


@pytest.mark.parametrize("key,patch", [("enable_flashinfer_allreduce_fusion", "sm120-allreduce-fusion"),
                                       ("enable_torch_symm_mem", "sm120-symm-mem")])
def test_sm120_refusals_unless_patched(key, patch):
    s = dict(SEED, args={key: True})
    r = render(s, "0.5.10.post1", gpus(12))
    assert len(r["errors"]) == 1 and patch in r["errors"][0]
    assert render(s, "0.5.10.post1", gpus(12), patches=[patch])["errors"] == []
    assert render(s, "0.5.10.post1", gpus(9, pcie_only=False))["errors"] == []


def test_gated_options_on_gpus_without_the_fast_path():
    # Ampere: fusion is only a no-op (warning), symmetric memory has no size table at all (error).
    r = render(dict(SEED, args={"enable_flashinfer_allreduce_fusion": True}), "0.5.10.post1", gpus(8, pcie_only=False))
    assert r["errors"] == [] and any("only takes effect on SM90/SM100" in w for w in r["warnings"])
    r = render(dict(SEED, args={"enable_torch_symm_mem": True}), "0.5.10.post1", gpus(8, pcie_only=False))
    assert len(r["errors"]) == 1 and "9.x and 10.x only" in r["errors"][0]


def arch_env(env):
    """The render's environment less the health latch's two variables (test_sglang_gates_health.py has those)."""
    return dict((k, v) for k, v in env.items()
                if k not in ("SGLANG_HEALTH_CHECK_TIMEOUT", "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION"))


def test_sm120_trtllm_and_env():
    r = render(dict(SEED, args={"attention_backend": "trtllm_mla", "decode_attention_backend": "triton"}), "0.5.23", gpus(12))
    assert len(r["errors"]) == 1 and "attention_backend=trtllm_mla" in r["errors"][0]
    assert arch_env(r["env"]) == {"SGLANG_ENABLE_JIT_DEEPGEMM": "0"}
    assert render(dict(SEED, args={"attention_backend": "trtllm_mla"}), "0.5.23", gpus(10))["errors"] == []
    assert arch_env(render(SEED, "0.5.23", gpus(9))["env"]) == {}


def test_adaptive_version_and_topk():
    s = dict(SEED, speculative=dict(SEED["speculative"], adaptive=True))
    r = render(s, "0.5.9")
    assert len(r["errors"]) == 1 and "0.5.11" in r["errors"][0] and "patch" in r["errors"][0]
    assert render(s, "0.5.15.post1", adaptive_config_path="/etc/sglang/a.json")["errors"] == []
    r = render(s, "0.5.23")
    assert r["errors"] == [] and "--speculative-adaptive" in r["argv"]
    r = render(dict(SEED, speculative=dict(SEED["speculative"], adaptive=True, eagle_topk=4)), "0.5.23")
    assert any("eagle_topk 1" in e for e in r["errors"])


def test_adaptive_config_dict_becomes_file():
    cfg = {"1": {"candidate_steps": [1, 3]}, "64": {"candidate_steps": [0]}}
    s = dict(SEED, speculative=dict(SEED["speculative"], adaptive=True, adaptive_config=cfg))
    assert any("adaptive_config_path" in e for e in render(s, "0.5.23")["errors"])
    r = render(s, "0.5.23", adaptive_config_path="/etc/sglang/adaptive.json")
    assert r["errors"] == [] and opt(r["argv"], "--speculative-adaptive-config") == "/etc/sglang/adaptive.json"
    assert '"candidate_steps"' in r["files"]["/etc/sglang/adaptive.json"]
    bad = dict(SEED, speculative=dict(SEED["speculative"], adaptive=True, num_steps=5, adaptive_config=cfg))
    assert any("candidate_steps" in e for e in render(bad, "0.5.23", adaptive_config_path="/x.json")["errors"])


def test_multinode_and_owned_args():
    s = dict(SEED, tp=16, nnodes=2, node_rank=1, dist_init_addr="10.0.0.1:5000")
    argv = render(s, "0.5.23")["argv"]
    assert opt(argv, "--nnodes") == "2" and opt(argv, "--node-rank") == "1" and opt(argv, "--dist-init-addr") == "10.0.0.1:5000"
    r = render(dict(s, tp=15, node_rank=2, dist_init_addr="nohost"), "0.5.23")
    assert len(r["errors"]) == 2  # tp=15 over 2 nodes is server/plan's refusal (its one home), not the renderer's
    r = render(dict(SEED, args={"tp-size": 4, "port": 1}), "0.5.23")
    assert len(r["errors"]) == 2 and all("settings." in e for e in r["errors"])


def test_api_key_env_and_config():
    r = render(dict(SEED, api_key_env="SGLANG_KEY"), "0.5.23")
    assert opt(r["argv"], "--api-key") == "${SGLANG_KEY}"
    r = render(dict(SEED, api_key_env="SGLANG_KEY"), "0.5.23", api_key_config_path="/etc/sglang/key.yaml")
    assert "--api-key" not in r["argv"] and opt(r["argv"], "--config") == "/etc/sglang/key.yaml"
    assert render(dict(SEED, api_key_env="bad name"), "0.5.23")["errors"]
    # one --config only (SGLang: "Multiple config files specified!"), and it must be YAML by name
    r = render(dict(SEED, api_key_env="K", args={"config": "/etc/other.yaml"}), "0.5.23",
               api_key_config_path="/etc/sglang/key.yaml")
    assert r["argv"].count("--config") == 1 and any("args.config clashes" in e for e in r["errors"])
    r = render(dict(SEED, args={"config": "/etc/other.yaml"}), "0.5.23", api_key_config_path="/etc/sglang/key.yaml")
    assert r["errors"] == [] and opt(r["argv"], "--config") == "/etc/other.yaml"
    r = render(dict(SEED, api_key_env="K"), "0.5.23", api_key_config_path="/etc/sglang/key.json")
    assert "--config" not in r["argv"] and any("*.yaml" in e for e in r["errors"])


def test_shell_join_systemd_rules():
    assert shell_join(["--a", "50%", "$HOME", "${KEY}", "two words", 'q"b\\s', ""]) == \
        '--a 50%% "$$HOME" ${KEY} "two words" "q\\"b\\\\s" ""'


def test_filter_strict_and_lenient():
    bad = dict(SEED, args={"enable_torch_symm_mem": True, "attention_backend": "trtllm_mha"})
    with pytest.raises(AnsibleFilterError) as exc:
        FILTERS["sglang_argv"](bad, version="0.5.23", gpu=gpus(12))
    assert str(exc.value).count("\n- ") == 2
    r = FILTERS["sglang_argv"](bad, version="0.5.23", gpu=gpus(12), strict=False)
    assert len(r["errors"]) == 2
    assert FILTERS["sglang_exec_join"](["a b"]) == '"a b"'
    with pytest.raises(AnsibleFilterError):
        FILTERS["sglang_argv"](SEED)


# A false boolean (issue 28): --no-x where the version's real parser has BooleanOptionalAction, nothing where false
# is SGLang's own default, a refusal naming flag and version where it cannot be expressed. The switches and their
# defaults are cli_flags.SWITCHES, generated from the real parsers (tools/sglang_double/gen_flag_table.py).
@pytest.mark.parametrize("version", gates.VERIFIED_VERSIONS)
def test_false_store_true_left_out_where_false_is_the_default(version):
    r = render(dict(SEED, args={"trust_remote_code": False, "enable_metrics": False}), version, gpus(9, pcie_only=False))
    assert r["errors"] == [] and "--trust-remote-code" not in r["argv"] and "--enable-metrics" not in r["argv"]
    assert not any(a.startswith("--no-") for a in r["argv"])


@pytest.mark.parametrize("name,version", [("dllm_fdfo", "0.5.23"), ("enable_tf32_matmul", "0.5.23"),
                                          ("lora_strict_loading", "0.5.15.post1"),
                                          ("experts_shared_outer_loras", "0.5.10.post1")])
def test_false_boolean_optional_renders_its_negation(name, version):
    r = render(dict(SEED, args={name: False}), version, gpus(9, pcie_only=False))
    assert r["errors"] == []
    assert "--no-" + name.replace("_", "-") in r["argv"] and "--" + name.replace("_", "-") not in r["argv"]
    assert r["flags"][name] is False  # what the real parser must store (tests/real_parser checks it)
    on = render(dict(SEED, args={name: True}), version, gpus(9, pcie_only=False))
    assert "--" + name.replace("_", "-") in on["argv"] and on["flags"][name] is True


def test_false_where_the_version_has_no_negation_is_refused():
    # --enable-fused-qk-norm-rope: store_true (default False) up to 0.5.15.post1, so false is left out there;
    # BooleanOptionalAction defaulting to None (the model decides) on 0.5.23, so false must be said ...
    for version, argv in (("0.5.9", []), ("0.5.15.post1", []), ("0.5.23", ["--no-enable-fused-qk-norm-rope"])):
        r = render(dict(SEED, args={"enable_fused_qk_norm_rope": False}), version, gpus(9, pcie_only=False))
        assert r["errors"] == [] and [a for a in r["argv"] if "qk-norm" in a] == argv, version
    # ... and a switch that is on by default without --no-x cannot be turned off: refused, naming flag and version
    table = {"0.5.23": {"always_on": ("store_true", True)}}
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import cli_flags
    saved = cli_flags.SWITCHES
    cli_flags.SWITCHES = table
    try:
        r = render(dict(SEED, args={"always_on": False}), "0.5.23", gpus(9, pcie_only=False))
    finally:
        cli_flags.SWITCHES = saved
    assert "--always-on" not in r["argv"] and "--no-always-on" not in r["argv"]
    assert any("args.always_on=false" in e and "0.5.23" in e and "--always-on is on by default" in e
               for e in r["errors"]), r["errors"]


def test_false_for_an_option_that_is_no_switch_is_refused():
    # --context-length takes a value; false is no value SGLang reads, and a typo'd switch would vanish silently
    for name in ("context_length", "enable_metrix"):
        r = render(dict(SEED, args={name: False}), "0.5.23", gpus(9, pcie_only=False))
        flag = "--" + name.replace("_", "-")
        assert any(e.startswith("args.%s=false: %s is not an on/off switch in SGLang 0.5.23" % (name, flag))
                   for e in r["errors"]), r["errors"]


def test_false_on_an_unverified_version_is_left_out_with_a_warning():
    r = render(dict(SEED, args={"dllm_fdfo": False}), "0.5.24", gpus(9, pcie_only=False))
    assert "--no-dllm-fdfo" not in r["argv"] and "--dllm-fdfo" not in r["argv"]
    assert any("args.dllm_fdfo=false is left out" in w for w in r["warnings"])


def test_switch_table_matches_the_double_flag_tables():
    """cli_flags.py is generated from the same real parsers as the double's tables: stale when they differ."""
    import json
    import os
    import sys
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import cli_flags, gates
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
    sys.path.insert(0, os.path.join(repo, "tools", "sglang_double"))
    try:
        import gen_flag_table
    finally:
        sys.path.pop(0)
    assert sorted(cli_flags.SWITCHES) == sorted(gates.VERIFIED_VERSIONS)
    with open(os.path.join(repo, "plugins", "module_utils", "sglang", "cli_flags.py")) as fh:
        assert fh.read() == gen_flag_table.cli_flags_source(gen_flag_table.load_tables(gates.VERIFIED_VERSIONS)), \
            "cli_flags.py is stale: run python3 tools/sglang_double/gen_flag_table.py"
    for version in gates.VERIFIED_VERSIONS:
        with open(os.path.join(repo, "tools", "sglang_double", "sglang", "flags", version + ".json")) as fh:
            table = json.load(fh)
        assert table["version"] == version and table.get("schema") == gen_flag_table.SCHEMA, version
