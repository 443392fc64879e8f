# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for module_utils/sglang/argv.py and the sglang_argv filter."""
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.filter.sglang_argv import FilterModule
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import argv as A
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import cli_flags
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


# -- every rule of the renderer from both sides, with the words it says (mutation, issue 37) ---------------------------


def R(settings, version="0.5.23", **kw):
    return render(dict({"model_path": "m"}, **settings), version, **kw)


UNVERIFIED = ("SGLang %s is not one of the versions whose flags were verified (0.5.9, 0.5.10.post1, 0.5.15.post1, "
              "0.5.23); the preflight parse on the host is the check")


def test_a_version_outside_the_verified_ones_warns_and_an_unreadable_one_is_refused():
    assert R({}, "0.5.23")["warnings"] == [] and R({}, "0.5.9")["warnings"] == []
    assert R({}, "0.5.11")["warnings"] == [UNVERIFIED % "0.5.11"] and R({}, "0.5.11")["errors"] == []
    r = R({"args": {"cuda_graph_max_bs": 8}}, "banana")
    assert r["errors"] == ["unparseable SGLang version 'banana': give it as X.Y.Z (e.g. 0.5.23)"]
    assert r["warnings"] == [UNVERIFIED % "banana"]
    assert opt(r["argv"], "--cuda-graph-max-bs-decode") == "8"  # judged as the newest CLI
    assert "version" not in r


@pytest.mark.parametrize("tp, rendered, error", [
    (None, "1", None), (0, "1", None), (1, "1", None), (2, "2", None),
    (-1, "1", "settings.tp=-1 is not a positive integer: set the total tensor-parallel size"),
    (True, "1", "settings.tp=True is not a positive integer: set the total tensor-parallel size"),
    ("2", "1", "settings.tp='2' is not a positive integer: set the total tensor-parallel size")])
def test_tp_is_a_positive_integer(tp, rendered, error):
    r = R({"tp": tp})
    assert opt(r["argv"], "--tp-size") == rendered and r["flags"]["tp_size"] == int(rendered)
    assert r["errors"] == ([error] if error else [])


@pytest.mark.parametrize("port, error", [(0, True), (1, False), (30000, False), (65535, False), (65536, True),
                                         (-1, True), (True, True), ("30000", True)])
def test_port_is_1_to_65535(port, error):
    r = R({"port": port})
    if error:
        assert r["errors"] == ["settings.port=%r is not a TCP port: give an integer 1-65535" % (port,)]
        assert "--port" not in r["argv"]
    else:
        assert r["errors"] == [] and opt(r["argv"], "--port") == str(port) and r["flags"]["port"] == port
    assert "--port" not in R({"port": None})["argv"]


def test_core_settings_render_as_given():
    r = R({"host": "", "served_model_name": "kimi"})
    assert r["argv"] == ["--model-path", "m", "--tp-size", "1", "--host", "", "--served-model-name", "kimi"]
    assert R({"host": None, "served_model_name": ""})["argv"] == ["--model-path", "m", "--tp-size", "1"]
    assert render({}, "0.5.23")["argv"] == ["--tp-size", "1"]


@pytest.mark.parametrize("name", ["SGLANG-KEY", "1KEY", "KEY NAME", "${KEY}"])
def test_the_api_key_env_is_a_variable_name(name):
    assert R({"api_key_env": name})["errors"] == [
        "settings.api_key_env=%r is not an environment variable name: use e.g. SGLANG_API_KEY" % name]


def test_the_api_key_goes_through_a_yaml_config_or_argv_with_a_warning():
    for path in ("/etc/sglang/key.yaml", "/etc/sglang/key.yml", "/etc/sglang/KEY.YAML"):
        r = R({"api_key_env": "_K1"}, api_key_config_path=path)
        assert r["errors"] == [] and r["warnings"] == [] and opt(r["argv"], "--config") == path
        assert r["flags"]["config"] == path and "--api-key" not in r["argv"]
    r = R({"api_key_env": "K"}, api_key_config_path="/etc/sglang/key.json")
    assert r["errors"] == ["api_key_config_path=/etc/sglang/key.json: SGLang only reads --config files named *.yaml or "
                           "*.yml; rename it"] and "--config" not in r["argv"]
    r = R({"api_key_env": "SGLANG_KEY"})
    assert opt(r["argv"], "--api-key") == "${SGLANG_KEY}" and r["warnings"] == [
        "the API key from $SGLANG_KEY ends up in the server's argv (visible in ps to local users); pass "
        "api_key_config_path to load it from a --config file readable by the server only instead"]


