# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render argvs and parse them with the REAL SGLang parser of each version (CPU-only venvs).

Build the venvs first: tests/real_parser/build_venvs.sh [VERSION...]  (LLMSERVE_CACHE picks the cache root).
Each version's test skips, saying why, when its venv is not built.
"""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.server.preflight import check_parse  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "unit"))
from localrun import local_run as HERE_RUN  # noqa: E402

CACHE = os.path.join(os.environ.get("LLMSERVE_CACHE", "/var/cache/llmserve"), "parser-venvs")
VERSIONS = gates.VERIFIED_VERSIONS  # the one list (sglang/gates.py)

SM120_PCIE = {"present": True, "count": 8, "gpus": [{"compute_cap": "12.0", "compute_major": 12}] * 8,
              "topology": {"all_nvlink": False, "pcie_only": True}}
H200_NVL = {"present": True, "count": 8, "gpus": [{"compute_cap": "9.0", "compute_major": 9}] * 8,
            "topology": {"all_nvlink": True, "pcie_only": False}}
SEED_SPEC = {"algorithm": "EAGLE3", "draft_model_path": "/models/kimi-k2.5-eagle3", "num_steps": 3,
             "eagle_topk": 1, "num_draft_tokens": 4, "adaptive": False, "adaptive_config": None}
# The seed deployment: Kimi K2.5 int4, TP 8, EAGLE-3, 8x RTX PRO 6000 (SM120, PCIe), patched SGLang.
SEED = {"model_path": "/models/kimi-k2.5-int4", "tp": 8, "host": "0.0.0.0", "port": 30000,
        "served_model_name": "kimi-k2.5", "speculative": SEED_SPEC, "api_key_env": "SGLANG_API_KEY",
        "args": {"cuda_graph_max_bs": 128, "disable_custom_all_reduce": True, "trust_remote_code": True,
                 "enable_flashinfer_allreduce_fusion": True, "enable_torch_symm_mem": True,
                 "mem_fraction_static": 0.88, "enable_metrics": True, "attention_backend": "triton",
                 "json_model_override_args": {"rope_scaling": {"factor": 2.0}}}}
CASES = {
    "seed": (SEED, SM120_PCIE, ["sm120-allreduce-fusion", "sm120-symm-mem"]),
    "h200_multinode": (dict(SEED, tp=16, nnodes=2, node_rank=1, dist_init_addr="10.1.0.1:5000", api_key_env=None,
                            args={"cuda_graph_bs": [1, 2, 4, 8], "log_level": "info", "kv-cache-dtype": "fp8_e4m3"}),
                       H200_NVL, []),
    "no_spec_pcie_default": (dict(SEED, speculative=None, args={}), SM120_PCIE, []),
}
ADAPTIVE = dict(SEED, args={},
                speculative=dict(SEED_SPEC, adaptive=True, adaptive_config={"1": {"candidate_steps": [1, 3]}}))

PARSE = r"""
import argparse, json, sys
from sglang.srt.server_args import ServerArgs
p = argparse.ArgumentParser(prog="sglang.launch_server"); ServerArgs.add_cli_args(p)
by_opt = {o: a.dest for a in p._actions for o in a.option_strings}
out = {}
for name, argv in json.loads(sys.stdin.read()).items():
    try:
        ns = vars(p.parse_args(argv))
        out[name] = {"ok": True, "dests": by_opt, "ns": {k: v for k, v in ns.items() if isinstance(v, (int, float, str, list, bool, type(None)))}}
    except SystemExit as e:
        out[name] = {"ok": False, "code": e.code}
