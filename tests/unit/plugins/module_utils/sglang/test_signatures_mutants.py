# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 47: the rules of the failure classifier (sglang/signatures.py) that its mutants showed no test held. The
waiter classifies across polls from the state it saved (Classifier.dump), so a verdict must not depend on where the
log was cut between two polls; the remedy names what the log names (the flag, the path, the draft)."""
import json

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import (
    DRAFT_FLAG, R_ARGS, R_CKPT, R_MODEL_FEATURE, R_MODEL_TYPE, R_PATH_FLAG, R_PORT, R_PORT_FLAG, R_SHM, R_SIGBUS,
    R_VOCAB, R_VOCAB_DRAFT, Classifier,
    build_table, classify_text, frame_of, has_peers, is_noise, match_line)

# A start-up that has set every part of the classifier's state: the launch's paths and layout, a weight file, a line
# the server survives, a telling line nothing matched, a peer named in a failure, a traceback with an echoed raise.
HEAD = [
    "[2026-05-01 10:00:00] server_args=ServerArgs(model_path='/models/target', tp_size=2, nnodes=1, "
    "speculative_draft_model_path='/models/draft', speculative_algorithm='EAGLE3')",
    "[2026-05-01 10:00:05 TP0] Loading safetensors checkpoint shards from model-00001-of-00002.safetensors",
    "E0326 14:23:05.675921 18944 rdma_context.cpp:265] Failed to register memory 0x7f105035d000: Input/output error [5]",
    "[2026-05-01 10:00:06 TP1] Worker heartbeat failed to reach the monitor",
    "[2026-05-01 10:00:07 TP1] [Rank 1] Watchdog caught collective operation timeout: connection to 10.0.0.2:29500 reset",
    "Traceback (most recent call last):",
    '  File "/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 10, in run',
    "    raise RuntimeError(msg)",
]
TAIL = [
    "RuntimeError",
    "E0326 14:23:06.000001 18944 rdma_context.cpp:270] Failed to register memory 0x7f105035e000: Input/output error [5]",
    "[2026-05-01 10:00:09] Received sigquit from a child process. It usually means the child failed.",
]


def fed(lines, c=None, start=0):
    c = c or Classifier()
    for i, line in enumerate(lines):
        c.feed(line, "load_weights", float(start + i + 1))
    return c


def test_the_saved_state_holds_everything_the_next_poll_needs():
    state = fed(HEAD).dump()
    # every part is set here (a round trip of empty parts would prove nothing) ...
    assert [k for k, v in state.items() if v in (None, 0, [], {})] == []
    # ... and each comes back from the saved state as it was, through JSON as the module saves it
    again = Classifier(state=json.loads(json.dumps(state)))
    assert again.dump() == state
    # a log read in two polls gets the verdict of the log read at once, its warnings and its first strong line
    whole, split = fed(HEAD + TAIL), fed(TAIL, again, start=len(HEAD))
    assert split.verdict() == whole.verdict() and split.warnings_seen() == whole.warnings_seen()
    assert split.first_strong_at == whole.first_strong_at == 5.0 and whole.warnings_seen()["count"] == 2


def test_a_fresh_classifier_and_one_from_no_state_start_empty():
    fresh = Classifier().dump()
    assert Classifier(state={}).dump() == Classifier(state=None).dump() == fresh
    assert fresh["best"] is None and fresh["frames"] == [] and fresh["warnings"] == 0 and fresh["paths"] == {}


# -- a device-side index assert: the draft's vocabulary only when the launch runs speculation --------------------------
INDEX_ASSERT = ("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [0,0,0], thread: "
                "[0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.")
DRAFT_FRAME = 'File "/venv/lib/python3.12/site-packages/sglang/srt/speculative/eagle_worker.py", line 1, in forward'
PLAIN_FRAME = 'File "/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 1, in run'


@pytest.mark.parametrize("given, draft", [
    ({}, False),
    ({"launch": {"speculative": 1}}, True),                # the server_args line named an algorithm
    ({"launch": {"tp_size": 2}}, False),
    ({"paths": {"/m/d": DRAFT_FLAG}}, True),               # ... or the draft's path alone
    ({"paths": {"/m/t": "--model-path"}}, False),
    ({"frames": [DRAFT_FRAME]}, True),                     # ... or the assert came from where the draft runs
    ({"frames": [PLAIN_FRAME]}, False),                    # a traceback elsewhere is no speculation
])
def test_an_index_assert_names_the_draft_vocabulary_only_with_speculation(given, draft):
    m = match_line(build_table(), INDEX_ASSERT, "http", **given)
    assert m["category"] == "cuda_error" and m["remedy"] == (R_VOCAB_DRAFT if draft else R_VOCAB)


# -- the tokenizer's and the model's remedies name the flag and the value the log names -------------------------------
TWO_PATHS = {"/models/a": "--model-path", "/models/a/tok": "--tokenizer-path"}


@pytest.mark.parametrize("line, given, named", [
    # the longest launch value the line names is the flag's; the value quoted is that flag's, not the shorter one
    ("OSError: Can't load tokenizer for /models/a/tok, make sure the path is right", {"paths": TWO_PATHS},
     "the tokenizer given to --tokenizer-path (/models/a/tok) could not be loaded"),
    ("OSError: Can't load tokenizer for /models/a, make sure the path is right", {"paths": TWO_PATHS},
     "the tokenizer given to --model-path (/models/a) could not be loaded"),
    # raised where the draft loads: the draft's flag, with the path the message quotes (either quotes) or none
    ('OSError: Can\'t load tokenizer for "/models/draft-tok".', {"frames": [DRAFT_FRAME]},
     "the tokenizer given to --speculative-draft-model-path (/models/draft-tok) could not be loaded"),
    ("OSError: Can't load tokenizer for '/models/draft-tok'.", {"frames": [DRAFT_FRAME]},
     "the tokenizer given to --speculative-draft-model-path (/models/draft-tok) could not be loaded"),
    ("OSError: Can't load tokenizer for the draft, make sure the path is right", {"frames": [DRAFT_FRAME]},
     "the tokenizer given to --speculative-draft-model-path (the value given) could not be loaded"),
    ("OSError: /models/a/tok does not appear to have a file named config.json.", {"paths": TWO_PATHS},
     "the path given to --tokenizer-path (/models/a/tok) was not found"),
])
def test_the_remedy_names_the_flag_and_the_value_the_line_names(line, given, named):
    m = match_line(build_table(), line, "starting", **given)
    assert m["remedy"].startswith(named), m["remedy"]
    # without the launch's paths or a draft frame no flag is named
    assert "given to --" not in match_line(build_table(), line, "starting")["remedy"]


# -- a SIGBUS where only a collective maps new pages: shared memory when the ranks have peers --------------------------
LAUNCH = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=1, pp_size=%d, nnodes=%d)\n"
CAPTURE = ("[2026-01-01 00:00:09 TP0] Capture cuda graph begin. This can take up to several minutes.\n"
           "Bus error (core dumped)")


@pytest.mark.parametrize("pp, nodes, kind", [(1, 1, "weights_sigbus"), (2, 1, "shm_exhausted"), (1, 2, "shm_exhausted")])
def test_a_sigbus_in_a_collective_stage_is_shared_memory_for_pipeline_and_multi_node_peers(pp, nodes, kind):
    v = classify_text(LAUNCH % (pp, nodes) + CAPTURE)
    assert v["category"] == kind and (v["remedy"] == R_SHM) is (kind == "shm_exhausted")


def test_has_peers_reads_each_parallel_dimension():
    assert has_peers(None) is None and has_peers({}) is None
    assert has_peers({"tp_size": 1, "pp_size": 1, "nnodes": 1}) is False
    assert [has_peers({k: 2}) for k in ("tp_size", "pp_size", "nnodes")] == [True, True, True]
    assert has_peers({"dp_size": 4}) is False  # data-parallel replicas share nothing a collective maps


# -- the small readers: a frame line, a notice, a long line's excerpt -------------------------------------------------
def test_frame_of_gives_the_path_and_the_function():
    assert frame_of(PLAIN_FRAME) == ("/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", "run")
    assert frame_of("RuntimeError: run failed in scheduler.py") is None


def test_a_warning_is_noise_and_an_error_is_not():
    assert is_noise("[2026-01-01 00:00:01] WARNING: Fail to set RLIMIT_NOFILE") is True
    assert is_noise("UserWarning: To silence this warning, set TOKENIZERS_PARALLELISM") is True
    assert is_noise("RuntimeError: CUDA error: out of memory") is False


@pytest.mark.parametrize("size", [498, 500, 501, 2000])
def test_a_key_line_is_quoted_whole_up_to_500_characters_and_a_window_past_it(size):
    line = "RuntimeError: CUDA error: an illegal memory access was encountered " + "x" * size
    line = line[:size]
    m = match_line(build_table(), line, "http")
    assert m["category"] == "cuda_error" and len(m["line"]) == min(size, 500)
    assert m["line"].startswith("RuntimeError: CUDA error: an illegal memory access")


CUDA_FAULT = "RuntimeError: CUDA error: an illegal memory access was encountered"


@pytest.mark.parametrize("before, after", [(1000, 1000), (1000, 0), (3, 2000)])
def test_a_flattened_paste_is_quoted_as_the_window_a_quarter_before_the_match(before, after):
    # an indented paste of one long line: the window is 500 characters of the stripped text, 125 of them before the
    # match where there are that many, and it ends at the text's end rather than run short
    line = "  " + "a" * before + " " + CUDA_FAULT + " " + "b" * after
    text = line.strip()
    at = text.index("illegal memory access")  # where the cuda_error signature matches
    start = max(0, min(at - 125, len(text) - 500))
    m = match_line(build_table(), line, "http")
    assert m["category"] == "cuda_error" and m["line"] == text[start:start + 500] and CUDA_FAULT in m["line"]


# -- a config.json without a model_type: the remedy names the folder and the flag that gave it ------------------------
NO_TYPE = "ValueError: Unrecognized model in %s. Should have a `model_type` key in its config.json, or contain one of"
NO_TYPE_BARE = "ValueError: Should have a `model_type` key in its config.json"
LONG = "/srv/models/organisation/very-long-model-name-v2-instruct-2605"  # 61 characters: the last 40 are quoted


@pytest.mark.parametrize("line, given, where", [
    (NO_TYPE % "/models/t/sub", {"paths": {"/models/t": "--model-path"}}, " of /models/t/sub (--model-path)"),
    (NO_TYPE % "/models/t", {"paths": {"/models/t": "--model-path", "/models/d": DRAFT_FLAG}}, " of /models/t (--model-path)"),
    (NO_TYPE_BARE, {"paths": {"/models/d": DRAFT_FLAG}, "frames": [DRAFT_FRAME]}, " of /models/d (%s)" % DRAFT_FLAG),
    (NO_TYPE_BARE, {"frames": [DRAFT_FRAME]}, " of the model (%s)" % DRAFT_FLAG),
    (NO_TYPE % LONG, {"paths": {LONG: "--model-path"}}, " of %s (--model-path)" % LONG[-40:]),
    (NO_TYPE % LONG, {}, " of %s" % LONG[-40:]),
    (NO_TYPE % "/x/y", {"frames": [PLAIN_FRAME]}, " of /x/y"),  # no flag named: none guessed
    (NO_TYPE_BARE, {}, ""),
])
def test_no_model_type_names_the_folder_and_its_flag(line, given, where):
    m = match_line(build_table(), line, "starting", **given)
    assert m["category"] == "model_unsupported" and m["remedy"] == R_MODEL_TYPE % where


def test_a_model_class_without_a_method_names_both():
    m = match_line(build_table(), "AttributeError: 'Qwen2ForCausalLM' object has no attribute 'set_embed'", "http")
    assert m["remedy"] == R_MODEL_FEATURE % ("Qwen2ForCausalLM", "set_embed")


@pytest.mark.parametrize("line, remedy", [
    ("ValueError: metrics_port at 40290 is not available in 30 seconds.",
     R_PORT_FLAG % ("--metrics-port", " (40290)", "--metrics-port")),
    ("RuntimeError: dist_init_port is used by a process already", R_PORT_FLAG % ("--dist-init-port", "", "--dist-init-port")),
    ("OSError: [Errno 98] Address already in use", R_PORT),  # no flag's name: the generic remedy
])
def test_a_taken_port_names_its_flag_and_number_when_the_line_does(line, remedy):
    m = match_line(build_table(), line, "init")
    assert m["category"] == "port_in_use" and m["remedy"] == remedy


@pytest.mark.parametrize("line, kind", [
    ("RuntimeError: DataLoader worker (pid 81) is killed by signal: Bus error. It is possible that dataloader's workers "
     "are out of shared memory.", "shm_exhausted"),
    ("Bus error (core dumped) while mapping /dev/shm/nccl-7Hc2Qp", "shm_exhausted"),
    ("Bus error (core dumped)", "weights_sigbus"),  # at load time with no peers: the mapped weights
])
def test_a_sigbus_whose_line_names_shared_memory_is_shared_memory(line, kind):
    m = match_line(build_table(), line, "load_weights", launch={"tp_size": 1})
    assert m["category"] == kind and (m["remedy"] == R_SHM) is (kind == "shm_exhausted")


def test_a_log_without_a_stage_banner_is_at_the_stage_given_else_starting():
    assert classify_text(CUDA_FAULT)["stage"] == "starting"
    assert classify_text(CUDA_FAULT, stage="http")["stage"] == "http"
    banner = "[2026-01-01 00:00:05 TP0] Load weight begin. avail mem=78 GB\n"
    assert classify_text(banner + CUDA_FAULT, stage="http")["stage"] == "load_weights"  # the log's own stage wins


def test_carriage_returns_split_lines_as_newlines_do():
    # a progress bar redrawn with \r and then the failure: the key line is the failure's own line
    progress = "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01]"
    v = classify_text(progress + "\r" + CUDA_FAULT + "\r\n")
    assert v["category"] == "cuda_error" and v["line"] == CUDA_FAULT


def test_a_saved_state_without_some_parts_restores_them_empty():
    # a state saved before a part existed (warnings, peer_line: issue 46) or trimmed: the missing parts start empty
    state = fed(HEAD).dump()
    kept = {"best": state["best"], "paths": state["paths"]}
    again = Classifier(state=kept).dump()
    assert again == dict(Classifier().dump(), **kept)
    split = fed(TAIL, Classifier(state=kept), start=len(HEAD))
    assert split.warnings_seen()["count"] == 1 and split.verdict()["category"] == fed(HEAD + TAIL).verdict()["category"]


# -- a traceback cut before its exception: its innermost known frame places it, while it is the log's last word -------
NCCL_FRAME = 'File "/venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 4159, in barrier'


@pytest.mark.parametrize("head, stage", [([], "starting"), (["Traceback (most recent call last):"], "load_weights")])
def test_a_cut_traceback_is_placed_by_its_frame_weakly_at_the_stage_it_was_cut(head, stage):
    c = fed(head + ["  " + NCCL_FRAME, "    work = default_pg.barrier(opts=opts)"])
    v = c.verdict()
    assert v == {"category": "nccl", "remedy": v["remedy"], "priority": 35, "strong": False, "line": NCCL_FRAME,
                 "stage": stage}
    assert v["remedy"] == classify_text(NCCL_FRAME + "\nRuntimeError: barrier")["remedy"]  # the frame's own remedy


@pytest.mark.parametrize("after, placed", [(6, True), (7, False)])
def test_a_cut_traceback_places_only_within_six_lines_of_its_last_frame(after, placed):
    c = fed(["  " + NCCL_FRAME] + ["    code line %d" % i for i in range(after)])
    assert (c.verdict()["category"] == "nccl") is placed


def test_nothing_recognised_is_unknown_quoting_the_most_telling_line():
    unknown = "no known failure line in the log; read log_tail and journal_tail"
    v = fed(["[2026-01-01] Starting the server", "[2026-01-01] Worker 3 failed to report", "[2026-01-01] bye"]).verdict()
    assert v == {"category": "unknown", "line": "[2026-01-01] Worker 3 failed to report", "remedy": unknown}
    assert fed(["[2026-01-01] Starting the server"]).verdict() == {"category": "unknown", "line": None, "remedy": unknown}


@pytest.mark.parametrize("size, frame", [(599, True), (600, False)])
def test_a_frame_line_is_a_frame_below_600_characters_and_a_paste_from_there(size, frame):
    line = NCCL_FRAME.rjust(size)
    assert len(line) == size
    assert (fed([line]).verdict()["category"] == "nccl") is frame


@pytest.mark.parametrize("between, outer", [(6, True), (7, False)])
def test_a_frame_within_six_lines_continues_the_traceback_and_a_later_one_starts_another(between, outer):
    app = 'File "/app/main.py", line 3, in <module>'  # a frame no rule knows: the one above it places the traceback
    c = fed(["  " + NCCL_FRAME] + ["    code line %d" % i for i in range(between)] + ["  " + app, "    main()"])
    assert (c.verdict()["category"] == "nccl") is outer


# -- a message-less exception quotes the raise/assert its traceback echoed: a short echo, within six lines ------------
SCHED_FRAME = '  File "/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 10, in run'


@pytest.mark.parametrize("size, quoted", [(299, True), (300, False)])
def test_an_echo_under_300_characters_is_quoted_by_the_bare_exception_below_it(size, quoted):
    echo = ("    assert self.req_to_token_pool is not None, " + "x" * 400)[:size]
    line = fed([SCHED_FRAME, echo, "AssertionError"]).verdict()["line"]
    assert line == ("AssertionError: (%s)" % echo.strip() if quoted else "AssertionError")


@pytest.mark.parametrize("between, quoted", [(4, True), (5, False)])
def test_a_bare_exception_quotes_the_echo_only_within_six_lines_of_the_frame(between, quoted):
    lines = [SCHED_FRAME, "    assert pool_ok, 'the pool'"] + ["    code %d" % i for i in range(between)]
    line = fed(lines + ["AssertionError"]).verdict()["line"]
    assert line == ("AssertionError: (assert pool_ok, 'the pool')" if quoted else "AssertionError")


@pytest.mark.parametrize("between, placed", [(5, True), (6, False)])
def test_a_location_places_a_bare_exception_only_within_six_lines_after_it(between, placed):
    lines = ["json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"]
    lines += ["    code %d" % i for i in range(between)] + ["  ... in triton/runtime/cache.py, get_group"]
    assert (fed(lines).verdict()["category"] == "jit_build") is placed


def test_a_cut_tracebacks_frame_is_quoted_up_to_300_characters():
    frame = 'File "/venv/lib/python3.12/site-packages/torch/distributed/%s.py", line 1, in barrier' % ("d" * 320)
    assert fed(["  " + frame]).verdict()["line"] == frame[:300]


@pytest.mark.parametrize("size, draft", [(19999, True), (20000, False)])
def test_speculation_is_read_from_lines_under_20000_characters(size, draft):
    line = ("[2026-01-01] args: {'speculative_algorithm': 'EAGLE3', 'note': '" + "n" * size)[:size]
    c = fed([line, INDEX_ASSERT])
    assert len(line) == size and c.verdict()["remedy"] == (R_VOCAB_DRAFT if draft else R_VOCAB)


@pytest.mark.parametrize("size, kind", [(2, "shm_exhausted"), (1, "weights_sigbus")])
def test_an_older_launchs_tensor_parallel_size_counts_as_tp_size(size, kind):
    old = "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/m', tensor_parallel_size=%d)\n" % size
    assert classify_text(old + CAPTURE)["category"] == kind


def test_a_location_places_a_bare_exception_once_at_the_frames_priority():
    lines = ["json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
             "  ... in triton/runtime/cache.py, get_group"]
    v = fed(lines).verdict()
    assert v["category"] == "jit_build" and v["priority"] == 35 and "generic" not in v
    # placed is placed: a second location further down does not move it
    again = fed(lines + ["  ... in sglang/srt/distributed/parallel_state.py, init"]).verdict()
    assert again["category"] == "jit_build" and again["remedy"] == v["remedy"]


@pytest.mark.parametrize("between, placed", [(5, True), (6, False)])
def test_a_bare_exception_is_placed_by_frames_at_most_six_lines_above_it(between, placed):
    lines = ["  " + NCCL_FRAME] + ["    code %d" % i for i in range(between)] + ["RuntimeError: boom"]
    assert (fed(lines).verdict()["category"] == "nccl") is placed


# -- a crash signal whose native backtrace runs through a transport's library ----------------------------------------
SIGNAL = "Caught signal 11 (Segmentation fault)"


@pytest.mark.parametrize("between, placed", [(5, True), (6, False)])
def test_a_crash_signal_is_the_transport_whose_library_its_backtrace_names_within_six_lines(between, placed):
    lines = [SIGNAL] + ["    code %d" % i for i in range(between)] + ["  #3 0x7f12 in ncclProxyService /usr/lib/libnccl.so.2"]
    v = fed(lines).verdict()
    assert v["line"] == SIGNAL and v["category"] == ("nccl" if placed else "scheduler_exception")
    assert ("signal" in v) is not placed  # placed once: the mark is gone


def test_the_backtrace_line_that_places_a_signal_is_still_read_for_its_peer():
    peer = "#2 libnccl.so.2 connection to 10.0.0.2:29500 failed"
    v = fed([SIGNAL, "  " + peer]).verdict()
    assert v["category"] == "nccl" and v["line"] == peer and v["cause_line"] == SIGNAL


# -- an nccl verdict quotes the first line naming the failing peer: a line under 2000 characters, 500 of it ----------
NCCL_RAISED = "RuntimeError: NCCL error: unhandled system error"


@pytest.mark.parametrize("size, quoted", [(1999, True), (2000, False)])
def test_a_peer_line_under_2000_characters_is_quoted_by_its_first_500(size, quoted):
    peer = ("[2026-05-01 TP1] [Rank 1] connection to 10.0.0.2:29500 closed by peer " + "p" * 3000)[:size]
    v = fed([peer, NCCL_RAISED]).verdict()
    assert v["category"] == "nccl"
    assert (v["line"], v.get("cause_line")) == ((peer[:500], NCCL_RAISED) if quoted else (NCCL_RAISED, None))


@pytest.mark.parametrize("line, counted", [
    ("[2026-05-01 10:00:00 TP0] Health check failed for request 42", True),   # nothing matched it: still counted
    ("[2026-05-01] Fetching shard failed, retrying in 2 s", True),
    ("[2026-05-01] Fetching shard, retrying in 2 s", False),                    # retried, but nothing went wrong
    ("[2026-05-01 10:00:00 TP0] Health check done for request 42", False),
])
def test_a_line_the_server_survives_is_a_warning_even_when_no_signature_matches(line, counted):
    c = fed([line])
    assert c.verdict()["category"] == "unknown"
    assert c.warnings_seen() == ({"count": 1, "lines": [line]} if counted else {"count": 0, "lines": []})


def test_long_warning_and_telling_lines_are_quoted_by_their_first_300_and_500_characters():
    warning = "[2026-05-01 10:00:00 TP0] Health check failed for request 42 " + "w" * 600
    telling = "[2026-05-01 10:00:00] Worker 3 failed to report " + "t" * 900
    c = fed([warning, telling])
    assert c.warnings_seen()["lines"] == [warning[:300]] and c.verdict()["line"] == telling[:500]


# -- remedies that name what the log names, and the defaults when it names nothing ----------------------------------
CKPT = "safetensors_rust.SafetensorError: Error while deserializing header: incomplete metadata"


def test_a_checkpoint_not_whole_names_the_file_or_says_which_it_cannot_name_and_the_flag_that_gave_it():
    table = build_table()
    assert match_line(table, CKPT, "load_weights")["remedy"] == R_CKPT % "the weight files the loader read last"
    named = match_line(table, CKPT + " in /models/m/model-00002-of-00004.safetensors", "load_weights")
    assert named["remedy"] == R_CKPT % "model-00002-of-00004.safetensors"
    given = match_line(table, CKPT + " in /models/m/x", "load_weights", paths={"/models/m": "--model-path"})
    assert given["category"] == "checkpoint_corrupt"
    assert given["remedy"] == R_CKPT % "the weight files the loader read last" + " (the files given to --model-path)"


def test_a_sigbus_remedy_names_the_file_else_the_model_path_else_the_weight_files():
    table = build_table()
    assert match_line(table, "Bus error (core dumped)", "load_weights")["remedy"] == R_SIGBUS % "the weight files"
    under = match_line(table, "Bus error (core dumped)", "load_weights", paths={"/models/m": "--model-path"})
    assert under["remedy"] == R_SIGBUS % "the weights under /models/m"


def test_a_missing_model_raised_where_the_draft_loads_names_the_drafts_flag():
    m = match_line(build_table(), "OSError: /d/x does not appear to have a file named config.json.", "starting",
                   frames=[DRAFT_FRAME])
    assert m["category"] == "model_not_found" and m["remedy"] == R_PATH_FLAG % (DRAFT_FLAG, "the value given")


def test_match_line_is_at_the_starting_stage_unless_told():
    assert match_line(build_table(), CUDA_FAULT)["stage"] == "starting"


# -- what a bare exception's message says ----------------------------------------------------------------------------
@pytest.mark.parametrize("stage, kind", [("starting", "oom_weights"), ("kv_cache", "oom_kv"), ("cuda_graph", "oom_cuda_graph")])
def test_a_bare_exception_saying_memory_ran_short_is_out_of_memory_at_its_stage(stage, kind):
    m = match_line(build_table(), "ValueError: the memory pool has not enough free memory to continue", stage)
    assert m["category"] == kind


def test_a_bare_exception_naming_a_flag_is_an_argument_problem_and_one_without_is_not():
    table = build_table()
    m = match_line(table, "ValueError: please lower --max-total-tokens to fit", "init")
    assert (m["category"], m["remedy"]) == ("bad_args", R_ARGS)
    m = match_line(table, "ValueError: please lower the total tokens to fit", "init")
    assert m["category"] == "scheduler_exception" and m["generic"] is True


def test_only_a_bare_exception_is_generic_and_only_a_crash_signal_is_a_signal():
    table = build_table()
    quit_line = match_line(table, "Received sigquit from a child process. It usually means the child failed.")
    bare = match_line(table, "RuntimeError: boom")
    assert "generic" not in quit_line and "signal" not in quit_line and "signal" not in bare
    assert match_line(table, SIGNAL)["signal"] is True
    # a bare exception is not placed by a transport library named after it (only a crash signal is)
    assert fed(["RuntimeError: boom", "  #1 0x7f12 in ncclProxyService /usr/lib/libnccl.so.2"]).verdict()["category"] == \
        "scheduler_exception"


def test_a_survived_line_is_never_strong():
    assert match_line(build_table(), "E0326 14:23:05.675921 18944 rdma_context.cpp:265] Failed to register memory "
                                     "0x7f105035d000: Input/output error [5]")["strong"] is False


# -- notices and user patterns ---------------------------------------------------------------------------------------
DRIVER_NOTICE = "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040)."


def test_a_notice_explains_weakly_but_a_user_pattern_on_it_keeps_its_rank():
    m = match_line(build_table(), DRIVER_NOTICE)
    assert m["category"] == "driver_mismatch" and m["strong"] is False and m["priority"] <= 55
    user = match_line(build_table([{"regex": "driver on your system is too old", "category": "driver_mismatch",
                                    "remedy": "upgrade the driver"}]), DRIVER_NOTICE)
    assert (user["strong"], user["priority"], user["remedy"]) == (True, 1000, "upgrade the driver")


def test_user_patterns_keep_their_category_remedy_and_strength_and_default_to_unknown():
    table = build_table([{"regex": "metrics_port .* taken", "category": "port_in_use", "remedy": "my remedy"},
                         {"regex": "quota exceeded"},
                         {"regex": "disk full", "category": "", "strong": False}])
    assert [(s.category, s.priority, s.strong, s.user) for s in table[:3]] == [
        ("port_in_use", 1000, True, True), ("unknown", 999, True, True), ("unknown", 998, False, True)]
    assert all(s.user is False for s in table[3:])
    m = match_line(table, "metrics_port 30001 is taken")  # the user's remedy as written, not fitted
    assert (m["category"], m["remedy"], m["strong"]) == ("port_in_use", "my remedy", True)
    assert match_line(table, "[x] quota exceeded")["remedy"] == "see log_tail"