def test_args_config_clashes_with_the_api_key_config_only():
    r = R({"api_key_env": "K", "args": {"config": "/x.yaml", "zeta_flag": True}}, api_key_config_path="/k.yaml")
    assert "--zeta-flag" in r["argv"]  # the options after it are still rendered
    assert r["errors"] == ["args.config clashes with the API key's --config file (SGLang reads only one --config): put "
                           "those options into args instead"]
    assert R({"args": {"config": "/x.yaml"}})["argv"][-2:] == ["--config", "/x.yaml"]


def spec_of(**spec):
    return {"speculative": spec}


@pytest.mark.parametrize("spec, algorithm", [(None, None), ("", None), ({}, "EAGLE3"), ({"algorithm": ""}, None),
                                             ({"algorithm": "nextn"}, "NEXTN"), ({"algorithm": None}, None)])
def test_speculation_is_on_for_a_mapping_that_names_an_algorithm_or_none(spec, algorithm):
    r = R({"speculative": spec})
    assert r["flags"].get("speculative_algorithm") == algorithm and r["errors"] == []


def test_a_speculative_setting_that_is_not_a_mapping_is_refused():
    r = R({"speculative": "EAGLE3"})
    assert r["errors"] == ["settings.speculative must be a mapping ({algorithm: EAGLE3, draft_model_path: ...}) or null"]
    assert "--speculative-algorithm" not in r["argv"]


def test_the_draft_and_its_numbers_render_as_given():
    r = R(spec_of(algorithm="EAGLE3", draft_model_path="/models/d", num_steps=0, eagle_topk=2, num_draft_tokens=5))
    assert r["argv"][4:] == ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/d",
                             "--speculative-num-steps", "0", "--speculative-eagle-topk", "2",
                             "--speculative-num-draft-tokens", "5"]
    assert r["flags"]["speculative_draft_model_path"] == "/models/d"
    r = R(spec_of(draft_model_path="", num_steps=None))
    assert r["argv"][4:] == ["--speculative-algorithm", "EAGLE3"]


@pytest.mark.parametrize("topk, steps, tokens, warned", [(1, 3, 4, False), (1, 3, 5, True), (1, 3, 3, True),
                                                         (1, 3, None, False), (2, 3, 8, False), (None, 3, 8, False),
                                                         (1, None, 8, False)])
def test_topk_1_resets_the_draft_tokens_to_steps_plus_one(topk, steps, tokens, warned):
    r = R(spec_of(num_steps=steps, eagle_topk=topk, num_draft_tokens=tokens))
    assert r["warnings"] == (["speculative.num_draft_tokens=%d is reset by SGLang to num_steps + 1 = 4 when eagle_topk "
                              "is 1" % tokens] if warned else [])


@pytest.mark.parametrize("value, version, topk, refused", [
    ("1", "0.5.10.post1", 2, True), ("TRUE", "0.5.10.post1", 2, True), ("yes", "0.5.15.post1", 4, True),
    ("on", "0.5.9", 2, True), ("0", "0.5.10.post1", 2, False), ("1", "0.5.10.post1", 1, False),
    ("1", "0.5.23", 2, False), ("1", "0.5.10.post1", None, False)])
def test_spec_v2_before_0523_needs_topk_1(value, version, topk, refused):
    r = R(spec_of(eagle_topk=topk), version, env={"SGLANG_ENABLE_SPEC_V2": value})
    errors = [e for e in r["errors"] if "spec v2" in e]
    assert errors == (["speculative.eagle_topk=%s with SGLANG_ENABLE_SPEC_V2 on: spec v2 needs eagle_topk 1" % topk]
                      if refused else [])


ADAPTIVE_OLD = ("speculative.adaptive needs --speculative-adaptive, which SGLang %s lacks (added in 0.5.11): upgrade "
                "sglang, or apply the seed's adaptive-speculation patch through roles/sglang's patch mechanism and pass "
                "its own flag in args")


@pytest.mark.parametrize("version, refused", [("0.5.10.post1", True), ("0.5.11", False), ("0.5.15.post1", False)])
def test_adaptive_speculation_from_0511(version, refused):
    r = R(spec_of(adaptive=True, eagle_topk=1), version)
    assert r["errors"] == ([ADAPTIVE_OLD % version] if refused else [])
    assert ("--speculative-adaptive" in r["argv"]) is not refused


