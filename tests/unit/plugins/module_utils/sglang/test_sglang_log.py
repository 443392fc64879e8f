# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Incremental log reader on real files: \\r bars (both tqdm styles), truncation,
rotation, a late log, and cost proportional to new bytes."""
import testpaths
import os
import shutil

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import LogReader
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker, progress_of

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")


def test_bars_059_style_collapse(tmp_path):
    p = tmp_path / "s.log"
    shutil.copy(os.path.join(FIX, "bars_059.log"), str(p))
    r = LogReader(str(p))
    lines = r.poll()
    assert len(lines) == 4  # the begin line and three bar states
    tail = r.tail_lines()
    assert len(tail) == 2 and "4/4" in tail[-1]


def test_bars_0510_inplace_live_state(tmp_path):
    p = tmp_path / "s.log"
    shutil.copy(os.path.join(FIX, "bars_0510_live.log"), str(p))
    r = LogReader(str(p))
    r.poll()
    tail = r.tail_lines()
    # No newline yet: the live (unterminated) state is what the operator must see.
    assert tail[-1].endswith("62/64 [02:11<00:04,  2.06s/it]") and len(tail) == 2
    assert progress_of(r.current()) == "62/64"
    with open(str(p), "ab") as f:
        f.write(b"\rLoading safetensors checkpoint shards: 100% Completed | 64/64 [02:15<00:00,  2.11s/it]\n")
    r.poll()
    assert r.tail_lines()[-1].endswith("64/64 [02:15<00:00,  2.11s/it]") and len(r.tail_lines()) == 2


def test_line_split_across_polls_and_crlf(tmp_path):
    p = tmp_path / "s.log"
    p.write_bytes(b"hello wor")
    r = LogReader(str(p))
    assert r.poll() == []
    with open(str(p), "ab") as f:
        f.write(b"ld\r")
    assert r.poll() == []  # a trailing \r may be half of \r\n
    with open(str(p), "ab") as f:
        f.write(b"\nnext\n")
    assert r.poll() == ["hello world", "next"]


def test_truncation_and_rotation(tmp_path):
    p = tmp_path / "s.log"
    p.write_text("one\ntwo\n")
    r = LogReader(str(p))
    assert r.poll() == ["one", "two"]
    p.write_text("x\n")  # truncated in place (same inode)
    assert r.poll() == ["x"] and r.events == ["truncated"]
    os.rename(str(p), str(tmp_path / "s.log.1"))
    p.write_text("fresh\n")
    assert r.poll() == ["fresh"] and r.events == ["rotated"]


def test_late_log(tmp_path):
    p = tmp_path / "late.log"
    r = LogReader(str(p))
    assert r.check_readable() is False
    assert r.poll() == [] and not r.exists
    p.write_text("server_args=ServerArgs(model_path='m')\n")
    assert r.poll() == ["server_args=ServerArgs(model_path='m')"] and r.events == ["appeared"]


def test_resume_from_state(tmp_path):
    p = tmp_path / "s.log"
    p.write_bytes(b"a\nb\rpart")
    r = LogReader(str(p))
    r.poll()
    r2 = LogReader(str(p), state=r.dump())
    with open(str(p), "ab") as f:
        f.write(b"ial\n")
    assert r2.poll() == ["partial"]
    assert r2.tail_lines() == ["a", "partial"]  # "b" was a \r redraw, replaced


def test_cost_follows_new_bytes_not_size(tmp_path):
    p = tmp_path / "big.log"
    with open(str(p), "wb") as f:
        f.truncate(1 << 30)  # 1 GiB sparse
        f.seek(1 << 30)
        f.write(b"\nLoad weight begin. avail mem=1 GB\n")
    r = LogReader(str(p), initial_window=1 << 20)
    r.poll()
    while r.offset < r.size:
        r.poll()
    assert r.bytes_read <= (1 << 20) + 100
    assert r.tail_lines()[-1] == "Load weight begin. avail mem=1 GB"
    before = r.bytes_read
    with open(str(p), "ab") as f:
        f.write(b"Load weight end. x\n")
    assert r.poll() == ["Load weight end. x"]
    assert r.bytes_read - before == len(b"Load weight end. x\n")


def test_unreadable_log_is_bad_input(tmp_path):
    import pytest
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import LogUnreadable
    with pytest.raises(LogUnreadable):
        LogReader(str(tmp_path)).check_readable()  # a directory


def test_stage_tracker_real_sequence():
    st = StageTracker()
    seq = [
        ("[2026-01-12 10:31:02] server_args=ServerArgs(model_path='m', tp_size=8)", "init"),
        ("[2026-01-12 10:31:09 TP0] Init torch distributed begin.", "dist_init"),
        ("[2026-01-12 10:31:12 TP0] Load weight begin. avail mem=93.02 GB", "load_weights"),
        ("Loading safetensors checkpoint shards:  97% Completed | 62/64 [02:11<00:04,  2.06s/it]", "load_weights"),
        ("[2026-01-12 10:31:12 TP5] Init torch distributed begin.", "load_weights"),  # late rank: no flap
        ("[2026-01-12 10:33:31 TP0] KV Cache is allocated. #tokens: 412032, KV size: 13.41 GB", "kv_cache"),
        ("[2026-10-31 10:33:32 TP0] Capture target decode CUDA graph begin. backend=flashinfer, avail mem=3 GB", "cuda_graph"),
        ("Capturing batches (bs=128 avail_mem=3.52 GB):  45%|####5     | 10/22 [00:03<00:04,  2.55it/s]", "cuda_graph"),
        ("[2026-01-12 10:35:40 TP0] max_total_num_tokens=412032, chunked_prefill_size=8192, max_prefill_tokens=16384", "http"),
        ("[2026-01-12 10:35:41] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)", "warmup"),
        ("[2026-01-12 10:35:44] The server is fired up and ready to roll!", "ready"),
    ]
    for i, (line, stage) in enumerate(seq):
        st.feed(line, float(i))
        assert st.stage == stage, line
    assert [s["stage"] for s in st.stages] == ["starting", "init", "dist_init", "load_weights", "kv_cache",
                                               "cuda_graph", "http", "warmup", "ready"]
    st2 = StageTracker()
    st2.feed(seq[3][0], 0)
    assert st2.detail == "62/64"
    # Past the HTTP stage a server_args= echo never sends the stage back to init.
    st.feed("[2026-01-12 11:00:00] server_args=ServerArgs(model_path='m')", 99.0)
    assert st.stage == "ready" and st.restarts == 0
    # Before it, the same line is a restart into the same log.
    st3 = StageTracker()
    for i, (line, _stage) in enumerate(seq[:5]):
        st3.feed(line, float(i))
    assert st3.stage == "load_weights"
    st3.feed("[2026-01-12 11:00:00] server_args=ServerArgs(model_path='m')", 99.0)
    assert st3.stage == "init" and st3.restarts == 1
