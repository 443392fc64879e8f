# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The log patterns rewritten to run in linear time (a megabyte line without spaces took minutes) match what the
quadratic ones matched: each new pattern is held to the old one on generated lines (Hypothesis), and the classifier
reads a long line's head and tail only. The timing itself is a benchmark: benchmarks/readiness/long_lines.py."""
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import log, signatures, stages

PROPERTY = settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])

# The patterns as they were before (quadratic or worse on long runs), the reference for what must still match.
OLD_WEIGHT = re.compile(r"[\w./-]*[\w-]+\.(?:safetensors|bin|pt|pth)\b(?!\.index)")
OLD_LOCATION = re.compile(r"[\w.-]+/[\w/.-]+\.py\b")
OLD_WARNING = re.compile(r"\w+Warning: ")
OLD_BAR = re.compile(r"^(.*?):?\s*\d{1,3}%(?:\s*Completed\s*)?\|")
OLD_OOM_KV = re.compile(r"\w+ runs out of memory\.")


def pieces(*extra):
    """Lines made of the pieces these patterns care about, in any order."""
    parts = ["a", "Z", "_", "0", "7", ".", "/", "-", " ", ":", "(", ")", "|", "%", "\t", ".safetensors", ".bin", ".pt",
             ".pth", ".index", ".json", ".py", "model-00001-of-00002", "/models/x/", "Warning: ", "User", "50%", "100%",
             " Completed ", "Loading safetensors checkpoint shards", "ImportError: ", "ModuleNotFoundError: ", "torch.",
             " runs out of memory.", "KV cache pool"] + list(extra)
    return st.lists(st.sampled_from(parts), max_size=14).map("".join)


def group0(rx, line):
    m = rx.search(line)
    return m.group(0) if m else None


@PROPERTY
@given(pieces())
def test_weight_file_pattern_finds_the_same_file(line):
    assert group0(signatures._WEIGHT_FILE_RE, line) == group0(OLD_WEIGHT, line)


@PROPERTY
@given(pieces())
def test_location_pattern_matches_the_same_lines(line):
    assert bool(signatures._LOCATION_RE.search(line)) == bool(OLD_LOCATION.search(line))


# The rewritten alternatives, as the code now holds them inside longer patterns.
NEW_WARNING = r"(?<!\w)\w+Warning: "
NEW_OOM_KV = r"(?<!\w)\w+ runs out of memory\."


def table_patterns(category):
    return [s.rx.pattern for s in signatures.build_table() if s.category == category]


def test_the_code_holds_the_rewritten_alternatives():
    assert NEW_WARNING in signatures.NOISE_RE.pattern and OLD_WARNING.pattern not in signatures.NOISE_RE.pattern.replace(
        NEW_WARNING, "")
    assert any(NEW_OOM_KV in p for p in table_patterns("oom_kv"))
    assert not any(OLD_OOM_KV.pattern in p.replace(NEW_OOM_KV, "") for p in table_patterns("oom_kv"))


@PROPERTY
@given(pieces())
def test_rewritten_alternatives_match_the_same_lines(line):
    for old, new in ((OLD_WARNING, NEW_WARNING), (OLD_OOM_KV, NEW_OOM_KV)):
        assert bool(re.search(new, line)) == bool(old.search(line)), (old.pattern, line)


@PROPERTY
@given(pieces())
def test_bar_pattern_names_the_same_bar(line):
    old, new = OLD_BAR.match(line), log._BAR_RE.match(line)
    assert bool(new) == bool(old)
    if old:
        assert new.group(1).strip() == old.group(1).strip()


def test_rank_tag_and_progress_on_real_shapes():
    # the bracket may not hold another "[": SGLang's tags never do ("[2026-01-01 12:00:00 TP3]")
    assert log._RANK_TAG_RE.search("[2026-11-30 10:00:00 TP3] Load weight end.").group(1) == "TP3"
    assert log._RANK_TAG_RE.search("[2026-11-30 10:00:00 DP1 TP0] x").group(1) == "TP0"
    assert log._RANK_TAG_RE.search("[rank5]: Traceback").group(2) == "5"
    assert log._RANK_TAG_RE.search("[[[ TP3]") .group(1) == "TP3"
    assert log._RANK_TAG_RE.search("[ TP3") is None
    m = stages._PROGRESS_RE.search("Capturing batches (bs=8 avail_mem=71.2 GB):  62%|######2   | 5/8 [00:03<00:01]")
    assert m.groups() == ("62", "5", "8")
    assert stages._PROGRESS_RE.search("Loading:  50%|#####     | 1/2 [00:10<00:10]").groups() == ("50", "1", "2")
    assert stages._PROGRESS_RE.search("50% done 3/4") is None


def test_a_long_line_is_read_by_its_head_and_tail():
    head, tail = signatures.CLIP_HEAD, signatures.CLIP_TAIL
    assert signatures.clip("x" * (head + tail)) == "x" * (head + tail)  # at the bound: whole
    cut = signatures.clip("h" * head + "m" + "t" * tail)  # one character over: the middle one is left out
    assert cut == "h" * head + " [... 1 characters ...] " + "t" * tail
    failure = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    blob = "QUJD" * 250000  # a megabyte of base64 with no space in it
    at_end = signatures.classify_text(blob + " " + failure)
    assert at_end["category"].startswith("oom"), at_end
    assert len(at_end["line"]) <= 1000
    in_middle = signatures.classify_text(blob + " " + failure + " " + blob)
    assert in_middle["category"] == "unknown"  # the documented bound: a phrase deep inside a huge line is not read


def test_the_launch_line_is_read_whole_however_long():
    fields = ", ".join("field_%d=%d" % (i, i) for i in range(800))  # longer than the clip
    line = "server_args=ServerArgs(model_path='/models/m', %s, tp_size=8, speculative_algorithm='EAGLE3')" % fields
    assert len(line) > signatures.CLIP_HEAD + signatures.CLIP_TAIL
    c = signatures.Classifier()
    c.feed(line, "starting", 0)
    assert c.paths.get("/models/m") == "--model-path"
    assert c.launch.get("tp_size") == 8 and c.launch.get("speculative") == 1