@pytest.mark.parametrize("topk, refused", [(None, False), (1, False), (2, True)])
def test_adaptive_speculation_needs_topk_1(topk, refused):
    r = R(spec_of(adaptive=True, eagle_topk=topk))
    assert r["errors"] == (["speculative.adaptive needs eagle_topk 1 (got 2): set eagle_topk: 1 or drop it"]
                           if refused else [])
    assert r["flags"]["speculative_adaptive"] is True


def test_an_adaptive_config_mapping_is_written_as_json_and_its_steps_held():
    cfg = {"1": {"candidate_steps": [1, 3]}, "64": {"candidate_steps": [0]}}
    r = R(spec_of(adaptive=True, num_steps=3, adaptive_config=cfg), adaptive_config_path="/etc/a.json")
    assert r["errors"] == [] and r["files"] == {"/etc/a.json": '{\n  "1": {\n    "candidate_steps": [\n      1,\n      3\n'
                                                "    ]\n  },\n  \"64\": {\n    \"candidate_steps\": [\n      0\n    ]\n"
                                                "  }\n}\n"}
    assert r["argv"][-2:] == ["--speculative-adaptive-config", "/etc/a.json"]
    r = R(spec_of(adaptive=True, num_steps=2, adaptive_config=cfg), adaptive_config_path="/etc/a.json")
    assert r["errors"] == ["speculative.num_steps=2 is not among adaptive_config candidate_steps [0, 1, 3]: pick one of "
                           "them"]
    r = R(spec_of(adaptive=True, adaptive_config=cfg))
    assert r["errors"] == ["speculative.adaptive_config is a mapping but SGLang reads a JSON file path: pass "
                           "adaptive_config_path=<path> (the caller writes files[path] there)"] and r["files"] == {}
    r = R(spec_of(adaptive=True, adaptive_config="/etc/own.json"))
    assert r["argv"][-2:] == ["--speculative-adaptive-config", "/etc/own.json"] and r["files"] == {}
    r = R(spec_of(adaptive=False, adaptive_config="/etc/own.json"))
    assert r["warnings"] == ["speculative.adaptive_config is ignored because speculative.adaptive is false"]
    assert "--speculative-adaptive-config" not in r["argv"]


def test_an_invalid_adaptive_config_names_no_step_rule():
    # the loader's own refusal comes alone: the step rule is asked only of a valid config
    cfg = {"1": {"candidate_steps": "x"}}
    r = R(spec_of(adaptive=True, num_steps=3, adaptive_config=cfg), adaptive_config_path="/a.json")
    assert len(r["errors"]) == 1 and "candidate_steps" in r["errors"][0] and "pick one of them" not in r["errors"][0]


NODE_RANK = "settings.node_rank=%r must be 0..1 for nnodes=2: set this host's rank"
ADDR = "settings.dist_init_addr=%r must be HOST:PORT of node rank 0 (same on every node)"


@pytest.mark.parametrize("rank, error", [(0, None), (1, None), (2, NODE_RANK % 2), (-1, NODE_RANK % -1),
                                         (None, NODE_RANK % None), (True, NODE_RANK % True)])
def test_node_rank_is_0_to_nnodes_minus_1(rank, error):
    r = R({"tp": 2, "nnodes": 2, "node_rank": rank, "dist_init_addr": "10.0.0.1:5000"})
    assert r["errors"] == ([error] if error else [])
    assert r["flags"]["nnodes"] == 2
    if rank is None or rank is True:
        assert "--node-rank" not in r["argv"]
    else:
        assert opt(r["argv"], "--node-rank") == str(rank)


@pytest.mark.parametrize("addr, ok", [("10.0.0.1:5000", True), ("[fd00::1]:5000", True), ("head:1", True),
                                      ("head", False), ("head:port", False), ("a b:1", False), (":5000", False),
                                      ("", False), (None, False)])
def test_dist_init_addr_is_host_colon_port(addr, ok):
    r = R({"tp": 2, "nnodes": 2, "node_rank": 0, "dist_init_addr": addr})
    assert r["errors"] == ([] if ok else [ADDR % (addr,)])
    assert r["flags"].get("dist_init_addr", "absent") == (addr if addr else "absent")


