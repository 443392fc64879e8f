# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Logs in any order (issue 29): a newest-first paste (cloud log viewers) and an interleaved multi-rank paste are
read as well as an ordered one. The order is found from the timestamps' direction, else from the tracebacks' shape;
every real log of the corpus, reversed, must give its ordered verdict wherever the order can be seen at all."""
import testpaths
import json
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import in_order, order_of, timestamp_of
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")


def corpus():
    out = []
    for sub in ("public", "h200"):
        with open(os.path.join(FIX, sub, "expected.json"), encoding="utf-8") as f:
            out += [os.path.join(sub, n) for n in sorted(json.load(f))]
    return out


def lines_of(name):
    with open(os.path.join(FIX, name), encoding="utf-8", errors="replace") as f:
        return [x for x in f.read().replace("\r", "\n").split("\n") if x.strip()]


@pytest.mark.parametrize("line, stamp", [
    ("[2025-12-28 13:06:52] Scheduler hit an exception", (2025, 12, 28, 13, 6, 52, 0)),
    ("[2025-07-02 07:41:59 DP0 TP0] Load weight end.", (2025, 7, 2, 7, 41, 59, 0)),
    ("2025-04-04T16:57:57.7153695Z ip-10-0-9-191:95209 NCCL WARN x", (2025, 4, 4, 16, 57, 57, 715369)),
    ("[rank0]:[E1211 16:33:14.602000 1463070 ProcessGroupNCCL.cpp:616] x", (0, 12, 11, 16, 33, 14, 602000)),
    ("ERROR 08-11 10:45:36 [multiproc_executor.py:511] WorkerProc failed", (0, 8, 11, 10, 45, 36, 0)),
    ("  File \"/x.py\", line 3, in f", None),
])
def test_timestamps(line, stamp):
    assert timestamp_of(line) == stamp


@pytest.mark.parametrize("name", corpus())
def test_an_ordered_log_is_never_reordered(name):
    assert order_of(lines_of(name)) == "ordered"


def test_reversed_real_logs_read_as_ordered_ones():
    seen = same = 0
    for name in corpus():
        lines = lines_of(name)
        rev = list(reversed(lines))
        if order_of(rev) != "reversed":
            continue  # no timestamps and no traceback: the order cannot be seen (mostly a line or two)
        seen += 1
        a, b = classify_text("\n".join(lines)), classify_text("\n".join(rev))
        assert (a["category"], a["line"]) == (b["category"], b["line"]), name
        same += 1
    assert seen >= 45, seen  # measured: 51 of the 108 real logs show their order


def test_a_reversed_traceback_without_timestamps():
    text = ("Traceback (most recent call last):\n"
            '  File "/venv/lib/python3.12/site-packages/huggingface_hub/utils/_validators.py", line 106, in _inner\n'
            "    validate_repo_id(arg_value)\n"
            "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name': '/models/x'\n")
    lines = text.strip().split("\n")
    assert order_of(lines[::-1]) == "reversed"
    assert classify_text("\n".join(lines[::-1]))["category"] == classify_text(text)["category"] == "model_not_found"


def interleave(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        out += a[i:i + 1] + b[i:i + 1]
    return out


def test_interleaved_rank_tracebacks_are_read_per_rank():
    # torch elastic prefixes every line with its rank; two ranks' tracebacks pasted line by line
    tb = ["Traceback (most recent call last):",
          '  File "/venv/lib/python3.12/site-packages/sglang/srt/model_executor/model_runner.py", line 300, in init',
          "    self.load_model()",
          '  File "/venv/lib/python3.12/site-packages/sglang/srt/model_loader/loader.py", line 410, in load_model',
          "    model = _initialize_model(model_config)",
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB."]
    r0 = ["[rank0]: " + x for x in tb]
    r1 = ["[rank1]: " + x for x in tb]
    mixed = interleave(r0, r1)
    assert order_of(mixed) == "interleaved"
    lines, order = in_order(mixed)
    assert order == "interleaved" and lines == r0 + r1
    v = classify_text("\n".join(mixed))
    assert v["category"] == "oom_weights" and v["line"].startswith("[rank0]: torch.OutOfMemoryError"), v


def test_reversed_timestamped_lines_are_put_back():
    r0 = ["[2026-01-01 00:00:0%d TP0] step %d" % (i, i) for i in range(5)]
    assert in_order(r0[::-1]) == (r0, "reversed")
