# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ready/read_log: the log source fills the log's part of the snapshot and nothing else, from a real log file; a log
that goes away mid-wait leaves its part as last read; its state carries a wait on where it stopped."""
import testpaths
import os

import pytest

from snapshot_marks import marked, written

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import read_log
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput, with_defaults

OOM = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs", "oom_kv_docker.log")


def lines(n):
    with open(OOM) as f:
        return "".join(f.readlines()[:n])


def source(log, state=None):
    return read_log.LogSource(with_defaults({"log_path": str(log)}), state)


def test_it_fills_exactly_the_logs_part(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(lines(4))  # server_args, dist init begin and end, weights begin
    src = source(log)
    s = marked(now=2.0)
    assert src.see(s) is True  # the log moved
    assert written(s, now=2.0) == set(read_log.PART)
    assert s.has_log and s.stage == "load_weights" and s.stage_began == 2.0 and s.ready_at is None
    assert s.tail[-1].endswith("Load weight begin. avail mem=78.53 GB") and s.first_strong_at is None
    assert src.see(marked(now=3.0)) is False  # no new byte: no progress


def read_then_grow(tmp_path, to):
    """A log of 4 lines read once (at 1.0), then grown to ``to`` lines: (its path, the source that read it)."""
    log = tmp_path / "server.log"
    log.write_text(lines(4))
    src = source(log)
    src.see(marked(now=1.0))
    with open(str(log), "a") as f:
        f.write(lines(to)[len(lines(4)):])
    return log, src


def test_a_fatal_line_is_when_it_was_read(tmp_path):
    log, src = read_then_grow(tmp_path, 16)
    s = marked(now=7.5)
    assert src.see(s) is True
    assert s.first_strong_at == 7.5 and src.verdict()["category"] == "oom_kv"


def test_a_log_gone_mid_wait_keeps_its_part_as_last_read(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(lines(4))
    src = source(log)
    first = marked(now=1.0)
    src.see(first)
    os.unlink(str(log))
    s = marked(now=2.0)
    assert src.see(s) is False
    assert written(s, now=2.0) == set(read_log.PART)
    assert (s.stage, s.tail) == (first.stage, first.tail)


def test_no_log_path_is_an_empty_part():
    src = read_log.LogSource(with_defaults({}))
    src.check_readable()
    s = marked(now=1.0)
    assert src.see(s) is False and written(s, now=1.0) == set(read_log.PART)
    assert (s.has_log, s.stage, s.tail) == (False, "starting", [])
    assert src.report() == {"log_tail": [], "log_bytes_read": 0} and src.verdict_in_order() is None


def test_a_directory_for_a_log_is_refused(tmp_path):
    with pytest.raises(BadInput, match="not a regular file"):
        source(tmp_path).check_readable()


def test_the_state_carries_on_where_it_stopped(tmp_path):
    log, src = read_then_grow(tmp_path, 7)
    again = source(log, src.dump())
    s = marked(now=2.0)
    assert again.see(s) is True
    assert s.stage == "kv_cache" and s.tail[-1].startswith("sglang-1  | [2026-03-02 08:15:10] Load weight end.")
    assert again.report()["log_bytes_read"] == len(lines(7).encode())


def test_drain_reads_past_the_per_poll_chunk(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(lines(4) + "sglang-1  | a quiet line\n" * 2000 + lines(16)[len(lines(4)):])
    src = source(log)
    src.reader.chunk = 4096
    src.see(marked(now=1.0))
    assert src.cls.first_strong_at is None  # one chunk read: the fatal line is further on
    assert src.drain(2.0) is True and src.cls.first_strong_at == 2.0
    assert src.drain(3.0) is False