@pytest.mark.parametrize("nnodes, error", [(None, None), (0, None), (1, None), (-1, True), (True, True), ("2", True)])
def test_nnodes_is_a_positive_integer_and_one_node_renders_nothing(nnodes, error):
    r = R({"nnodes": nnodes, "node_rank": 0, "dist_init_addr": "h:1"})
    assert r["errors"] == (["settings.nnodes=%r is not a positive integer: set the number of nodes" % (nnodes,)]
                           if error else [])
    assert "--nnodes" not in r["argv"] and "--node-rank" not in r["argv"]


def test_args_that_are_not_a_mapping_owned_or_twice_are_refused():
    assert R({"args": ["x"]})["errors"] == ["settings.args must be a mapping of SGLang option names to values"]
    assert R({"args": {"--tp-size": 2}})["errors"] == [
        "args.tp_size duplicates settings.tp: set it there and drop it from args"]
    assert R({"args": {"speculative-draft-model": "d"}})["errors"] == [
        "args.speculative_draft_model duplicates settings.speculative.draft_model_path: set it there and drop it from "
        "args"]
    r = R({"args": {"trust-remote-code": True, "trust_remote_code": True}})
    assert r["errors"] == ["args has trust_remote_code twice (snake_case and dashed spellings): keep one"]
    assert r["argv"].count("--trust-remote-code") == 1


@pytest.mark.parametrize("key", ["--trust-remote-code", " trust-remote-code ", "trust_remote_code", "-trust-remote-code"])
def test_an_option_name_is_read_in_any_spelling(key):
    assert R({"args": {key: True}})["argv"][-1] == "--trust-remote-code"


@pytest.mark.parametrize("version, name, flag", [
    ("0.5.10.post1", "cuda_graph_max_bs_decode", "--cuda-graph-max-bs"),
    ("0.5.10.post1", "cuda_graph_bs_decode", "--cuda-graph-bs"),
    ("0.5.23", "cuda_graph_max_bs_decode", "--cuda-graph-max-bs-decode"),
    ("0.5.23", "cuda_graph_bs_decode", "--cuda-graph-bs-decode"),
    ("0.5.23", "cuda_graph_max_bs_prefill", "--cuda-graph-max-bs-prefill"),
    ("0.5.23", "cuda_graph_bs_prefill", "--cuda-graph-bs-prefill"),
    ("0.5.9", "cuda_graph_bs", "--cuda-graph-bs")])
def test_cuda_graph_flags_per_version(version, name, flag):
    r = R({"args": {name: 16}}, version)
    assert r["errors"] == [] and r["argv"][-2:] == [flag, "16"]


@pytest.mark.parametrize("name", ["cuda_graph_max_bs_prefill", "cuda_graph_bs_prefill"])
def test_the_prefill_graph_flags_exist_from_0523(name):
    r = R({"args": {name: 16}}, "0.5.15.post1")
    assert r["errors"] == ["args.%s: SGLang 0.5.15.post1 has no prefill cuda-graph batch-size flag; remove it (it "
                           "exists from 0.5.23)" % name]
    assert "16" not in r["argv"]


def test_allreduce_fusion_between_the_two_spellings():
    r = R({"args": {"enable_flashinfer_allreduce_fusion": True}}, "0.5.23")
    assert r["warnings"] == ["args.enable_flashinfer_allreduce_fusion is deprecated in SGLang 0.5.23; rendered as "
                             "--flashinfer-allreduce-fusion-backend auto"]
    assert r["argv"][-2:] == ["--flashinfer-allreduce-fusion-backend", "auto"]
    r = R({"args": {"enable_flashinfer_allreduce_fusion": False}}, "0.5.23")
    assert "--flashinfer-allreduce-fusion-backend" not in r["argv"] and r["errors"] == []
    r = R({"args": {"flashinfer_allreduce_fusion_backend": "auto"}}, "0.5.10.post1")
    assert r["argv"][-1] == "--enable-flashinfer-allreduce-fusion" and r["errors"] == []
    r = R({"args": {"flashinfer_allreduce_fusion_backend": None}}, "0.5.10.post1")
    assert r["flags"].get("enable_flashinfer_allreduce_fusion") is None and r["errors"] == []
    r = R({"args": {"flashinfer_allreduce_fusion_backend": "mnnvl"}}, "0.5.10.post1")
    assert r["errors"] == ["args.flashinfer_allreduce_fusion_backend=mnnvl needs SGLang >= 0.5.23; on 0.5.10.post1 use "
                           "enable_flashinfer_allreduce_fusion: true instead"]
    assert R({"args": {"flashinfer_allreduce_fusion_backend": "mnnvl"}})["argv"][-1] == "mnnvl"


