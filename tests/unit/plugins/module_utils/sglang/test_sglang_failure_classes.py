# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 29: failure classes read by class, not by string. Each wording below is real (the file that raises it is
named); several layers word the same class, and every wording must land in it."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text

ARCH = [
    # the CUDA and HIP runtimes (torch's wording)
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    "RuntimeError: CUDA error: invalid device function",
    "RuntimeError: HIP error: invalid device function",
    # torch at import
    "UserWarning: NVIDIA RTX PRO 6000 Blackwell Workstation Edition with CUDA capability sm_120 is not compatible "
    "with the current PyTorch installation.",
    # Triton's fp8 check (triton/language/semantic.py)
    "ValueError: type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')",
    # FlashInfer 0.6.12 (cute_dsl/attention/compat.py, compilation_context.py, jit/core.py)
    "ValueError: Unsupported compute capability: 120",
    "RuntimeError: SM 12.x requires CUDA >= 12.9",
    "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
    "RuntimeError: XQA is only supported on SM90, SM100, SM120/SM121 GPUs",
    # SGLang 0.5.15.post1 (multiplex/pdmux_context.py, utils) and sgl-kernel 0.4.4
    "ValueError: Unsupported compute capability: 12.0",
    "RuntimeError: SGLang only supports sm75 and above.",
    "RuntimeError: dsv3_fused_a_gemm requires SM90 (Hopper) or later",
    "ValueError: SM110 is not supported for cute-dsl backend.",
    # ptxas under Triton
    "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
]


@pytest.mark.parametrize("line", ARCH)
def test_an_architecture_refused_in_any_layers_words_is_arch_unsupported(line):
    v = classify_text("[2026-01-01 00:00:00 TP0] Load weight begin. avail mem=90 GB\n" + line)
    assert v["category"] == "arch_unsupported", v


@pytest.mark.parametrize("line", [
    "ValueError: Model architectures ['FooForCausalLM'] are not supported for now.",
    "ValueError: No model architectures are specified",
    "RuntimeError: CUDA graph is not supported on this backend, use --disable-cuda-graph",
])
def test_a_model_architecture_or_a_feature_is_no_gpu_architecture(line):
    assert classify_text(line)["category"] != "arch_unsupported"


@pytest.mark.parametrize("text, category, key", [
    # NCCL 2.x: the segment of its shared-memory transport (shmutils.cc) on a full /dev/shm
    ("host:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
     "host:1:2 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-x8Yz1 to 9637892 bytes\n"
     "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
     "shm_exhausted", "/dev/shm/nccl-"),
    ("host:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
     "shm_exhausted", "posix_fallocate"),
    # torch's shared-memory tensors (share_memory_ / worker IPC)
    ("RuntimeError: unable to write to file </torch_3411_2263455123_0>: No space left on device (28)",
     "shm_exhausted", "unable to write to file"),
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "shm_exhausted", "insufficient shared memory"),
    # GPU peer access refused (custom all-reduce IPC, CUDA, NCCL's P2P transport)
    ("RuntimeError: CUDART error: peer access is not supported between these two devices", "nccl", "peer access"),
    # SGLang's and NCCL's watchdogs
    ("[2026-01-01 00:05:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
     "watchdog_hang", "watchdog timeout"),
    ("[rank0]:[E1201 10:00:00.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
     "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 "
     "milliseconds before timing out.", "watchdog_hang", "Watchdog caught"),
    # CUDA 802 on an NVSwitch box without fabric manager
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
     "gpu_hardware", "802"),
])
def test_new_classes(text, category, key):
    v = classify_text(text)
    assert v["category"] == category and key in v["line"], v


LOAD = ("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=%d, nnodes=1)\n"
        "[2026-01-01 00:00:05 TP0] Load weight begin. avail mem=78 GB\n")


def test_sigbus_while_loading_names_the_weight_file_and_storage():
    text = (LOAD % 1 + "[2026-01-01 00:00:06 TP0] loading /models/m/model-00002-of-00004.safetensors\n"
            "Fatal Python error: Bus error\n\nThread 0x00007f (most recent call first):\n"
            '  File "/venv/lib/python3.12/site-packages/safetensors/torch.py", line 313, in get_tensor\n')
    v = classify_text(text)
    assert v["category"] == "weights_sigbus", v
    assert "model-00002-of-00004.safetensors" in v["remedy"] and "storage" in v["remedy"]


def test_sigbus_without_a_named_file_names_the_model_path():
    v = classify_text(LOAD % 1 + "Bus error (core dumped)")
    assert v["category"] == "weights_sigbus" and "/models/m" in v["remedy"], v


def test_sigbus_in_a_collective_with_peers_is_shared_memory():
    text = (LOAD % 2 + "[2026-01-01 00:00:09 TP0] Capture cuda graph begin. This can take up to several minutes.\n"
            "Bus error (core dumped)")
    assert classify_text(text)["category"] == "shm_exhausted"
    # ... but the same stage at TP 1 has no NCCL shared memory: the mapped weights are what is left
    assert classify_text(text.replace("tp_size=2", "tp_size=1"))["category"] == "weights_sigbus"


def test_sigbus_placed_by_its_frames():
    text = ("Fatal Python error: Bus error\n"
            '  File "/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/pynccl.py", '
            "line 120, in all_reduce\n")
    # faulthandler prints the frames after the error line; the innermost frame above decides when one is there
    frames_first = ('  File "/venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 2501, '
                    "in all_reduce\nFatal Python error: Bus error\n")
    assert classify_text(frames_first)["category"] == "shm_exhausted"
    assert classify_text(text)["category"] in ("weights_sigbus", "shm_exhausted")


def test_a_location_after_a_bare_exception_places_it():
    v = classify_text("json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
                      "  ... in triton/runtime/cache.py, get_group\n")
    assert v["category"] == "jit_build" and "triton" in v["remedy"] and "JSONDecodeError" in v["line"]


def test_a_flattened_raise_echo_keeps_the_real_message():
    v = classify_text("raise RuntimeError( RuntimeError: Cannot re-initialize CUDA in forked subprocess.")
    assert v["category"] == "scheduler_exception" and v["line"].startswith("RuntimeError: Cannot re-initialize")
    # a bare echo of the raise (a traceback's source line) is still no cause
    assert classify_text('    raise RuntimeError(f"NCCL error: {error_str}")')["category"] == "unknown"


def test_torch_compile_frames_give_the_compile_remedy():
    v = classify_text('  File "/usr/lib/python3/dist-packages/torch/_inductor/codecache.py", line 3062, in load\n'
                      "    mod = _reload_python_module(key, path)\n"
                      "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n")
    assert v["category"] == "jit_build" and "--enable-torch-compile" in v["remedy"], v
