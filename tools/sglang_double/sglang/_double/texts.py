# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Failure texts as real SGLang / torch / NCCL print them (wording from the wheels' source and real logs)."""
from sglang.version import at_least

SITE = "/usr/local/lib/python3.12/dist-packages"

# Start-up lines whose wording changed between versions: {name: ((first version, text), ...)}, newest last. The same
# table as the collection's sglang/gates.STARTUP_LINES (tests/unit/tools/test_sglang_double_startup_lines.py compares
# them and both with the wheels): 0.5.21 moved distributed init to distributed/bootstrap.py and renamed its lines.
STARTUP_LINES = {
    "dist_init_begin": ((None, "Init torch distributed begin."), ("0.5.21", "Init parallel begin.")),
    "dist_init_end": ((None, "Init torch distributed ends."), ("0.5.21", "Init parallel ends.")),
}


def startup_line(name):
    """This version's wording of start-up line ``name``."""
    text = None
    for since, candidate in STARTUP_LINES[name]:
        if since is None or at_least(since):
            text = candidate
    return text


def dist_init_end_line(elapsed):
    """The line that ends distributed init, with what this version prints after it."""
    if at_least("0.5.21"):
        # distributed/bootstrap.py (0.5.21, 0.5.23): elapsed only
        return "%s elapsed=%.2f s" % (startup_line("dist_init_end"), elapsed)
    # model_executor/model_runner.py (0.5.9 to 0.5.15.post1), distributed/bootstrap.py (0.5.20)
    return "%s elapsed=%.2f s, mem usage=0.71 GB" % (startup_line("dist_init_end"), elapsed)


def tb(frames, last):
    lines = ["Traceback (most recent call last):"]
    for path, line, func, code in frames:
        lines.append('  File "%s/%s", line %d, in %s' % (SITE, path, line, func))
        lines.append("    " + code)
    lines.append(last)
    return "\n".join(lines)


RUN_SCHED = ("sglang/srt/managers/scheduler.py", 3162, "run_scheduler_process",
             "scheduler = Scheduler(")
INIT_WORKER = ("sglang/srt/managers/tp_worker.py", 247, "__init__",
               "self.model_runner = ModelRunner(")
MR_INIT = ("sglang/srt/model_executor/model_runner.py", 380, "__init__", "self.initialize(min_per_gpu_memory)")


def capture_failed_hint():
    if at_least("0.5.15"):
        return ("Possible solutions:\n"
                "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
                "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
                "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. "
                "(Not recommended. Huge performance loss)\n"
                "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")
    return ("Possible solutions:\n"
            "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
            "3. disable torch compile by not using --enable-torch-compile\n"
            "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
            "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")