def test_a_false_switch_per_parser():
    r = R({"args": {"dllm_fdfo": False}}, "0.5.23")  # on by default, with --no-
    assert r["argv"][-1] == "--no-dllm-fdfo" and r["flags"]["dllm_fdfo"] is False
    r = R({"args": {"trust_remote_code": False}}, "0.5.23")  # off by default: leaving it out is exact
    assert r["errors"] == [] and "trust_remote_code" not in r["flags"]
    r = R({"args": {"context_length": False}}, "0.5.23")
    assert r["errors"] == ["args.context_length=false: --context-length is not an on/off switch in SGLang 0.5.23 (it "
                           "takes a value or does not exist): give the value SGLang expects, or drop the setting"]
    r = R({"args": {"enable_mixed_chunk": False}}, "0.5.11")
    assert r["warnings"][-1] == ("args.enable_mixed_chunk=false is left out: SGLang 0.5.11 has no verified flag table, "
                                 "so whether --enable-mixed-chunk is on by default is not known here")


@pytest.mark.parametrize("kind", ["store_true", "store_const", "deprecated", "deprecated_error"])
def test_a_false_switch_that_is_on_by_default_without_a_negation_is_refused(monkeypatch, kind):
    # no verified parser has one today; the rule holds for the table that gets one
    monkeypatch.setitem(cli_flags.SWITCHES, "0.5.23", dict(cli_flags.SWITCHES["0.5.23"], on_thing=(kind, True)))
    assert R({"args": {"on_thing": False}})["errors"] == [
        "args.on_thing=false cannot be expressed for SGLang 0.5.23: --on-thing is on by default and the version has no "
        "--no-on-thing; drop the setting or use a version that has the negation"]
    monkeypatch.setitem(cli_flags.SWITCHES, "0.5.23", dict(cli_flags.SWITCHES["0.5.23"], on_thing=(kind, False)))
    assert R({"args": {"on_thing": False}})["errors"] == []


def test_values_render_in_argparse_shapes():
    r = R({"args": {"mem_fraction_static": 0.85, "list": [1, 0.5, True, "x"], "empty": [], "nested": [[1]],
                    "js": {"b": 1, "a": [2]}}})
    argv = r["argv"]
    assert opt(argv, "--mem-fraction-static") == "0.85" and opt(argv, "--js") == '{"a":[2],"b":1}'
    i = argv.index("--list")
    assert argv[i:i + 5] == ["--list", "1", "0.5", "true", "x"]
    assert "--empty" not in argv and "--nested" not in argv
    assert r["errors"] == ["args.nested: list items must be scalars; give plain values"]
    assert "nested" not in r["flags"] and "empty" not in r["flags"] and r["flags"]["list"] == [1, 0.5, True, "x"]


def test_flags_argv_writes_a_mapping_the_same_way_in_its_order():
    assert A.flags_argv({"--policy": "cache_aware", "port": 30080, "verbose": True, "quiet": False, "none": None,
                         "worker-urls": ["http://a:1", "http://b:1"], "js": {"k": 1}}) == [
        "--policy", "cache_aware", "--port", "30080", "--verbose", "--worker-urls", "http://a:1", "http://b:1",
        "--js", '{"k":1}']
    assert A.flags_argv(None) == [] and A.flags_argv({}) == []
    with pytest.raises(ValueError) as err:
        A.flags_argv({"a": [{"x": 1}], "b": [[2]]})
    assert str(err.value) == ("args.a: list items must be scalars; give plain values; args.b: list items must be "
                              "scalars; give plain values")


@pytest.mark.parametrize("count, tp, added", [(2, 8, False), (3, 8, True), (8, 2, True), (8, 1, False)])
def test_custom_all_reduce_is_off_beyond_two_pcie_only_gpus(count, tp, added):
    r = R({"tp": tp}, gpu=gpus(9, count=count))
    assert ("--disable-custom-all-reduce" in r["argv"]) is added
    assert r["warnings"] == (["%d PCIe-only GPUs: --disable-custom-all-reduce added (SGLang's custom all-reduce does not "
                              "support more than two PCIe-only GPUs and would fall back to NCCL anyway)" % count]
                             if added else [])


