# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark report of the real H200 measurements: what tools/bench_report says about them.

benchmark.yml did not run in one piece on the H200 (see docs/evidence/real-sglang-h200/README.md), but the same
client measured both modes there: the base model (run1/base/result.json, 64 tokens, c = 1, 8, 32) and EAGLE-3 with
the random draft (eagle3/bench_eagle3.json, c = 1, 8). This puts them into the report's raw.json, unchanged, with
the EAGLE-3 server's accept length read from its /metrics after the run (eagle3/metrics.txt: the client records
/server_info's, which this run did not keep), and runs the report on them. Usage, from the repository root:

    python3 tests/gpu/real_bench_report.py [OUT_DIR]    (default docs/evidence/real-sglang-h200/report)
"""
import json
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVIDENCE = os.path.join(REPO, "docs", "evidence", "real-sglang-h200")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(EVIDENCE, "report")
    with open(os.path.join(EVIDENCE, "run1", "base", "result.json")) as handle:
        base = json.load(handle)
    with open(os.path.join(EVIDENCE, "eagle3", "bench_eagle3.json")) as handle:
        eagle3 = json.load(handle)
    results = [dict(point, mode="baseline", repeat=0) for point in base["bench"]]
    with open(os.path.join(EVIDENCE, "eagle3", "metrics.txt")) as handle:
        accept = float(re.search(r"^sglang:spec_accept_length\{[^}]*\} (\S+)$", handle.read(), re.M).group(1))
    results += [dict(point, mode="eagle3", repeat=0, accept_length=accept) for point in eagle3]
    raw = {"meta": {"started": "2026-12-03 (two device calls)", "model_path": "/tmp/models/llama-tiny",
                    "max_new_tokens": 64, "sglang_version": "0.5.15.post1", "adaptive_flag": True,
                    "speculative": {"algorithm": "EAGLE3", "draft_model_path": "/tmp/models/eagle3-tiny",
                                    "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
                    "cuda_graph_max_bs": None,
                    "sources": ["run1/base/result.json", "eagle3/bench_eagle3.json"]},
           "results": results}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "raw.json"), "w") as handle:
        json.dump(raw, handle, indent=1)
        handle.write("\n")
    return subprocess.call([sys.executable, os.path.join(REPO, "tools", "bench_report", "bench_report.py"), out])


if __name__ == "__main__":
    raise SystemExit(main())