OOM_ALLOC = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 94.97 GiB of which "
             "1.06 GiB is free. Including non-PyTorch memory, this process has 93.89 GiB memory in use. Of the "
             "allocated memory 90.12 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated. "
             "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
             "to avoid fragmentation.  See documentation for Memory Management  "
             "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def scheduler_exception(scenario):
    """Traceback text logged after 'Scheduler hit an exception: ' for a scheduler-side crash."""
    base = [RUN_SCHED, INIT_WORKER, MR_INIT]
    if scenario == "crash_oom_cuda_graph":
        return tb(base + [("sglang/srt/model_executor/cuda_graph_runner.py", 371, "__init__",
                           "raise Exception(")],
                  "Exception: Capture cuda graph failed: " + OOM_ALLOC + "\n" + capture_failed_hint())
    if scenario == "crash_oom_kv":
        return tb(base + [("sglang/srt/model_executor/model_runner_kv_cache_mixin.py", 402, "init_memory_pool",
                           "raise RuntimeError(")],
                  "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
    if scenario == "crash_oom_weights":
        return tb(base + [("sglang/srt/model_loader/loader.py", 633, "load_model",
                           "model = _initialize_model(")],
                  "torch.OutOfMemoryError: " + OOM_ALLOC)
    if scenario == "crash_nccl":
        return tb(base + [("sglang/srt/distributed/parallel_state.py", 1474, "init_distributed_environment",
                           "torch.distributed.barrier()")],
                  "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
    if scenario.startswith("crash_arch:"):
        frame, last = ARCH_REFUSALS[scenario.split(":", 1)[1]]
        return tb(base + [frame], last)
    if scenario == "crash_shm":
        return tb(base + [("sglang/srt/distributed/parallel_state.py", 1474, "init_distributed_environment",
                           "torch.distributed.barrier()")],
                  "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                  "ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
                  "version 2.27.5\nncclSystemError: System call (e.g. socket, malloc) or external library call failed "
                  "or device error. \nLast error:\nError while creating shared memory segment /dev/shm/nccl-vzIpS6 "
                  "(size 9637888), error: No space left on device (28)")
    if scenario == "crash_p2p":
        return tb(base + [("sglang/srt/distributed/device_communicators/custom_all_reduce.py", 152, "__init__",
                           "handles, offsets = self._get_ipc_meta(self.meta)")],
                  "RuntimeError: CUDART error: peer access is not supported between these two devices")
    if scenario == "crash_arch":
        return tb(base + [("sglang/srt/model_executor/cuda_graph_runner.py", 512, "capture_one_batch_size",
                           "run_once()")],
                  "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\n"
                  "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                  "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                  "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    if scenario == "crash_driver":
        return tb(base + [("torch/cuda/__init__.py", 410, "_lazy_init", "torch._C._cuda_init()")],
                  "RuntimeError: The NVIDIA driver on your system is too old (found version 12080). Please update "
                  "your GPU driver by downloading and installing a new version from the URL: "
                  "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a "
                  "PyTorch version that has been compiled with your version of the CUDA driver.")
    # crash_scheduler / crash_scheduler_sigquit_first: a plain bug while loading weights.
    return tb(base + [("sglang/srt/models/deepseek_v2.py", 3121, "load_weights",
                       "param = params_dict[name]")],
              "KeyError: 'model.layers.61.mlp.experts.w13_weight_scale_inv'")


# The same refusal of the GPU's architecture as each layer words it (from the wheels' source and real logs).
ARCH_REFUSALS = {
    "cuda": (("sglang/srt/model_executor/cuda_graph_runner.py", 512, "capture_one_batch_size", "run_once()"),
             "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device"),
    "hip": (("sglang/srt/layers/layernorm.py", 85, "forward_cuda", "out = rmsnorm(x, self.weight.data, eps)"),
            "RuntimeError: HIP error: invalid device function"),
    "triton": (("triton/language/semantic.py", 1403, "_str_to_fp_type", "raise ValueError("),
               "ValueError: type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
               "('fp8e4b15', 'fp8e5')"),
    "flashinfer": (("flashinfer/cute_dsl/attention/compat.py", 41, "get_arch", "raise ValueError("),
                   "ValueError: Unsupported compute capability: 120"),
    "sglang": (("sglang/srt/multiplex/pdmux_context.py", 67, "get_sm_count", "raise ValueError("),
               "ValueError: Unsupported compute capability: 12.0"),
    "ptxas": (("triton/backends/nvidia/compiler.py", 420, "make_cubin", "raise PTXASError(error)"),
              "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
              "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'"),
}

# NCCL's lines before the exception when /dev/shm is too small for its shared-memory transport.
SHM_WARN = ("{host}:{pid}:{pid} [{rank}] misc/shmutils.cc:72 NCCL WARN Error: failed to extend "
            "/dev/shm/nccl-vzIpS6 to 9637892 bytes\n"
            "{host}:{pid}:{pid} [{rank}] NCCL INFO transport/shm.cc:114 -> 2\n")

# faulthandler's report of a SIGBUS in the weight loader (its frames follow the error, innermost first).
SIGBUS_FATAL = ("Fatal Python error: Bus error\n\n"
                "Thread 0x00007f3a2dfff640 (most recent call first):\n"
                '  File "%s/safetensors/torch.py", line 313 in get_tensor\n'
                '  File "%s/sglang/srt/model_loader/weight_utils.py", line 729 in safetensors_weights_iterator\n'
                '  File "%s/sglang/srt/model_loader/loader.py", line 633 in load_model\n' % (SITE, SITE, SITE))

WATCHDOG = "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)"

IMPORT_ERROR = (
    "[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
    + tb([("sglang/launch_server.py", 7, "<module>", "from sglang.srt.server_args import prepare_server_args"),
          ("sgl_kernel/__init__.py", 5, "<module>", "from sgl_kernel import common_ops")],
         "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"))


def model_not_found(path):
    return tb([("sglang/launch_server.py", 32, "<module>", "server_args = prepare_server_args(sys.argv[1:])"),
               ("transformers/utils/hub.py", 479, "cached_files", "raise OSError(")],
              "OSError: %s is not a local folder and is not a valid model identifier listed on "
              "'https://huggingface.co/models'\nIf this is a private repository, make sure to pass a token having "
              "permission to this repo either by logging in with `hf auth login` or by passing `token=<your_token>`"
              % path)


CHILD_FATAL = ("Fatal Python error: Segmentation fault\n\n"
               "Thread 0x00007f3a2dfff640 (most recent call first):\n"
               '  File "%s/torch/distributed/distributed_c10d.py", line 4811 in barrier\n' % SITE)


def warmup_error(body):
    return tb([("sglang/srt/entrypoints/http_server.py", 1381, "_execute_server_warmup",
                'assert res.status_code == 200, f"{res.text}"')],
              "AssertionError: " + body)


# Lines of the start-up whose wording moved between versions, each as the wheel's format string writes it
# (tests/unit/tools/test_double_startup_vs_real.py holds them to the wheels and to the real H200 capture).
def load_weight_end(elapsed):
    """model_runner.py: ``dtype=`` up to 0.5.9; from 0.5.10 a quantization word takes its place (none here)."""
    dtype = "" if at_least("0.5.10") else "dtype=torch.bfloat16, "
    return ("Load weight end. elapsed=%.2f s, type=DeepseekV3ForCausalLM, %savail mem=24.61 GB, mem usage=69.56 GB."
            % (elapsed, dtype))


def kv_cache_line():
    """memory_pool.py's MLA pool line: ``dtype:`` first from 0.5.15; 0.5.23 logs no such line (None)."""
    if at_least("0.5.23"):
        return None
    dtype = "dtype: torch.bfloat16, " if at_least("0.5.15") else ""
    return "KV Cache is allocated. %s#tokens: 412160, KV size: 14.47 GB" % dtype


def tree_cache_line():
    """mem_cache/registry.py, from 0.5.15 (None before)."""
    if at_least("0.5.23"):
        return ("Tree cache initialized: source=default impl=RadixCache hybrid_swa=False hybrid_ssm=False "
                "hicache_attached=False")
    if at_least("0.5.15"):
        return ("Tree cache initialized: source=default impl=RadixCache hybrid_swa=False hybrid_ssm=False "
                "hierarchical=False streaming_wrapped=False")
    return None


def weights_bar_desc():
    """The shard loader's tqdm desc: multi-threaded loading is the default from 0.5.10 (model_loader/loader.py)."""
    return "Multi-thread loading shards" if at_least("0.5.10") else "Loading safetensors checkpoint shards"