def test_custom_all_reduce_counts_the_gpus_listed_when_no_count_is_given():
    g = gpus(9, count=4)
    del g["count"]
    assert "--disable-custom-all-reduce" in R({"tp": 4}, gpu=g)["argv"]
    g["gpus"] = g["gpus"][:2]
    assert "--disable-custom-all-reduce" not in R({"tp": 4}, gpu=g)["argv"]
    r = R({"tp": 4, "args": {"disable_custom_all_reduce": False}}, gpu=gpus(9, count=4))
    assert r["warnings"] == ["disable_custom_all_reduce is false on 4 PCIe-only GPUs: SGLang will disable it at start-up "
                             "anyway"]
    r = R({"tp": 4, "args": {"disable_custom_all_reduce": True}}, gpu=gpus(9, count=4))
    assert r["warnings"] == [] and r["argv"].count("--disable-custom-all-reduce") == 1


FUSION_SM120 = ("flashinfer allreduce fusion is a no-op on SM120 (layers/communicator.py gates it to SM90/SM100): "
                "apply roles/sglang's patch 'sm120-allreduce-fusion' (role passes it in patches) or drop the option")


@pytest.mark.parametrize("major, errors, warnings", [
    (12, [FUSION_SM120], []), (9, [], []), (10, [], []),
    (8, [], ["flashinfer allreduce fusion only takes effect on SM90/SM100; it does nothing on these GPUs"])])
def test_allreduce_fusion_per_gpu_generation(major, errors, warnings):
    r = R({"args": {"enable_flashinfer_allreduce_fusion": True}}, "0.5.10.post1", gpu=gpus(major, count=2))
    assert r["errors"] == errors
    assert [w for w in r["warnings"] if "SM120:" not in w] == warnings


def test_gated_options_are_not_judged_without_gpus_or_when_off():
    assert R({"args": {"enable_torch_symm_mem": True}})["errors"] == []
    assert R({"args": {"enable_torch_symm_mem": False}}, gpu=gpus(12, count=2))["errors"] == []
    g = gpus(12, count=2)
    g["gpus"] = [{"compute_cap": "9.0"}, {"compute_cap": "12.0"}]
    assert R({"args": {"enable_torch_symm_mem": True}}, gpu=g)["errors"][0].startswith("enable_torch_symm_mem fails on SM120")


@pytest.mark.parametrize("major, key, value, refused", [
    (9, "attention_backend", "trtllm_mha", True), (10, "attention_backend", "trtllm_mha", False),
    (12, "prefill_attention_backend", "fa4", True), (9, "decode_attention_backend", "fa4", False),
    (9, "speculative_draft_attention_backend", "trtllm_mla", True), (9, "attention_backend", "flashinfer", False),
    (12, "moe_runner_backend", "flashinfer_trtllm", True), (9, "moe_runner_backend", "flashinfer_trtllm", False),
    (12, "fp8_gemm_backend", "trtllm", True), (12, "fp4_gemm_backend", "flashinfer_trtllm", True),
    (12, "fp4_gemm_backend", "cutlass", False)])
def test_sm100_kernels_elsewhere_are_refused(major, key, value, refused):
    r = R({"args": {key: value}}, gpu=gpus(major, count=2))
    want = ["args.%s=%s needs SM100 kernels that do not run on compute capability %d: use triton or flashinfer instead"
            % (key, value, major)]
    assert [e for e in r["errors"] if "SM100 kernels" in e] == (want if refused else [])


def test_sm100_refusals_name_every_generation_in_order():
    g = gpus(9, count=2)
    g["gpus"] = [{"compute_major": 12}, {"compute_major": 9}]
    assert R({"args": {"attention_backend": "trtllm_mha"}}, gpu=g)["errors"] == [
        "args.attention_backend=trtllm_mha needs SM100 kernels that do not run on compute capability 9/12: use triton "
        "or flashinfer instead"]
    assert R({"args": {"attention_backend": "trtllm_mha"}})["errors"] == []  # no GPU facts: nothing to judge


SM120_WARNING = ("SM120: if Triton fails with \"Value 'sm_120a' is not defined\", set TRITON_PTXAS_PATH to the CUDA "
                 "toolkit's ptxas (e.g. /usr/local/cuda/bin/ptxas)")


