# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 46: lines a server survives are warnings, never the end of a wait; the cause before the frame for the classes
of 2026 (tokenizer, processor, transfer engine, a reasoning parser that does not fit, a prefill after start with no KV
room, HIP faults, Blackwell's firmware); an nccl verdict quotes the peer that failed. Real wording: batch-7's logs and
the SGLang wheels' sources (reasoner_grammar_backend.py, multimodal_processor.py, mem_cache, mooncake/conn.py)."""
import re

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import (
    _PEER_RE, _SURVIVABLE_RE, Classifier, classify_text)

GLOG_REGISTER = ("E0326 14:23:05.675921 18944 rdma_context.cpp:265] Failed to register memory 0x7f105035d000: "
                 "Input/output error [5]")
PER_REQUEST = ("[2026-05-21 16:41:11 TP7] Prefill transfer failed for request rank=7 req.rid='x' req.bootstrap_room=6 "
               "with exception KVTransferError(bootstrap_room=6): Decode instance could be dead, remote mooncake session "
               "10.112.116.43:16917 is not alive")
RETRIED = ("[2026-07-15 11:18:20] Tokenizer for m is still TokenizersBackend after retries with --trust-remote-code. "
           "Model-specific tokenizer attributes may be missing.")
RAISED = "RuntimeError: Mooncake memory registration failed."


def feed(lines):
    c = Classifier()
    for i, line in enumerate(lines):
        c.feed(line, "http", float(i))
    return c


@pytest.mark.parametrize("line, category", [(GLOG_REGISTER, "transfer_engine"), (PER_REQUEST, "transfer_engine"),
                                            (RETRIED, "tokenizer")])
def test_a_survived_line_explains_but_never_ends_a_wait(line, category):
    c = feed([line])
    assert c.first_strong_at is None and c.verdict()["category"] == category
    assert c.warnings_seen() == {"count": 1, "lines": [line.strip()[:300]]}


def test_the_same_failure_raised_is_terminal():
    c = feed([RAISED])
    assert c.first_strong_at == 0.0 and c.verdict()["category"] == "transfer_engine"
    assert c.warnings_seen()["count"] == 0


def test_a_raised_exception_that_speaks_of_retries_is_still_terminal():
    c = feed(["RuntimeError: Mooncake Transfer Engine initialization failed after 3 retries"])
    assert c.first_strong_at == 0.0 and c.warnings_seen()["count"] == 0
    assert c.verdict()["category"] == "transfer_engine"


def test_a_raised_exception_outranks_the_noise_before_it():
    c = feed([GLOG_REGISTER, PER_REQUEST, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"])
    v = c.verdict()
    assert v["category"] == "oom_runtime" and "CUDA out of memory" in v["line"]
    assert c.warnings_seen()["count"] == 2 and c.first_strong_at == 2.0


def test_warnings_keep_five_lines_and_count_all():
    c = feed(["E0325 09:33:41.5%05d  8274 rdma_context.cpp:319] Context is not active: mlx5_9" % i for i in range(9)])
    w = c.warnings_seen()
    assert w["count"] == 9 and len(w["lines"]) == 5


def test_an_info_line_with_no_error_word_is_no_warning():
    c = feed(["I0325 09:32:23.101372  7990 ha_helper.cpp:20] Master view key: mooncake-store/mooncake/master_view"])
    assert c.warnings_seen()["count"] == 0 and c.verdict()["category"] == "unknown"


@settings(deadline=None, max_examples=300)
@given(st.text(alphabet="EWIF0123456789 :._-/abcrtpx]\n", max_size=80))
def test_only_a_glog_header_at_the_start_makes_a_line_survivable(text):
    glog = re.match(r"\s*[EWI]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w./-]+:\d+\]", text)
    words = re.search(r"\bfor request\b|\breq\.rid=|\bbootstrap_room=|(?i:\bretr(?:y|ying|ied|ies)\b)", text)
    assert bool(_SURVIVABLE_RE.search(text)) == bool(glog or words)


# -- the cause before the frame ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("line, category, remedy_word", [
    ("ValueError: think_end_token '</think>' must encode to exactly one token for constrained reasoning.", "bad_args",
     "--reasoning-parser"),
    ("ValueError: think_start_token '<think>' could not be encoded by the tokenizer.", "bad_args", "--reasoning-parser"),
    ("ValueError: No processor registered for architecture: ['Phi4MMForCausalLM'].", "processor", "--model-path"),
    ("[2026-03-01 10:00:00 TP0] Prefill out of memory. Try to lower your batch size.", "oom_runtime",
     "--chunked-prefill-size"),
    ("Failed to load tokenizer for model m from /m: Directory '/m' does not contain a valid tokenizer file", "tokenizer",
     "--tokenizer-path"),
    ("HIP error: operation not permitted on an event last recorded in a capturing stream", "cuda_error", "CUDA_LAUNCH"),
    ("HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016", "cuda_error",
     "CUDA_LAUNCH"),
    ("NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out", "gpu_hardware", "reboot"),
    ("NVRM: krcWatchdog_IMPL: RC watchdog: GPU is probably locked!", "gpu_hardware", "reboot"),
    ("NVRM: kflcnWaitForHaltRiscv_GA102: Timeout waiting for RISC-V to halt", "gpu_hardware", "reboot"),
    ("NVRM: Xid (PCI:0000:01:00): 175, pid=1, GPU firmware error", "gpu_hardware", "reboot"),
    ("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
     "gpu_hardware", "reboot"),
])
def test_the_classes_of_2026(line, category, remedy_word):
    v = classify_text(line)
    assert v["category"] == category and remedy_word in v["remedy"], v


@pytest.mark.parametrize("line, category, not_in_remedy", [
    # a logged fallback of template detection is no tokenizer failure
    ("[2026-03-01 10:00:00] Failed to load tokenizer for auto-detection: boom", "unknown", ""),
    # HIP's own "invalid device function" is the architecture, not a kernel fault
    ("RuntimeError: HIP error: invalid device function", "arch_unsupported", ""),
    # an ordinary Xid is a hardware fault, not the firmware's reboot case
    ("NVRM: Xid (PCI:0000:02:00): 79, pid=1234, GPU has fallen off the bus.", "gpu_hardware", "reboot"),
    ("NVRM: Xid (PCI:0000:02:00): 13, pid=1234, Graphics Exception", "gpu_hardware", "reboot"),
    ("NVRM: Xid (PCI:0000:02:00): 13, pid=154, name=python3, Graphics Exception", "gpu_hardware", "reboot"),
])
def test_the_neighbours_of_the_new_rows_keep_their_reading(line, category, not_in_remedy):
    v = classify_text(line)
    assert v["category"] == category, v
    if not_in_remedy:
        assert not_in_remedy not in v["remedy"]


def test_a_traceback_cut_before_its_exception_is_placed_by_its_frame():
    text = ("Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/configs/janus_pro.py", line 634, in <module>\n'
            "    register_image_processor(MultiModalityConfig, VLMImageProcessor)\n"
            '  File "/x/sglang/srt/configs/utils.py", line 18, in register_image_processor\n'
            "    AutoImageProcessor.register(config, None, image_p\n")
    v = classify_text(text)
    assert v["category"] == "import_error" and "register_image_processor" in v["line"] and "transformers" in v["remedy"]
    # a frame no rule knows leaves the banner's reading
    assert classify_text(text.replace("configs/utils.py", "x/y.py"))["category"] == "scheduler_exception"


# -- an nccl verdict quotes the peer ----------------------------------------------------------------------------------
NCCL_2076 = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
             "remote process exited or there was a network error, NCCL version 2.21.5\n"
             "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
             "Last error:\n"
             "socketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer\n")


