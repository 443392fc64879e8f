# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_health's all-reduce probe, run with REAL torch (the 0.5.23 parser venv's CPU build) on 2 ranks over gloo.

The probe the module writes to the host is run unchanged; the test's own seam (cpu_torch/sitecustomize.py, on the
probe's PYTHONPATH) swaps only NCCL/CUDA for gloo/CPU under torch. This proves the spawn, the process group, the
all-reduce, its check of the sum and the JSON the module parses - what can be proven without a GPU. Skips, saying why, when the venv is not built.
"""
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import probes  # noqa: E402

PYTHON = os.path.join(os.environ.get("LLMSERVE_CACHE", "/var/cache/llmserve"), "parser-venvs", "0.5.23", "bin",
                      "python")
SEAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_torch")
TWO_PCIE_GPUS = [{"index": i, "compute_cap": "12.0", "pcie_gen_max": 5, "pcie_width_max": 16} for i in range(2)]


def run_probe(tmp_path, ranks, size_mb=1, iters=3):
    if not os.path.exists(PYTHON):
        pytest.skip("venv for sglang 0.5.23 not built (tests/real_parser/build_venvs.sh)")
    script = tmp_path / "probe.py"
    script.write_text(probes.NCCL_PROBE)
    env = dict(os.environ, LLMSERVE_TEST_CPU_RANKS=str(ranks),
               PYTHONPATH=os.pathsep.join([SEAM] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run([PYTHON, str(script), str(size_mb), str(iters)], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_two_ranks_sum_correctly_and_report_what_the_module_reads(tmp_path):
    rc, out, err = run_probe(tmp_path, 2)
    assert rc == 0, err
    result = probes.parse_allreduce(out)
    # gloo and the stand-in's NCCL version: the seam, not the probe, chose the CPU transport
    assert result["world_size"] == 2 and result["correct"] is True and result["backend"] == "gloo"
    assert result["nccl"] == "0.0.0"
    assert result["size_mb"] == 1 and result["iters"] == 3 and result["seconds"] > 0
    assert result["busbw_gbps"] == pytest.approx(result["algbw_gbps"])  # 2(n-1)/n = 1 for two ranks
    # The module's judgement of a real result: with an explicit floor no CPU can reach, the finding names it.
    problems, facts = probes.judge_allreduce(result, TWO_PCIE_GPUS, {"all_nvlink": False}, min_busbw=1e6)
    assert [p["check"] for p in problems] == ["nccl_allreduce"]
    assert "over 2 GPUs, below 1000000.0 GB/s" in problems[0]["detail"]
    assert facts["expectation"] == "gpu_health_nccl_min_busbw_gbps"


def test_one_rank_says_what_it_could_not_measure(tmp_path):
    rc, out, err = run_probe(tmp_path, 1)
    assert rc == 0, err
    problems, facts = probes.judge_allreduce(probes.parse_allreduce(out), TWO_PCIE_GPUS[:1], None)
    assert problems == [] and "no NVLink or PCIe peer link was crossed" in facts["not_measured"]


def test_without_the_seam_the_probe_says_torch_sees_no_gpu(tmp_path):
    # the shipped probe has no CPU mode of its own: a CPU-only torch gets the module's error line
    if not os.path.exists(PYTHON):
        pytest.skip("venv for sglang 0.5.23 not built (tests/real_parser/build_venvs.sh)")
    script = tmp_path / "probe.py"
    script.write_text(probes.NCCL_PROBE)
    env = dict((k, v) for k, v in os.environ.items() if k not in ("PYTHONPATH", "LLMSERVE_TEST_CPU_RANKS"))
    proc = subprocess.run([PYTHON, str(script), "1", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, check=False)
    assert proc.returncode == 3
    assert probes.parse_allreduce(proc.stdout) == {"error": "torch sees no CUDA device"}