@pytest.mark.parametrize("key, value, refused", [("moe_runner_backend", "deep_gemm", True),
                                                 ("fp8_gemm_backend", "deepgemm", True),
                                                 ("moe_runner_backend", "triton", False), ("fp8_gemm_backend", 1, False)])
def test_sm120_has_no_deepgemm(key, value, refused):
    r = R({"args": {key: value}}, gpu=gpus(12, count=2))
    assert r["errors"] == (["args.%s=%s uses DeepGEMM, which SM120 lacks: use auto, triton or cutlass" % (key, value)]
                           if refused else [])
    assert r["warnings"] == [SM120_WARNING] and r["env"]["SGLANG_ENABLE_JIT_DEEPGEMM"] == "0"
    assert "SGLANG_ENABLE_JIT_DEEPGEMM" not in R({"args": {key: value}}, gpu=gpus(9, count=2))["env"]


def test_sm120_env_names_ptxas_when_given():
    assert A.sm120_env() == {"SGLANG_ENABLE_JIT_DEEPGEMM": "0"}
    assert A.sm120_env("/usr/local/cuda/bin/ptxas") == {"SGLANG_ENABLE_JIT_DEEPGEMM": "0",
                                                        "TRITON_PTXAS_PATH": "/usr/local/cuda/bin/ptxas"}


@pytest.mark.parametrize("gpu, majors", [
    (None, set()), ("8 GPUs", set()), ({"present": False, "gpus": [{"compute_major": 9}]}, set()),
    ({"gpus": [{"compute_major": 9}]}, {9}), ({"gpus": [{"compute_cap": "12.0"}, {"compute_cap": "9.0"}]}, {9, 12}),
    ({"gpus": [{"compute_cap": "sm90"}, {"compute_cap": None}, {}]}, set()), ({"present": True, "gpus": None}, set())])
def test_gpu_majors_are_read_from_the_facts(gpu, majors):
    assert A._gpu_major(gpu) == majors


@pytest.mark.parametrize("word, joined", [("ABC", "ABC"), ("a-b_c@d%e+f=g:h,i./j", "a-b_c@d%%e+f=g:h,i./j"), (";", '";"'),
                                          ("a\nb\tc", '"a\\nb\\tc"'), ('say "x"', '"say \\"x\\""'), ("", '""'),
                                          ("a\\b", '"a\\\\b"'), ("$HOME", '"$$HOME"'), ("${KEY}", "${KEY}")])
def test_each_word_is_quoted_only_where_systemd_needs_it(word, joined):
    assert shell_join([word]) == joined


@pytest.mark.parametrize("word, joined", [
    ("abc\n", '"abc\\n"'), ("${KEY}\n", '"$${KEY}\\n"'),  # $ matched before a final newline: written raw
    ("http://a:1\r\nExecStartPre=/bin/sh", '"http://a:1\\r\\nExecStartPre=/bin/sh"'), ("\x00", '"\\x00"'),
    ("a\x1bb", '"a\\x1bb"'), ("\x7f", '"\\x7f"'), ("\x85\u2028\u2029", '"\\u0085\\u2028\\u2029"'),
    ("\x0b\x0c", '"\\x0b\\x0c"'), ("\x80\x9f", '"\\u0080\\u009f"'),
])
def test_a_line_breaker_never_reaches_the_unit_file_raw(word, joined):
    out = shell_join(["--x", word])
    assert out == "--x " + joined and len(out.splitlines()) == 1


def test_the_gpu_count_of_the_facts_wins_over_the_gpus_listed():
    g = gpus(9, count=4)
    g["gpus"] = g["gpus"][:2]
    assert "--disable-custom-all-reduce" in R({"tp": 4}, gpu=g)["argv"]
    g = gpus(9, count=2)
    g["gpus"] = g["gpus"] * 2
    assert "--disable-custom-all-reduce" not in R({"tp": 4}, gpu=g)["argv"]


def test_gpu_facts_that_are_not_a_mapping_judge_nothing():
    r = R({"tp": 4, "args": {"attention_backend": "trtllm_mha"}}, gpu="8 GPUs")
    assert r["errors"] == [] and "--disable-custom-all-reduce" not in r["argv"]


def test_gated_options_on_patched_sm120_beside_sm90_and_sm100_are_quiet():
    g = gpus(12, count=3)
    g["gpus"] = [{"compute_major": 9}, {"compute_major": 10}, {"compute_major": 12}]
    r = R({"tp": 1, "args": {"enable_torch_symm_mem": True}}, gpu=g, patches=["sm120-symm-mem"])
    assert r["errors"] == [] and r["warnings"] == [SM120_WARNING]