def test_an_nccl_verdict_quotes_the_first_line_naming_the_failing_peer():
    v = classify_text(NCCL_2076)
    assert v["category"] == "nccl" and "172....<33759> failed" in v["line"]
    assert "DistBackendError" in v["cause_line"]


def test_an_nccl_verdict_without_a_peer_line_keeps_its_error_line():
    v = classify_text("bm:175:175 [0] NCCL INFO Bootstrap: Using bond0:172.16.0.124<0>\n"
                      "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n")
    assert v["category"] == "nccl" and v["line"].startswith("RuntimeError: NCCL error") and "cause_line" not in v


def test_a_peer_line_does_not_change_another_category():
    v = classify_text("socketProgressOpt: Call to recv from 10.0.0.2<33759> failed : Connection reset by peer\n"
                      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert v["category"].startswith("oom") and "CUDA out of memory" in v["line"]


@pytest.mark.parametrize("line, peer", [
    ("ng1:3:4 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer ng1-ib.narval<51159>",
     True),
    ("RuntimeError: [../gloo/transport/tcp/pair.cc:534] Connection closed by peer 10.0.0.2:6000", True),
    ("[Rank 3] Watchdog caught collective operation timeout", True),
    ("NCCL INFO cudaDriverVersion 13000", False),
    ("a" * 3000 + "<1>", True),
])
def test_the_peer_pattern(line, peer):
    assert bool(_PEER_RE.search(line)) == peer
