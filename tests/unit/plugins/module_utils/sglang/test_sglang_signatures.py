# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Classifier against real SGLang wording (fixtures written from the 0.5.9 /
0.5.10.post1 / 0.5.23 sources and issue logs: TP prefixes, docker prefixes,
cut tracebacks, the newer sigquit-first order)."""
import testpaths
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")


def load(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("name, category, key", [
    ("oom_cuda_graph_tp_sigquit_first.log", "oom_cuda_graph", "Capture cuda graph failed: CUDA out of memory"),
    ("oom_kv_docker.log", "oom_kv", "Not enough memory. Please try to increase --mem-fraction-static"),
    ("nccl_tp4.log", "nccl", "NCCL error in:"),
    ("import_sgl_kernel.log", "import_error", "Could not load any common_ops library"),
    ("bad_args_0523.log", "bad_args", "ambiguous option: --cuda-graph-max-bs"),
    ("port_in_use.log", "port_in_use", "[Errno 98]"),
    ("arch_sm120.log", "arch_unsupported", "ptxas fatal"),
    ("driver_old.log", "driver_mismatch", "driver on your system is too old"),
    ("model_not_found.log", "model_not_found", "HFValidationError"),
    ("warmup_failure.log", "warmup_failure", "warmup error"),
    ("host_oom_killer.log", "host_oom", "exit code: -9"),
])
def test_fixture_category_and_key_line(name, category, key):
    v = classify_text(load(name))
    assert v["category"] == category, v
    assert key in v["line"]
    assert v["remedy"]


def test_cause_beats_banner_printed_first():
    # 0.5.10+ prints "Received sigquit" and "Scheduler hit an exception" before the cause.
    v = classify_text(load("oom_cuda_graph_tp_sigquit_first.log"))
    assert "sigquit" not in v["line"] and "Scheduler hit" not in v["line"]
    assert "--mem-fraction-static" in v["remedy"]


def test_cut_traceback_falls_back_to_banner():
    v = classify_text(load("cut_traceback_scheduler.log"))
    assert v["category"] == "scheduler_exception"
    assert "Scheduler hit an exception" in v["line"] or "sigquit" in v["line"]


@pytest.mark.parametrize("stage_line, category", [
    ("[2026-01-12 10:31:12 TP1] Load weight begin. avail mem=20.00 GB", "oom_weights"),
    ("[2026-01-12 10:31:12 TP1] KV Cache is allocated. #tokens: 10, KV size: 1.00 GB", "oom_kv"),
    ("[2026-01-12 10:31:12 TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=2 GB", "oom_cuda_graph"),
    ("[2026-10-31 10:31:12 TP1] Capture target decode CUDA graph begin. backend=flashinfer, avail mem=2 GB", "oom_cuda_graph"),
])
def test_plain_oom_resolved_by_stage(stage_line, category):
    text = stage_line + "\n[2026-01-12 10:31:13 TP1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    assert classify_text(text)["category"] == category


def test_extra_patterns_win_over_builtins():
    text = load("nccl_tp4.log") + "\nMY_SITE_PROBLEM: rack 7 PSU\n"
    v = classify_text(text, extra_patterns=[{"regex": "MY_SITE_PROBLEM", "category": "unknown", "remedy": "call ops"}])
    assert v["line"].startswith("MY_SITE_PROBLEM") and v["remedy"] == "call ops"


def test_warning_is_not_a_cause():
    text = ("[2026-01-12 10:31:02 TP0] Custom allreduce is disabled because it's not supported on more than "
            "two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.\n"
            "[2026-01-12 10:31:12 TP0] Load weight begin. avail mem=93.02 GB\n")
    assert classify_text(text)["category"] == "unknown"


def test_first_specific_cause_wins_among_equals():
    # Rank 3 OOMs first, the other ranks then fail NCCL: OOM (and its stage) must be reported.
    text = ("[2026-01-12 10:33:32 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=3.71 GB\n"
            "[2026-01-12 10:33:36 TP3] Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.17 GiB.\n"
            "[2026-01-12 10:33:37 TP0] RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n")
    assert classify_text(text)["category"] == "oom_cuda_graph"


# Rules generalised after the batch-3 held-out logs: each case pairs the wording the rule must
# accept with a near miss it must leave alone.
@pytest.mark.parametrize("text, category", [
    # torch's allocator says "<device> out of memory. Tried to allocate" on every backend.
    ("RuntimeError: XPU out of memory. Tried to allocate 2.00 GiB", "oom_weights"),
    # A missing CUDA driver API symbol (cu + CamelCase) is the driver's; cuda*/cublas*/C++ symbols are not.
    ("ImportError: /x/common_ops.abi3.so: undefined symbol: cuTensorMapEncodeTiled", "driver_mismatch"),
    ("ImportError: /x/common_ops.abi3.so: undefined symbol: cudaGetDriverEntryPoint", "import_error"),
    ("ImportError: /x/libfoo.so: undefined symbol: cublasLtMatmul", "import_error"),
    # A kernel assert whose expression wrapped onto the next line.
    ("/x/IndexKernel.cu:92: operator(): block: [3,0,0], thread: [64,0,0] Assertion `-sizes[i] <= index &&",
     "cuda_error"),
    # torch c10d store socket timing out on a multi-node rendezvous; a bare poll notice is not enough.
    ("[W1 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=9) timed out after 600000ms", "nccl"),
    ("[W1 socket.cpp:460] [c10d] waitForInput: poll for socket returned 0, likely a timeout", "unknown"),
])
def test_generalised_rules(text, category):
    assert classify_text(text)["category"] == category


@pytest.mark.parametrize("frame, category", [
    ('  File "/p/sglang/srt/mem_cache/memory_pool.py", line 1, in _create_buffers', "oom_kv"),
    ('  File "/p/sglang/srt/model_executor/cuda_graph_runner.py", line 1, in capture', "oom_cuda_graph"),
    ('  File "/p/sglang/srt/model_loader/loader.py", line 1, in load_model', "oom_weights"),
])
def test_oom_placed_by_raising_frame_when_no_stage_line(frame, category):
    """A log cut above the stage banners: the frame that ran out of memory decides."""
    text = "Traceback (most recent call last):\n%s\n    x = torch.zeros(n)\n" \
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB\n" % frame
    assert classify_text(text)["category"] == category


def test_bare_exception_line_without_message_is_the_key_line_with_its_assert():
    text = ("[2025-01-01 00:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/p/sglang/srt/mem_cache/radix_cache.py", line 3, in __init__\n'
            "    assert isinstance(a, B)\n"
            "AssertionError\n")
    v = classify_text(text)
    # The message-less exception quotes the assert the traceback echoed above it (issue 38).
    assert (v["category"], v["line"]) == ("scheduler_exception", "AssertionError: (assert isinstance(a, B))")


# -- rules added for the H200 misreads and the checkpoint categories (wording from the 0.5.15.post1 / 0.5.23 wheels'
# model_runner_kv_cache_mixin.py, arg_groups/speculative_hook.py and weight_utils.py; hand-built, not held out)
KV_NO_ROOM = """[2026-12-03 10:00:01 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=1.2 GB
[2026-12-03 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/sglang/srt/model_executor/model_runner_kv_cache_mixin.py", line 129, in _profile_available_bytes
    raise ValueError(
ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.5. \
Raise --mem-fraction-static above 0.893 (minimum viable = 1 - available/pre = 0.8925). \
If using speculative decoding, draft weights count too.
"""

DRAFT_MISSING = """Traceback (most recent call last):
  File "/opt/venv/sglang/srt/server_args.py", line 2709, in __post_init__
  File "/opt/venv/sglang/srt/arg_groups/speculative_hook.py", line 90, in handle_speculative_decoding
  File "/opt/venv/sglang/srt/arg_groups/speculative_hook.py", line 26, in _resolve_speculative_algorithm_alias
  File "/opt/venv/transformers/utils/hub.py", line 488, in cached_files
    raise HFValidationError(
huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': \
'/models/no-draft'. Use `repo_type` argument if needed.
"""


def test_weights_leaving_no_kv_room_is_memory_not_arguments():
    v = classify_text(KV_NO_ROOM)
    assert v["category"] == "oom_kv", v
    assert "--mem-fraction-static" in v["remedy"] and "--context-length" in v["remedy"] and "--tp" in v["remedy"]
    assert "--help" not in v["remedy"]


def test_a_missing_draft_names_the_draft_flag_not_model_path():
    v = classify_text(DRAFT_MISSING)
    assert v["category"] == "model_not_found"
    assert "--speculative-draft-model-path" in v["remedy"] and "/models/no-draft" in v["remedy"]
    assert "--model-path" not in v["remedy"].replace("--speculative-draft-model-path", "")


def test_a_path_of_the_launch_names_its_flag():
    log = ("[2026-12-03 10:00:00] server_args=ServerArgs(model_path='/models/llama', tokenizer_path='/models/tok', "
           "speculative_draft_model_path='/models/draft', port=30000)\n"
           "OSError: Can't load tokenizer for '/models/tok'. If you were trying to load it from the Hub, make sure\n")
    v = classify_text(log)
    # the model was found: the tokenizer is what failed (issue 26), and the remedy names the flag that gave it
    assert v["category"] == "tokenizer" and "--tokenizer-path (/models/tok)" in v["remedy"]


@pytest.mark.parametrize("line, named", [
    ("RuntimeError: /m/model.safetensors.index.json references 1 shard file(s) missing from /m (incomplete "
     "download?): ['model-00003-of-00004.safetensors']", "model-00003-of-00004.safetensors"),
    ("safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer", None),
    ("safetensors_rust.SafetensorError: Error while deserializing header: incomplete metadata, file not fully covered",
     None),
    ('FileNotFoundError: No such file or directory: "/m/model-00002-of-00004.safetensors"',
     "model-00002-of-00004.safetensors"),
])
def test_a_checkpoint_that_is_not_whole(line, named):
    v = classify_text(line + "\n")
    assert v["category"] == "checkpoint_corrupt" and "re-stage" in v["remedy"]
    if named:
        assert "re-stage %s" % named in v["remedy"]


SIZE = "RuntimeError: The size of tensor a (512) must match the size of tensor b (256) at non-singleton dimension 1\n"


def test_a_shape_error_where_the_draft_loads_is_a_draft_mismatch():
    draft = ('  File "/opt/venv/sglang/srt/speculative/eagle_worker.py", line 124, in __init__\n'
             '  File "/opt/venv/sglang/srt/models/llama_eagle3.py", line 240, in load_weights\n') + SIZE
    v = classify_text("Traceback (most recent call last):\n" + draft)
    assert v["category"] == "draft_mismatch" and "target hidden size" in v["remedy"]
    target = '  File "/opt/venv/sglang/srt/models/llama.py", line 500, in load_weights\n' + SIZE
    assert classify_text("Traceback (most recent call last):\n" + target)["category"] != "draft_mismatch"


@pytest.mark.parametrize("line, category", [
    # SGLang's own wordings (the wheels' mem_cache/memory_pool_host.py, model_runner_kv_cache_mixin.py, utils/common.py)
    ("ValueError: Not enough host memory available. Requesting 80 GB but only have 12 GB free. Please reduce the size "
     "of the hierarchical cache.", "host_oom"),
    ("RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
     "max_mamba_cache_size=0", "oom_kv"),
    ("ValueError: No GPU memory values found.", "scheduler_exception"),  # nvidia-smi gave nothing: no shortage
])
def test_memory_wording_of_a_bare_exception(line, category):
    assert classify_text(line + "\n")["category"] == category
