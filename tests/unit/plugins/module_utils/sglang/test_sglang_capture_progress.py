# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 38: the CUDA-graph capture count moves as the log moves. tqdm redraws its count only every so often, so the
size named in the bar's description (captured largest first) says how far the capture is. Lines are the real
0.5.15.post1 ones of the H200 capture (docs/evidence/real-sglang-h200/bench-2026-12-03/run2/eagle3.log); 0.5.23 prints
the same begin line and bar (model_executor/runner/decode_cuda_graph_runner.py, prefill_cuda_graph_runner.py)."""
import os

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker

BEGIN = ("[2026-12-03 21:37:18] Capture target verify CUDA graph begin. backend=full, num_tokens_per_bs=4, "
         "bs=[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 40, 44, 48], avail mem=83.34 GB")
BAR = "Capturing batches (bs=%d avail_mem=83.20 GB):   4%%|▍         | %d/23 [00:05<01:57,  5.34s/it]"


def tracker(*lines):
    st = StageTracker()
    for line in lines:
        st.feed(line, 0)
    return st


def test_the_size_being_captured_moves_the_count_while_tqdm_lags():
    # tqdm still says 1/23 while the description has moved on to the 4th size (48, 44, 40 done)
    st = tracker(BEGIN, BAR % (48, 0), BAR % (44, 1), BAR % (40, 1), BAR % (32, 1))
    assert st.stage == "cuda_graph" and st.detail == "3/23"
    assert st.label() == "capturing CUDA graphs 3/23 (target verify)"


def test_the_count_never_goes_below_tqdms():
    st = tracker(BEGIN, BAR % (44, 5))  # tqdm ahead (a size left out): keep its count
    assert st.detail == "5/23"


def test_the_begin_line_resets_the_count_for_the_next_capture():
    st = tracker(BEGIN, BAR % (32, 4),
                 BEGIN.replace("target verify", "draft decode").replace("21:37:18", "21:37:23"), BAR % (48, 0))
    assert st.detail == "0/23" and st.label().endswith("(draft decode)")


def test_a_size_outside_the_list_or_another_total_falls_back_to_tqdm():
    st = tracker(BEGIN, BAR % (64, 2))
    assert st.detail == "2/23"
    st = tracker(BEGIN, "Capturing batches (bs=44 avail_mem=1.0 GB):  10%|#  | 2/20 [00:01<00:05]")
    assert st.detail == "2/20"


def test_without_a_size_list_the_bar_alone_is_read():
    st = tracker("[2025-06-25 11:25:50] Capture cuda graph begin. This can take up to several minutes. avail mem=7.08 GB",
                 "Capturing batches (avail_mem=7.08 GB):   0%|          | 0/17 [00:00<?, ?it/s]")
    assert st.detail == "0/17"


def test_older_size_list_line_and_prefill_token_counts():
    st = tracker("[2026-03-25 09:32:54] Capture cuda graph begin. This can take up to several minutes. avail mem=7.80 GB",
                 "[2026-03-25 09:32:54] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32]",
                 "Capturing batches (bs=16 avail_mem=7.64 GB):   0%|          | 0/8 [00:00<?, ?it/s]")
    assert st.detail == "2/8"  # 32 and 24 done
    st = tracker("[x] Capture target prefill CUDA graph begin. backend=piecewise, num_tokens=[256, 512, 1024], avail mem=70 GB",
                 "Capturing num tokens (num_tokens=256 avail_mem=69.00 GB):   0%|   | 0/3 [00:00<?, ?it/s]")
    assert st.stage == "cuda_graph" and st.detail == "2/3"


def test_state_survives_a_resume():
    st = tracker(BEGIN, BAR % (44, 0))
    again = StageTracker(st.dump())
    again.feed(BAR % (40, 1), 0)
    assert again.detail == "2/23"


def test_the_real_h200_capture_moves_with_every_size():
    path = os.path.join(testpaths.REPO, "docs", "evidence", "real-sglang-h200", "bench-2026-12-03", "run2", "eagle3.log")
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [x for x in f.read().replace("\r", "\n").split("\n") if x.strip()]
    st = StageTracker()
    shown = []
    for line in lines:
        st.feed(line, 0)
        if line.startswith("Capturing batches") and (not shown or shown[-1] != st.label()):
            shown.append(st.label())
    target = [s for s in shown if s.endswith("(target verify)")]
    # each of the 23 sizes shows once (0/23 .. 22/23) before the bar's own 23/23
    assert ["capturing CUDA graphs %d/23 (target verify)" % i for i in range(23)] == target[:23]