def test_an_adaptive_config_file_has_sorted_keys():
    cfg = {"64": {"candidate_steps": [0]}, "1": {"candidate_steps": [1, 3]}}
    r = R(spec_of(adaptive=True, num_steps=3, adaptive_config=cfg), adaptive_config_path="/etc/a.json")
    text = r["files"]["/etc/a.json"]
    assert text.index('"1"') < text.index('"64"') and text == A.json.dumps(cfg, sort_keys=True, indent=2) + "\n"


def test_a_flat_adaptive_config_counts_num_steps_among_its_steps():
    # 0.5.12 reads one flat candidate list and adds num_steps to it: [3] with num_steps 5 is two steps
    r = R(spec_of(adaptive=True, num_steps=5, adaptive_config={"candidate_steps": [3]}), "0.5.12",
          adaptive_config_path="/a.json")
    assert r["errors"] == [] and r["files"]["/a.json"] == '{\n  "candidate_steps": [\n    3\n  ]\n}\n'


def test_an_option_name_keeps_its_letters():
    assert R({"args": {"XLA-thing": 1}})["argv"][-2:] == ["--XLA-thing", "1"]


def test_the_health_latch_env_follows_the_settings_the_args_and_the_users_env():
    both = {"SGLANG_HEALTH_CHECK_TIMEOUT": "66", "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "0"}
    assert R({})["env"] == both
    assert R({"health_status_check": False})["env"] == {"SGLANG_HEALTH_CHECK_TIMEOUT": "66"}
    assert R({"health_status_check": None})["env"] == {"SGLANG_HEALTH_CHECK_TIMEOUT": "66"}
    assert R({"health_check_timeout": 120})["env"] == dict(both, SGLANG_HEALTH_CHECK_TIMEOUT="120")
    assert R({"health_check_timeout": None})["env"] == both
    assert R({"args": {"context_length": 1048576}})["env"] == dict(both, SGLANG_HEALTH_CHECK_TIMEOUT="525")
    assert R({}, env={"SGLANG_HEALTH_CHECK_TIMEOUT": "5"})["env"] == {"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "0"}


def test_the_pcie_ipc_allreduce_is_judged_on_the_topology_and_the_args():
    ipc = {"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1"}
    r = R({"tp": 2, "args": {"dtype": "float16"}}, gpu=gpus(12, count=2, pcie_only=False), env=ipc)
    assert r["errors"] == [
        "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1 is for GPUs that reach each other only through the CPU root complex; this "
        "host has NVLink between them: leave it off or set SGLANG_ENABLE_PCIE_IPC_ALLREDUCE to 0 (NCCL all-reduce)",
        "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1 reduces bf16 only and args.dtype is float16 (every reduction would stay on "
        "NCCL): use dtype bfloat16 or set SGLANG_ENABLE_PCIE_IPC_ALLREDUCE to 0 (NCCL all-reduce)"]
    assert R({"tp": 2}, gpu=gpus(12, count=2, pcie_only=True), env=ipc)["errors"] == []
    assert R({"tp": 2}, gpu="2 GPUs", env=ipc)["errors"] == []


def test_errors_come_in_option_name_order_and_each_option_is_judged():
    r = R({"args": {"port": 1, "--tp-size": 2, "zeta_flag": True, "a-b": 1, "a_b": 2, "omega": True}})
    assert r["errors"] == ["args has a_b twice (snake_case and dashed spellings): keep one",
                           "args.port duplicates settings.port: set it there and drop it from args",
                           "args.tp_size duplicates settings.tp: set it there and drop it from args"]
    assert "--zeta-flag" in r["argv"] and "--omega" in r["argv"] and opt(r["argv"], "--a-b") == "1"


def test_a_false_item_of_a_list_is_false_and_spec_numbers_are_scalars():
    assert R({"args": {"flags": [True, False]}})["argv"][-3:] == ["--flags", "true", "false"]
    r = R(spec_of(num_steps=[[3]]))
    assert r["errors"] == ["args.speculative_num_steps: list items must be scalars; give plain values"]


def test_a_compute_capability_is_read_up_to_its_first_dot():
    assert A._gpu_major({"gpus": [{"compute_cap": "12.0.1"}]}) == {12}