print("@@" + json.dumps(out))
"""


def venv_python(version):
    py = os.path.join(CACHE, version, "bin", "python")
    if not os.path.exists(os.path.join(CACHE, version, ".stamp")):
        pytest.skip("real-parser venv for sglang %s not built (%s): run tests/real_parser/build_venvs.sh %s"
                    % (version, os.path.join(CACHE, version), version))
    return py


def parse_many(version, argvs):
    py = venv_python(version)
    proc = subprocess.run([py, "-c", PARSE], input=json.dumps(argvs), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600, check=False)
    line = [x for x in proc.stdout.splitlines() if x.startswith("@@")]
    assert line, proc.stderr[-2000:]
    return json.loads(line[-1][2:]), proc.stderr


def expected(value):
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


@pytest.mark.parametrize("version", VERSIONS)
def test_rendered_argv_parses_to_intended_values(version):
    rendered = {name: render(s, version, gpu, patches) for name, (s, gpu, patches) in CASES.items()}
    if version in ("0.5.15.post1", "0.5.23"):
        rendered["adaptive"] = render(ADAPTIVE, version, SM120_PCIE, adaptive_config_path="/etc/sglang/adaptive.json")
    for name, r in rendered.items():
        assert r["errors"] == [], (name, r["errors"])
    results, _errors = parse_many(version, {n: r["argv"] for n, r in rendered.items()})
    for name, r in rendered.items():
        res = results[name]
        assert res["ok"], "%s on %s: argv rejected: %s" % (name, version, r["argv"])
        for flag, value in r["flags"].items():
            dest = res["dests"]["--" + flag.replace("_", "-")]
            assert res["ns"][dest] == expected(value), (name, flag, res["ns"][dest], value)
    seed = results["seed"]["ns"]
    dests = results["seed"]["dests"]
    assert seed[dests["--tp-size"]] == 8
    assert seed["disable_custom_all_reduce"] is True
    assert seed["speculative_algorithm"] == "EAGLE3" and seed["speculative_num_steps"] == 3
    # 0.5.15.post1 already has the *_decode dest; its --cuda-graph-max-bs is a deprecated alias that stores there.
    cg = "cuda_graph_max_bs_decode" if version in ("0.5.15.post1", "0.5.23") else "cuda_graph_max_bs"
    assert seed[cg] == 128
    # The PCIe rule added the flag by itself where the settings did not ask.
    assert results["no_spec_pcie_default"]["ns"]["disable_custom_all_reduce"] is True


@pytest.mark.parametrize("version,accepted", [("0.5.9", True), ("0.5.10.post1", True), ("0.5.15.post1", True),
                                              ("0.5.23", False)])
def test_old_cuda_graph_name(version, accepted):
    """0.5.23 rejects the old name as ambiguous, exactly as the reference says; older versions take it
    (0.5.15.post1 as a deprecated alias of --cuda-graph-max-bs-decode)."""
    py = venv_python(version)
    check, ver = check_parse(py, ["--model-path", "/m", "--cuda-graph-max-bs", "128"], run=HERE_RUN)
    assert ver == version
    assert check["ok"] is accepted, check["msg"]
    if not accepted:
        assert check["msg"].endswith(
            "sglang.launch_server: error: ambiguous option: --cuda-graph-max-bs could match "
            "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill")


@pytest.mark.parametrize("version", ("0.5.9", "0.5.10.post1"))
def test_adaptive_flag_absent_before_0511(version):
    """The renderer refuses speculative.adaptive before 0.5.11 because the real parser has no such flag."""
    assert render(ADAPTIVE, version)["errors"]
    check, _detail = check_parse(venv_python(version), ["--model-path", "/m", "--speculative-adaptive"], run=HERE_RUN)
    assert not check["ok"] and "unrecognized arguments: --speculative-adaptive" in check["msg"]


def test_adaptive_on_0515_renders_and_parses():
    py = venv_python("0.5.15.post1")
    check, _detail = check_parse(py, ["--model-path", "/m", "--speculative-adaptive"], run=HERE_RUN)
    assert check["ok"], check["msg"]  # the real parser has the flag ...
    r = render(ADAPTIVE, "0.5.15.post1", SM120_PCIE, adaptive_config_path="/etc/sglang/adaptive.json")
    assert r["errors"] == []  # ... and the renderer renders it (--speculative-adaptive came in 0.5.11)
