# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why an SGLang server failed: a table of log signatures.

Each signature is (category, regex, remedy, priority, strong).  The most
specific cause wins wherever it stands in the log: since 0.5.10 the generic
banners (``Received sigquit ...``, ``Scheduler hit an exception``) are printed
*before* the traceback that holds the cause, so order cannot decide.  Higher
priority wins; between equals the earliest line wins (later lines are mostly
other ranks reacting to the first failure).

``strong`` marks lines that mean the start-up is over even while the parent
process lingers (a child died); weak ones (an ImportError that may be a logged
fallback) only explain a failure, they never end a wait on their own.

Three general rules sit on top of the table:

* Notices are never causes: a line that is a warning or a logged fallback
  (``Ignore import error when loading ...``, ``Proceeding without ...``,
  ``UserWarning``, ``To silence this warning``) is skipped by the built-ins.
* A bare exception line (``ValueError: ...``) takes its category from where it
  was raised: the innermost traceback frame above it that FRAME_RULES knows
  (``server_args.py`` / ``arg_groups`` -> bad_args, ``huggingface_hub`` ->
  model_not_found, ``torch/distributed`` -> nccl, a JIT builder -> jit_build,
  the warm-up thread -> warmup_failure); failing that, a message that names a
  ``--flag`` is an argument problem.
* The generic ``oom`` category is resolved from the stage the line was seen in:
  out of memory while loading weights, allocating the KV cache, capturing CUDA
  graphs or serving the first requests needs different fixes.
* A bare exception whose message says GPU memory ran short is a memory failure
  (resolved like ``oom``, first by what the message says it was short for),
  even when it names a flag; one raised where the draft runs or loads
  (``speculative``/``eagle``/``draft`` frames) with a tensor shape that does not
  fit is ``draft_mismatch``.
* When the log names a path the launch gave to a flag (its ``server_args=`` line,
  or the draft's code path in the traceback), the remedy names that flag.
* The cause, not the frame: the deepest exception's type and message decide; a frame
  only places a bare exception whose message says nothing better.  A runtime check
  (``Check failed``, ``must be``, ``mismatch``) raised from a JIT kernel's source path is
  no failed build.  A message-less exception quotes the ``assert``/``raise`` line the
  traceback echoed above it, and is classified with it.
* Every collective SGLang sets up (NCCL, Gloo, DeepEP/NVSHMEM) is a communication failure
  (``nccl``); the KV transfer engines (Mooncake, NIXL/UCX, RDMA; PD disaggregation and the
  HiCache store) are ``transfer_engine``; each with that transport's remedy, and a crash signal
  whose native backtrace runs through its library is one too.  An ``nccl`` verdict quotes the
  first line that names the failing peer (its address or rank) when the log has one.
* Known-terminal lines only: a line a server survives - a C++ transport's logged error (glog
  ``E0326 hh:mm:ss ... file.cpp:N]``), a per-request error (``for request``, ``KVTransferError``)
  or a retried one (``retry``) - is never ``strong``: it ends no wait while the server makes
  progress, ranks below every raised exception, and is counted as a warning beside the verdict.
* A port taken is ``port_in_use`` under any flag's name (``metrics_port``, ``nccl_port``,
  ``dist_init``), and the remedy names that flag.

The categories live in ``CATEGORY_DOCS`` here and nowhere else; the module's
documentation is checked against it by a unit test.
"""

from __future__ import annotations

import os
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import in_order
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import StageTracker

# The one list of categories (name, what it means; no ": " in it, the module docs quote it).  Order: memory, hardware and
# drivers, build and install, arguments and model, runtime, unknown.
CATEGORY_DOCS = (
    ("oom_weights", "GPU out of memory before or while loading the weights"),
    ("oom_kv", "no GPU memory left for the KV cache / request pools"),
    ("oom_cuda_graph", "GPU out of memory while capturing CUDA graphs"),
    ("oom_runtime", "GPU out of memory in the warm-up or first requests (activations)"),
    ("host_oom", "host RAM exhausted, a process SIGKILLed by the OOM killer or malloc failed"),
    ("shm_exhausted", "shared memory (/dev/shm) too small for NCCL or torch IPC (a container's 64 MB default)"),
    ("driver_mismatch", "NVIDIA driver older than the CUDA runtime, or no driver"),
    ("gpu_hardware", "GPU hardware fault or GPU unavailable (ECC, Xid, fell off the bus, busy)"),
    ("cuda_error", "a CUDA kernel faulted (illegal memory access, device-side assert)"),
    ("arch_unsupported", "kernels not built for this GPU architecture"),
    ("jit_build", "a kernel JIT build failed (ninja, nvcc, gcc, missing headers)"),
    ("import_error", "a Python package or shared library is missing or mismatched"),
    ("nccl", "a communication set-up or collective failed (NCCL, Gloo, torch.distributed, DeepEP or NVSHMEM)"),
    ("transfer_engine", "the KV transfer engine failed (Mooncake, NIXL or UCX over RDMA - PD disaggregation, the HiCache "
                        "store) or its peer session is gone"),
    ("port_in_use", "a port the server binds (HTTP, dist-init, internal) is taken"),
    ("bad_args", "launch arguments rejected (argparse or ServerArgs checks)"),
    ("model_not_found", "model path or Hub repo id does not exist or lacks files"),
    ("model_access", "Hub refused access (gated, 401, no token, offline, no network)"),
    ("model_unsupported", "architecture not supported by this SGLang / transformers"),
    ("tokenizer", "the tokenizer files are missing, unreadable or corrupt (the model itself was found)"),
    ("chat_template", "ready, but a 1-token chat completion fails (the model's chat template does not render)"),
    ("processor", "the multimodal model's processor is missing or did not register (its import failed, or this SGLang "
                  "lacks it)"),
    ("checkpoint_corrupt", "a weight file is missing, truncated or corrupt (the checkpoint is not whole)"),
    ("draft_mismatch", "the draft model's weights do not fit the target (a draft trained for another model)"),
    ("weights_sigbus", "a Bus error (SIGBUS) while the weights were read through mmap (a truncated or changing file, "
                       "failing or network storage)"),
    ("warmup_failure", "the server's own warm-up request failed after the model loaded"),
    ("watchdog_hang", "a start-up step hung until a watchdog (SGLang's or NCCL's) ended it, the stage says which"),
    ("scheduler_exception", "a scheduler process raised, the cause is in the traceback"),
    ("unknown", "nothing recognised, key_line quotes the most telling line"),
)
CATEGORIES = tuple(name for name, _desc in CATEGORY_DOCS)

R_CG = ("CUDA graph capture ran out of GPU memory: lower --mem-fraction-static "
        "(e.g. 0.8), lower --cuda-graph-max-bs (0.5.23: --cuda-graph-max-bs-decode), "
        "or --disable-cuda-graph as a last resort")
R_KV = ("not enough GPU memory left for the KV cache: raise --mem-fraction-static, "
        "shorten --context-length, use --kv-cache-dtype fp8_e4m3, or add GPUs (--tp)")
R_REQ = ("the request pool is exhausted: lower --max-running-requests, or give the "
         "KV cache more memory (--mem-fraction-static)")
R_W = ("the weights do not fit: use more GPUs (--tp), a quantized checkpoint, or "
       "free the GPUs (nvidia-smi shows other processes)")
R_RUN = ("out of GPU memory for activations after start-up: lower --mem-fraction-static "
         "(leaves more room outside the KV cache), --chunked-prefill-size and --max-running-requests")
R_HOSTOOM = ("host memory ran out (a process was SIGKILLed or malloc failed): check "
             "dmesg -T | grep -i oom; add host RAM/swap, use fewer ranks per host, or a larger /dev/shm")
R_NCCL = ("NCCL failed between ranks: rerun with NCCL_DEBUG=INFO; on PCIe boxes try "
          "NCCL_P2P_DISABLE=1 and --disable-custom-all-reduce; check that every node "
          "reaches --dist-init-addr")
R_ARCH = ("the kernels were not built for this GPU (e.g. sm_120): install an SGLang / "
          "sglang-kernel / torch build for this architecture, pick another "
          "--attention-backend (triton), or set TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas")
R_JIT = ("a kernel JIT build failed: install the CUDA toolkit that matches torch (nvcc and its "
         "headers), set CUDA_HOME, install ninja and python3-dev, clear ~/.cache/flashinfer")
R_IMPORT = ("a Python package or CUDA library is missing or mismatched: reinstall "
            "sglang-kernel / flashinfer / torch for this CUDA version and check LD_LIBRARY_PATH")
R_DRV = ("the NVIDIA driver is older than the CUDA runtime in the venv: upgrade the "
         "driver or install torch/sglang built for the driver's CUDA version")
R_CUDA = ("a CUDA kernel faulted: rerun with CUDA_LAUNCH_BLOCKING=1 to find it; try another "
          "--attention-backend, --disable-cuda-graph, or another SGLang version")
R_HW = ("the GPU reported a hardware fault or is unavailable: check nvidia-smi -q and "
        "dmesg for Xid/ECC, drain the node, reset or replace the GPU")
R_ARGS = "fix the launch arguments: run sglang.launch_server --help for this version"
R_TRUST = "the model ships its own code: add --trust-remote-code"
R_GPUS = ("the launch asks for more GPUs than this host shows: lower --tp-size (x --dp-size / --pp-size), "
          "or check CUDA_VISIBLE_DEVICES and --base-gpu-id")
R_PORT = ("the port is taken: stop the other server (ss -ltnp), or change --port / "
          "--dist-init-addr (internal ports are dist-init port +1..+5)")
R_SCHED = ("a scheduler process raised: read the traceback in log_tail; rerun with "
           "--log-level debug if it is unclear")
R_WARM = ("the warm-up request failed after the model loaded: read the warm-up "
          "traceback; try --attention-backend triton --sampling-backend pytorch")
R_MODEL = ("the model was not found: check --model-path (a local folder with config.json; "
           "an absolute path that does not exist is taken for a Hub repo id) or the Hub repo id")
R_ACCESS = ("the model Hub refused access: set HF_TOKEN for an account that accepted the "
            "model's licence (gated repos), check network access to huggingface.co, or use a "
            "local --model-path (HF_HUB_OFFLINE=1 needs the files in the cache)")
R_CKPT = ("the checkpoint is not whole (a shard missing, truncated or corrupt, as an interrupted copy leaves it): "
          "re-stage %s from its source and check it against the source's size and sha256")
R_DRAFT = ("the draft's weights do not fit the target: it was trained for another model; check the draft config's "
           "target hidden size, vocab size and aux layer ids against the target's config, or use the draft made for "
           "this target (--speculative-draft-model-path)")
R_PATH_FLAG = ("the path given to %s (%s) was not found or lacks files: check that value (a local folder with "
               "config.json; an absolute path that does not exist is taken for a Hub repo id)")
R_UNSUP = ("this SGLang / transformers does not know the model's architecture: check config.json's architectures "
           "(llmserve.sglang.model_verify names the nearest ones this SGLang supports), upgrade sglang and "
           "transformers, or try --model-impl transformers (--trust-remote-code for a model that ships its code)")
R_TOKENIZER = ("the tokenizer could not be loaded: put the tokenizer files (tokenizer.json or tokenizer.model, with "
               "tokenizer_config.json) beside config.json, readable by the server user, or point --tokenizer-path "
               "at a directory that has them (--skip-tokenizer-init when clients send token ids)")
R_WATCHDOG = ("a step hung until the watchdog ended it: py-spy dump --pid <scheduler pid> shows where; with peers "
              "on PCIe try --disable-custom-all-reduce and NCCL_P2P_DISABLE=1 and run the gpu_health gate (ACS, "
              "IOMMU); raise --watchdog-timeout only if the step is just slow")
R_P2P = ("the GPUs cannot reach each other peer-to-peer (a PCIe box: consumer cards, ACS or the IOMMU in the way): "
         "--disable-custom-all-reduce, NCCL_P2P_DISABLE=1 if NCCL fails too, and the gpu_health gate's ACS/IOMMU checks")
R_SHM = ("/dev/shm is too small for NCCL's or torch's shared memory (a container's default is 64 MB): run the "
         "container with --shm-size=16g (or --ipc=host), or grow the host's /dev/shm (mount -o remount,size=16G /dev/shm)")
R_SIGBUS = ("a Bus error (SIGBUS) while reading %s through mmap: the file is truncated, was rewritten while loaded, "
            "or its storage failed (dmesg for I/O errors; network mounts). Check its size and sha256 against the source "
            "and copy the weights to local disk")
R_FABRIC = ("CUDA is not initialised on this host (error 802): on NVSwitch systems nvidia-fabricmanager must run at "
            "the driver's exact version (systemctl status nvidia-fabricmanager); otherwise reset or reboot the GPUs")
R_JIT_CACHE = ("a kernel cache entry is broken or missing (a cut write, ranks racing on one cache): clear ~/.triton/cache, "
               "~/.cache/flashinfer and /tmp/torchinductor_* for the service user, then start again")
R_DEEPEP = ("DeepEP (the MoE all-to-all) could not set up its buffers between the ranks: check that every GPU reaches its "
            "peers (nvidia-smi topo -m; NVSHMEM/IBGDA and the RDMA NICs across nodes), that deep_ep was built for this torch and "
            "CUDA, and try --moe-a2a-backend none to start without it")
R_DEEPEP_TOKENS = ("a captured batch exceeds DeepEP's dispatch limit: lower --cuda-graph-max-bs (and --max-running-requests) "
                   "or raise SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK to cover bs x tokens per request (draft tokens "
                   "included); the banner's memory advice does not apply")
R_MOONCAKE = ("Mooncake's transfer engine failed (PD disaggregation, HiCache or its store): check the RDMA devices "
              "(ibv_devinfo, --disaggregation-ib-device), that the server user may register GPU memory (nvidia-peermem, "
              "ulimit -l), the metadata server, or MOONCAKE_PROTOCOL=tcp to start without RDMA")
R_NIXL = ("NIXL/UCX could not set up the KV transfer: check the RDMA devices (ibv_devinfo, UCX_NET_DEVICES), UCX_TLS, "
          "GPUDirect RDMA (nvidia-peermem), or use --disaggregation-transfer-backend mooncake")
R_RDMA = ("no usable RDMA NIC for the transfer engine: check ibv_devinfo (port ACTIVE), the device names given "
          "(--disaggregation-ib-device / MOONCAKE_DEVICE) and the GID index, or use TCP (MOONCAKE_PROTOCOL=tcp)")
R_KV_PEER = ("the KV transfer's peer session is gone (a prefill or decode instance died or restarted, or the nodes "
             "run different mooncake-transfer-engine versions): read the peer's log, pin one transfer engine version "
             "on every node, check the RDMA NICs (--disaggregation-ib-device)")
R_PROCESSOR = ("the multimodal processor for this model did not register: its import failed (the 'import error' notices "
               "above name the missing piece, e.g. FA3 in sgl_kernel) or this SGLang lacks it; fix that import or "
               "upgrade SGLang, and check config.json's architectures (--model-path)")
R_TRANSFORMERS = ("SGLang's processor/config registration does not fit the installed transformers (5.x changed "
                  "AutoImageProcessor.register): install the transformers version this SGLang pins (pip show sglang), "
                  "or upgrade SGLang")
R_REASONING = ("the --reasoning-parser given does not fit this model's tokenizer (its think tokens are not single tokens "
               "of the vocabulary): use the parser made for this model family, or drop --reasoning-parser")
R_RUN_PREFILL = ("a batch after start-up found no KV room (a long prefill, not the start-up's sizing): lower "
                 "--chunked-prefill-size, --max-prefill-tokens and --max-running-requests, or give the KV cache more "
                 "memory (--mem-fraction-static)")
R_HW_REBOOT = ("the GPU's firmware stopped answering (GSP heartbeat, RC watchdog, Xid 119/154/175): drain this host and "
               "reboot it - a relaunch on it fails again; run the gpu_health gate before putting it back")
R_PORT_FLAG = ("the port given to %s%s is taken: stop the other process holding it (ss -ltnp), or give %s a free port "
               "(also check --port and the dist-init ports +1..+5)")
R_MODEL_TYPE = ("config.json%s has no model_type (or one transformers does not know): add the architecture's model_type "
                "(llama for LlamaForCausalLM and its EAGLE-3 drafts), convert a draft from another exporter, or upgrade "
                "transformers")
R_MODEL_FEATURE = ("this SGLang's %s lacks %s, which the feature turned on needs (EAGLE-3 speculation, LoRA, ...): use a "
                   "draft/adapter made for a supported model class, turn the feature off, or upgrade SGLang")
R_LORA = ("LoRA set-up failed for this model: an adapter targets a module this SGLang's LoRA does not support here; check "
          "the adapters' target_modules (--lora-paths) against --lora-target-modules, drop the unsupported modules, and "
          "check --max-lora-rank")
R_QUANT = ("the checkpoint's quantization does not fit the setting: leave --quantization unset to use the checkpoint's own "
           "(or set the matching method), and pick a --moe-runner-backend / --fp8-gemm-backend that handles these weights")
R_VOCAB = ("a kernel indexed past a table (a token id beyond a vocabulary): check the tokenizer's vocabulary against the "
           "model's vocab_size (--tokenizer-path, added special tokens); rerun with CUDA_LAUNCH_BLOCKING=1 to find the kernel")
R_VOCAB_DRAFT = ("a kernel indexed past a table (a token id beyond a vocabulary) with speculation on: the EAGLE draft's "
                 "vocabulary (vocab_size, draft_vocab_size and its d2t/t2d token map) must fit the target's; check the draft's "
                 "config against the target (--speculative-draft-model-path), else the tokenizer (--tokenizer-path)")
R_KERNEL_COMPILE = ("a Triton kernel did not compile for this dtype/GPU (a kernel bug, not the toolchain): the lines under "
                    "'CompilationError: at L:C' name the kernel; try another --attention-backend or --sampling-backend, "
                    "another --dtype, or another SGLang version")
R_COMPILE = ("torch.compile failed while tracing or compiling the model: start without --enable-torch-compile, or "
             "use the torch version this SGLang release pins")

# A GPU architecture named as unsupported, whichever layer words it: a noun that names an architecture (compute
# capability, sm_NN, gfxNNNN, "this/GPU/device architecture", a generation name) next to a refusal, in either order.
# "Model architectures [...]" is not one (no qualifier): that is model_unsupported.
_ARCH_NOUN = (r"(?:[Cc]ompute[ _][Cc]apabilit(?:y|ies)|\bcc ?\d{2,3}\b|\bsm_?\d{2,3}[af]?\b|\bSM ?\d{2,3}[af]?\b|"
              r"\bgfx\d{3,4}\w*|\b(?:GPU|gpu|device|hardware|CUDA|cuda|this|current|target|the GPU's) arch(?:itecture)?s?\b|"
              r"\b(?:[Cc]urrent|[Tt]his) (?:platform|GPU|device)\b|"
              r"\b(?:Volta|Turing|Ampere|Ada(?: Lovelace)?|Hopper|Blackwell)\b)")
_ARCH_NEG = r"(?:not (?:yet )?supported|unsupported|not compatible|incompatible|does(?: not|n't) support)"
_ARCH_LIMIT = (r"(?:[Nn]ot (?:yet )?supported|[Uu]nsupported|does(?: not|n't) support|only (?:supports?|supported|available|"
               r"works|runs)|requires?|needs?)")
_ARCH_RE = (r"no kernel image is available|invalid device function|hipErrorInvalidDeviceFunction|"
            r"cudaErrorInvalidDeviceFunction|device kernel image is invalid|ptxas fatal\s*:.*sm_\d+a?|"
            r"is not compatible with the current PyTorch installation|OutOfResources: out of resource: shared memory|"
            r"[Uu]nsupported (?:GPU |gpu |CUDA |cuda )?arch(?:itecture)?\b|"
            + _ARCH_NOUN + r"[^;\n]{0,60}?\b(?:" + _ARCH_NEG + r"|requires? CUDA\b)|"
            + _ARCH_LIMIT + r"\b[^;\n]{0,60}?" + _ARCH_NOUN)
# Kernel caches (Triton, FlashInfer, Inductor, tvm-ffi): a broken entry there is no model or GPU problem.
_KERNEL_CACHE = r"(?:/\.triton/cache\b|\.cache/flashinfer\b|/torchinductor_\w+|\.cache/tvm-ffi|triton/runtime/cache\.py)"

# priority: 90 exact causes, 80 resolved-by-stage, 75 host memory, 50 weak hints,
# 35 attributed by traceback frame, 30 bare exception lines, 10-12 banners.
# "generic" (the 6th field) marks the bare-exception row that frame rules refine.
BUILTIN = [
    # The transports SGLang sets up besides NCCL (see the module docstring): the first error is the cause.
    ("bad_args", r"num_max_dispatch_tokens_per_rank", R_DEEPEP_TOKENS, 90, True),
    ("nccl", r"deep_ep\.cpp:\d+|EPException|DeepEP\b.{0,40}\b(?:[Ff]ailed|[Ee]rror)|nvshmem\w*.{0,40}(?:[Ff]ail|[Ee]rror)|"
             r"ibgda\.cpp\S*.{0,40}(?:[Ff]ail|[Ee]rror|Unable)", R_DEEPEP, 87, True),
    ("nccl", r"DevComm setup failed", R_NCCL, 87, True),
    ("nccl", r"NCCL exception\b", R_NCCL, 85, True),
    ("transfer_engine", r"Mooncake\b[^\n]{0,60}\b(?:[Ff]ailed|[Ee]rror)|transfer_task\.cpp\S*\] Failed to complete transfers|"
                        r"transfer_engine\w*\.cpp\S*\] Failed to", R_MOONCAKE, 87, True),
    ("transfer_engine", r"RdmaTransport: (?:No available RNIC|cannot initialize)|rdma_context\.cpp\S*\] Failed to (?:open device|register)|"
                        r"ibv_get_device_list failed|No IB devices found", R_RDMA, 87, True),
    # SGLang's Mooncake connector (disaggregation/mooncake/conn.py, 0.5.9-0.5.23) and the transfer engine's own lines.
    ("transfer_engine", r"Decode instance could be dead|mooncake session \S+ is not alive|Failed to get kvcache from prefill "
                        r"instance|KVTransferError|(?:Prefill|Decode) transfer failed for request", R_KV_PEER, 86, True),
    ("transfer_engine", r"Failed to submit all transfers|Worker: Process failed for slice|transport retry counter exceeded|"
                        r"Too many errors found in local RNIC|Context is not active|Device \d+ is not active|"
                        r"Memory region not registered|RdmaTransport: Failed to register memory|"
                        r"Mooncake Store Register Buffer Error|Launch mooncake store server timeout|"
                        r"Mooncake store is not initialized", R_MOONCAKE, 86, True),
    ("transfer_engine", r"[Ss]egment descriptor not found|Failed to get segment descriptor", R_KV_PEER, 84, True),
    ("transfer_engine", r"NIXL_ERR_\w+|nixlBackendError|nixl_agent\.cpp\S*\].{0,80}(?:[Ff]ail|[Ee]rror)|\bUCX\s+ERROR\b|"
                        r"UCX endpoint create failed|Unexpected UCX error|Can't register memory for|registerMem: registration failed",
     R_NIXL, 87, True),
    # reasoner_grammar_backend.py (0.5.15.post1, 0.5.23): the parser's think tokens are not single tokens here.
    ("bad_args", r"think_(?:start|end)_token\b.{0,120}?(?:must encode to exactly one token|could not be encoded by the "
                 r"tokenizer)", R_REASONING, 89, True),
    # multimodal_processor.py (0.5.9-0.5.23): no processor for the model's architecture.
    ("processor", r"No processor registered for architecture|Cannot find corresponding multimodal processor|"
                  r"[Pp]rocessor (?:is )?not registered", R_PROCESSOR, 88, True),
    # mem_cache common.py / allocation.py (0.5.9-0.5.23): a batch after start-up found no KV room.
    ("oom_runtime", r"(?:Prefill|Decode) out of memory\. Try to lower your batch size", R_RUN_PREFILL, 89, True),
    # Blackwell's firmware stops answering (open-gpu-kernel-modules 1080, 1111, 1159, 1200): only a reboot recovers.
    ("gpu_hardware", r"GSP RM heartbeat timed out|RC watchdog: GPU is probably locked|Timeout waiting for RISC-V to halt|"
                     r"GPU Reset Required|\bXid \([^()]{0,40}\): (?:119|154|175)\b", R_HW_REBOOT, 92, True),
    # The HIP/HSA runtime's faults (ROCm); its "invalid device function" stays arch_unsupported (above).
    ("cuda_error", r"\bHIP error: (?!invalid device function|no kernel image)|HSA_STATUS_ERROR_\w+", R_CUDA, 84, True),
    # A port taken under any flag's name (metrics_port, nccl_port, ...): SGLang's own wait for a free port.
    ("port_in_use", r"\b\w*port\b(?: at)? \d+ is not available|\bis used by a process already\b", R_PORT, 88, True),
    # The model has no model_type (or one transformers does not know): a model problem, not a path.
    ("model_unsupported", r"Should have a .?model_type.? key|Unrecognized model in |[Uu]nknown model.?type\b|"
                          r"has no .?model_type|has model type .{1,60} but Transformers does not recognize", R_MODEL_TYPE, 88,
     True),
    # The model class lacks what a feature turned on needs (EAGLE-3 hidden-state capture, set_embed, ...).
    ("model_unsupported", r"AttributeError: '\w+For(?:CausalLM|ConditionalGeneration)\w*' object has no attribute '\w+'",
     R_MODEL_FEATURE, 84, True),
    # SGLang refuses the quantization setting, or a kernel's check refuses the checkpoint's quantized weights.
    ("bad_args", r"\b\w+Config only supports\b|[Uu]nknown quantization method|[Uu]nsupported quantization|"
                 r"Check the quantization config|Check failed: \w*weights?\w*\.dtype\(\)|"
                 r"\bweights?\b[^\n]{0,60}\bmust be (?:fp8|fp4|nvfp4|int4|int8|float8\w*)\b", R_QUANT, 84, True),
    # A message-less assert that names the architectures it runs on (the echoed source rides on the exception line).
    ("arch_unsupported", r"(?:Assertion|NotImplemented)Error: \(assert\b.*\bis_(?:sm_?\d+\w*|blackwell\w*|hopper\w*|"
                         r"cuda_arch\w*)\(", R_ARCH, 85, True),
    ("jit_build", r"CompilationError", R_KERNEL_COMPILE, 40, False),
    ("oom_cuda_graph", r"Capture (?:[\w ]+ )?(?:cuda|CUDA) graph failed:.*(?:out of memory|OutOfMemory)", R_CG, 95, True),
    ("oom_kv", r"Not enought? memory\. Please try to increase --mem-fraction-static", R_KV, 90, True),
    ("oom_kv", r"max_total_num_tokens=-?\d+.*(?:must be|should be) positive|KV cache pool is too small", R_KV, 88, True),
    ("oom_kv", r"(?<!\w)\w+ runs out of memory\.|Out of memory\. Please set a smaller number", R_REQ, 86, True),
    # A negative profiled token count is logged as a notice, but nothing fits: the failure follows.
    ("oom_kv", r"profiled value -\d+", R_KV, 70, False),
    # "<device> out of memory. Tried to allocate" is torch's allocator wording on every backend.
    ("oom", r"(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory|CUDA error: out of memory|"
            r"CUBLAS_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation|out of memory\. Tried to allocate)", None, 80, True),
    ("host_oom", r"scheduler died during initialization \(exit code: -9\)|\b[Ee]xit code: -9\b|"
                 r"\[Errno 12\] Cannot allocate memory|std::bad_alloc",
     R_HOSTOOM, 75, True),
    # /dev/shm full: NCCL's segment cannot be created or extended (NCCL 2.x words it several ways), torch's
    # shared-memory tensors cannot be written, the DataLoader's bus error that names shm.
    ("shm_exhausted",
     r"(?:creat|extend|allocat|open|map|truncat)\w* (?:the )?(?:shared memory segment|/dev/shm/)|/dev/shm/nccl-\S+|"
     r"posix_fallocate failed|insufficient shared memory \(shm\)|[Nn]o space left on device.{0,40}/dev/shm|"
     r"/dev/shm\S*.{0,40}(?:[Nn]o space left|[Bb]us error)|unable to (?:write to|open|mmap) (?:shared memory|file </torch_)",
     R_SHM, 89, True),
    # SIGBUS: a page of a mapped file (weights) or of a full /dev/shm could not be backed. Resolved like "oom":
    # by where it happened (the frames, else the stage) - see _SIGBUS_* below.
    ("sigbus", r"\bBus error\b|\bSIGBUS\b|\bsignal 7\b|[Ee]xit(?:ed with)? code:? -7\b|exitcode\s*:?\s*-7\b|"
               r"died with <Signals\.SIGBUS", None, 87, True),
    ("driver_mismatch",
     r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|"
     r"Driver/library version mismatch|unsupported display driver / cuda driver combination|"
     r"forward compatibility was attempted on non supported HW|Found no NVIDIA driver on your system", R_DRV, 90, True),
    ("gpu_hardware",
     r"uncorrectable ECC error|ECC error encountered|\bXid\b.{0,40}\b\d{1,3}\b|GPU has fallen off the bus|"
     r"CUDA-capable device\(s\) is/are busy or unavailable|GPU is lost|NVML_ERROR_GPU_IS_LOST", R_HW, 90, True),
    ("gpu_hardware", r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY", R_FABRIC, 91, True),
    ("cuda_error",
     r"illegal memory access was encountered|illegal instruction was encountered|misaligned address|"
     r"device-side assert triggered|unspecified launch failure|cudaErrorIllegalAddress|"
     r"the launch timed out and was terminated|cudaErrorLaunchTimeout|CUDA_ERROR_LAUNCH_TIMEOUT|"
     r"CUDA_ERROR_ILLEGAL_ADDRESS|CUBLAS_STATUS_EXECUTION_FAILED|"
     r"block: \[?\d+, ?\d+, ?\d+\]?, thread: \[\d+, ?\d+, ?\d+\] Assertion\b", R_CUDA, 86, True),
    # A kernel's own bounds check (a device printf; the kernel goes on, the failure follows).
    ("cuda_error", r"Out Of Bound Tensor access detected", R_CUDA, 50, False),
    # A GPU architecture named as unsupported, in any layer's words (see _ARCH_RE): the CUDA/HIP runtime's "no kernel
    # image" / "invalid device function", ptxas, torch, Triton, FlashInfer, sgl-kernel, SGLang.
    ("arch_unsupported", _ARCH_RE, R_ARCH, 85, True),
    # Triton's ptxas failing for the GPU: the "ptxas fatal" stderr often goes to a temp file, not the log.
    ("arch_unsupported", r"PTXASError|ptxas\W.*--gpu-name=sm_\d+a?\b.*returned non-zero exit status", R_ARCH, 84, True),
    ("jit_build",
     r"Ninja build failed|ninja: build stopped|Ninja is required to load C\+\+ extensions|"
     r"No such file or directory: '(?:ninja|nvcc|gcc|cc|c\+\+)'|Error building extension|Could not find nvcc|"
     r"nvcc: not found|CUDA_HOME environment variable is not set|nvcc fatal|ptxas error|"
     r"fatal error: [\w./+-]+\.(?:h|hpp|cuh): No such file or directory|"
     r"Command '\[[^\]]*(?:gcc|g\+\+|nvcc|ninja|clang)[^\]]*\]' returned non-zero exit status|"
     r"JIT (?:build|compil\w*) failed", R_JIT, 83, True),
    # The CUDA compiler's own fatal line is a failed build whatever it names (an arch it does not know: an old toolkit).
    ("jit_build", r"nvcc fatal\s*:", R_JIT, 86, True),
    ("jit_build", r"(?:No such file|FileNotFoundError|JSONDecodeError|[Cc]orrupt|[Tt]runcated|Permission denied|[Ee]rror|"
                  r"[Ff]ailed).{0,200}" + _KERNEL_CACHE + r"|" + _KERNEL_CACHE + r".{0,200}(?:No such file|"
                  r"JSONDecodeError|[Cc]orrupt|[Tt]runcated|Permission denied|[Ee]rror|[Ff]ailed)", R_JIT_CACHE, 82, True),
    ("nccl",
     r"NCCL error|nccl\w*Error|Failed to load NCCL library|ProcessGroup(?:NCCL|Gloo).*(?:[Tt]imeout|"
     r"[Ee]rror)|monitoredBarrier|gloo/transport/tcp|DistNetworkError|DistStoreError|DistBackendError|"
     r"NCCL communicator was aborted|connectFullMesh failed|\bNCCL WARN\b.*(?:[Ff]ail|[Ee]rror|refused|[Tt]imeout)|"
     r"client socket has timed out after \d+m?s while trying to connect|Timeout waiting for worker ports", R_NCCL, 85, True),
    ("nccl", r"\[c10d\].*\btimed out after \d+m?s", R_NCCL, 70, False),
    # Peer-to-peer between the GPUs refused: the custom all-reduce's IPC, NCCL's P2P transport, CUDA's peer access.
    ("nccl", r"peer access is not supported|cudaErrorPeerAccessUnsupported|PeerAccessUnsupported|"
             r"P2P (?:access )?(?:is )?not (?:supported|available)|transport/p2p\.cc\S* NCCL WARN|"
             r"custom_all_reduce\S*\W[^=\n]{0,160}?(?<!_)(?:[Ff]ail|[Ee]rror)", R_P2P, 87, True),
    # A step that never returned, ended by SGLang's watchdog or torch's NCCL watchdog: a hang, not a crash.
    ("watchdog_hang", r"Scheduler watchdog timeout|[Ww]atchdog timeout \(|Watchdog caught collective operation timeout|"
                      r"ran for \d+ milliseconds before timing out|[Ww]atchdog (?:timed out|fired|expired)",
     R_WATCHDOG, 86, True),
    ("port_in_use", r"EADDRINUSE", R_PORT, 88, True),
    ("port_in_use", r"failed to listen on any local network address", R_PORT, 86, True),
    ("port_in_use", r"\[Errno 98\]|[Aa]ddress already in use|ZMQError: Address in use|Port is already in use|"
                    r"error while attempting to bind on address|\b[Pp]ort\b.{0,80}\bis already in use|"
                    r"Could not bind port", R_PORT, 85, True),
    ("bad_args",
     r"(?:^|\s)\S+: error: (?:unrecognized arguments|ambiguous option|argument |the following arguments "
     r"are required|one of the arguments|invalid choice)|"
     r"(?:launch_server(?:\.py)?|__main__\.py|sglang(?:\.launch_server)?|sglang serve): error: |ArgumentTypeError: ",
     R_ARGS, 90, True),
    ("bad_args", r"invalid device ordinal|do you have enough GPUs\?", R_GPUS, 88, True),
    ("bad_args", r"set the option `?trust_remote_code=True`? to remove this error|"
                 r"requires you to execute the configuration file", R_TRUST, 88, True),
    ("model_access",
     r"GatedRepoError|Cannot access gated repo|You are trying to access a gated repo|is restricted\. You must "
     r"(?:have access to it and )?be authenticated|401 Client Error|Unauthorized for url|Invalid user token|"
     r"Invalid credentials in Authorization header|We couldn't connect to 'https://huggingface\.co'|"
     r"LocalEntryNotFoundError|OfflineModeIsEnabled|outgoing traffic has been disabled|"
     r"(?:ConnectionError|ConnectTimeout|ReadTimeout|MaxRetryError|NameResolutionError).*huggingface\.co",
     R_ACCESS, 88, True),
    ("model_not_found",
     r"is not a local folder and is not a valid model identifier|Repository Not Found|"
     r"RepositoryNotFoundError|HFValidationError|Repo id must be in the form|does not appear to have a file named \S+|"
     r"Can't load the configuration of|No such file or directory: ['\"][^'\"]*config\.json['\"]|"
     r"EntryNotFoundError|Incorrect path_or_model_id|404 Client Error|Cannot find any model weights", R_MODEL, 85, True),
    ("model_unsupported",
     r"Model architectures? \[[^\]]*\] (?:is|are) not supported|Unsupported architectures?: |"
     r"is not a registered model in the Transformers library|"
     r"has no SGlang implementation and the Transformers implementation is not compatible", R_UNSUP, 85, True),
    # transformers' tokenizer loaders (5.x tokenization_utils_base / _tokenizers / auto): the model was found
    ("tokenizer",
     r"Can't load tokenizer for|Couldn't instantiate the backend tokenizer|Unable to load vocabulary from file|"
     r"The backend tokenizer is not correctly initialized|specified in the tokenizer config was not found|"
     r"to build an AutoTokenizer|Failed to load tokenizer(?! (?:vocab )?for (?:auto-detection|template detection))|"
     r"does not contain a valid tokenizer file|is still TokenizersBackend after retries", R_TOKENIZER, 86, True),
    # The safetensors library's header checks (Debug names, and the lower-case Display wording of newer releases),
    # SGLang's own index check (0.5.23 weight_utils: "... references N shard file(s) missing from ..."), a weight
    # file the loader cannot open, and torch's reader on a cut .bin archive.
    ("checkpoint_corrupt",
     r"Error while deserializing header|SafetensorError|\b(?:HeaderTooLarge|HeaderTooSmall|"
     r"InvalidHeader(?:Start|Deserialization|Length)|MetadataIncompleteBuffer)\b|incomplete metadata|file not fully covered|"
     r"shard file\(s\) missing|No such file or directory: ['\"][^'\"]*\.(?:safetensors|bin)['\"]|"
     r"PytorchStreamReader failed reading zip archive", R_CKPT, 88, True),
    # Driver API symbols are cu + CamelCase (cuGreenCtxDestroy, cuModuleGetFunction); runtime (cuda*),
    # cuBLAS/cuDNN (cublas*, cudnn*) and C++ symbols (_Z...) are import problems, not the driver's.
    ("driver_mismatch", r"undefined symbol: cu[A-Z]\w+", R_DRV, 80, True),
    ("import_error",
     r"Could not load any common_ops library|is less than the minimum required version|"
     r"with minimum required version \S+ is not installed", R_IMPORT, 85, True),
    ("bad_args", r"^\s*usage: (?:launch_server(?:\.py)?|sglang\S*|python3? -m sglang\S*) \[-h\]", R_ARGS, 45, False),
    ("import_error", r"cannot open shared object file|undefined symbol: |"
                     r"^\W*(?:\(.*?\)\s*)?(?:[\w.]+\.)?(?:ImportError|ModuleNotFoundError): ", R_IMPORT, 50, False),
    ("scheduler_exception", r"Fatal Python error: |Segmentation fault \(core dumped\)|terminate called after throwing|"
                            r"Caught signal \d+ \(", R_SCHED, 60, True),
    ("warmup_failure", r"Initialization failed\. warmup error|warmup error:|Server warmup failed|"
                       r"[Ww]arm-?up (?:request )?failed", R_WARM, 40, True),
    ("scheduler_exception", r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception): |[\]|)]\s*(?:[\w.]+\.)?\w*(?:Error|Exception): |"
                            r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):?\s*$|^\s*[\w.]+\.[A-Z]\w*(?:Failed|Failure): ",
     R_SCHED, 30, False, True),
    # The failing child's own banner is more telling than the parent's reaction to it.
    ("scheduler_exception", r"\b\w+ hit an exception|"
                            r"scheduler died during initialization|Initialization failed\. Please see the error messages above",
     R_SCHED, 12, True),
    ("scheduler_exception",
     r"Received sigquit from a child proces|Child process unexpectedly failed|scheduler is dead|terminated with -?\d+|"
     r"[Ee]xit(?:ed with)? code:? -?\d+", R_SCHED, 10, True),
    ("scheduler_exception", r"Traceback \(most recent call last\)", R_SCHED, 5, False),
]

# Issue 45: a model's limits that slipped past the checks before launch (model_verify, server_preflight). The wording
# is SGLang's and torch's own: configs/model_config.py _derive_context_length in every verified wheel ("User-specified"
# for the target, "Target model's" for a draft), and torch's module __getattr__ on config.json's torch_dtype/dtype
# (read by transformers' configuration_utils, which the frame rules would take for model_not_found).
R_CONTEXT_LEN = ("--context-length %s is above the %s SGLang derives from the model's config.json: lower server_args "
                 "context-length to %s or less, or set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 in server_env "
                 "when the model really takes longer inputs (RoPE scaling)")
R_TORCH_DTYPE = ("config.json names a dtype the installed torch does not have (torch.%s): fix torch_dtype (or dtype) "
                 "in config.json to one torch has - bfloat16, float16, float32 - or auto")
# only the raised form: with the override set SGLang logs the same words as a warning, without "To allow overriding"
_CONTEXT_LEN_RE = re.compile(r"context_length \((\d+)\) is greater than the derived context_length \((\d+)\)"
                             r".{0,400}To allow overriding this maximum")
_TORCH_DTYPE_RE = re.compile(r"module 'torch' has no attribute '((?:b?float|u?int|complex|half|double|bool|qu?int|"
                             r"cfloat|chalf|cdouble)\w*)'")
BUILTIN.extend([
    ("bad_args", _CONTEXT_LEN_RE.pattern, R_CONTEXT_LEN, 91, True),
    ("model_unsupported", _TORCH_DTYPE_RE.pattern, R_TORCH_DTYPE, 91, True),
])


def _fill_limits(remedy, line):
    """R_CONTEXT_LEN and R_TORCH_DTYPE with the numbers and the name the line gives (None for another remedy)."""
    if remedy == R_CONTEXT_LEN:
        m = _CONTEXT_LEN_RE.search(line)
        return remedy % (m.group(1), m.group(2), m.group(2)) if m else None
    if remedy == R_TORCH_DTYPE:
        m = _TORCH_DTYPE_RE.search(line)
        return remedy % m.group(1) if m else None
    return None


# Where a bare exception was raised (the traceback frame just above it) says what it is.
FRAME_RULES = [
    ("import_error", r"sglang/srt/configs/utils\.py\S*, line \d+, in register_(?:image_)?processor", R_TRANSFORMERS),
    ("bad_args", r"sglang/srt/lora/", R_LORA),
    ("transfer_engine", r"sglang/srt/disaggregation/(?:mooncake|common)|mooncake", R_MOONCAKE),
    ("transfer_engine", r"sglang/srt/disaggregation/nixl|/nixl/", R_NIXL),
    ("nccl", r"deep_ep/|token_dispatcher/deepep", R_DEEPEP),
    ("warmup_failure", r"in _(?:wait_and_warmup|execute_server_warmup|run_server_warmup\w*)\b", R_WARM),
    ("bad_args", r"sglang/srt/(?:server_args\w*\.py|arg_groups/|configs/model_config\.py|utils/network\.py|"
                 r"layers/attention/attention_registry\.py)|/argparse\.py", R_ARGS),
    ("tokenizer", r"transformers/(?:tokenization_utils\w*|models/auto/tokenization_auto)\.py|"
                  r"hf_transformers_utils\.py\S*, line \d+, in get_tokenizer", R_TOKENIZER),
    ("model_not_found", r"huggingface_hub/|transformers/(?:configuration_utils|utils/hub|models/auto/)|"
                        r"hf_transformers_utils\.py", R_MODEL),
    ("nccl", r"sglang/srt/distributed/|torch/distributed/", R_NCCL),
    ("jit_build", r"triton/runtime/cache\.py|/\.triton/cache/|torchinductor_", R_JIT_CACHE),
    ("jit_build", r"torch/_dynamo/|torch/_inductor/", R_COMPILE),
    ("jit_build", r"/jit/|/jit_kernel/|cpp_extension\.py|tvm_ffi|triton/runtime/build\.py|triton/backends/nvidia/driver\.py", R_JIT),
]
FRAME_PRIORITY = 35
FLAG_PRIORITY = 33
_FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9]+(?:-[a-z0-9]+)*\b")
_FRAME_RE = re.compile(r"""File "([^"]+)", line \d+, in (\S+)""")
FRAME_REACH = 6  # lines (code, ^^^ markers) allowed between the last frame and its exception
MAX_FRAMES = 40

# Notices: never a cause, whatever words they hold.
NOISE_RE = re.compile(
    r"Ignore import error when loading|Proceeding without|To silence this warning|(?<!\w)\w+Warning: |"
    r"warnings\.warn\(|\bWARNING\b|Fail to set RLIMIT_NOFILE|Failed to load generation config|"
    r"\bdisabled: |[Ff]alling back to |, skipping\b")
# torch reports these only as a UserWarning (then falls back to CPU or fails later): a notice
# naming them still explains the failure, weakly and below any error line.
NOTICE_OK = ("driver_mismatch", "arch_unsupported")
NOTICE_PRIORITY = 55
# What to quote when nothing matched: the most telling line, not the last one.
_TELLING_RE = re.compile(r"(?i)\b(?:error|exception|fatal|failed|failure|abort(?:ed)?|killed|errno)\b")

_OOM_BY_STAGE = {
    "starting": "oom_weights", "init": "oom_weights", "dist_init": "oom_weights",
    "load_weights": "oom_weights", "kv_cache": "oom_kv", "cuda_graph": "oom_cuda_graph",
    "http": "oom_runtime", "warmup": "oom_runtime", "ready": "oom_runtime",
}
_REMEDY = {"oom_weights": R_W, "oom_kv": R_KV, "oom_cuda_graph": R_CG, "oom_runtime": R_RUN}
# The frame that ran out of memory says what it was allocating more exactly than the stage (a log cut
# above the stage banners, or a pool allocated before its banner is printed). Innermost frame first.
_OOM_FRAMES = [
    ("oom_cuda_graph", re.compile(r"graph_runner\.py")),
    ("oom_kv", re.compile(r"sglang/srt/mem_cache/")),
    ("oom_weights", re.compile(r"sglang/srt/model_loader/")),
]
_FRAME_COMPILED = [(c, re.compile(rx), r) for c, rx, r in FRAME_RULES]

# A bare exception whose message says memory ran short is a memory failure whatever flag it names (SGLang 0.5.15+:
# "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=..."): host memory
# is host_oom; otherwise what it was short for (the message's subject, else the frame, else the stage) picks oom_*.
_MEMORY_SHORT_RE = re.compile(r"(?i)\b(?:not enough|insufficient|leaves? no|no (?:free|available|remaining|more))\b"
                              r"[\w\s()/-]{0,40}?\bmemory\b")
_HOST_MEMORY_RE = re.compile(r"(?i)\b(?:host|CPU|pinned|system) memory\b")
_MEMORY_SUBJECT = [("oom_kv", re.compile(r"(?i)KV[ -]?cache|KV pool|token pool|req_to_token|state cache")),
                   ("oom_cuda_graph", re.compile(r"(?i)cuda[ -]?graph"))]
# A tensor shape that does not fit, raised where the draft model runs or loads: the draft was made for another target.
_SHAPE_RE = re.compile(r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\)|size mismatch for \S+|"
                       r"shapes cannot be multiplied|copying a param with shape")
_DRAFT_FRAME_RE = re.compile(r"(?i)speculative|eagle|draft")
# A path the log names, given to a launch flag (SGLang logs server_args=ServerArgs(model_path='...', ...)).
_SERVER_ARGS_PATH_RE = re.compile(r"\b(\w*(?:_path|_dir|chat_template))='([^']+)'")
_WEIGHT_FILE_RE = re.compile(r"(?<![\w./-])[\w./-]*(?<=[\w-])\.(?:safetensors|bin|pt|pth)\b(?!\.index)")
DRAFT_FLAG = "--speculative-draft-model-path"
# A SIGBUS is resolved by where it happened: NCCL/torch shared memory on a full /dev/shm, or a mapped weight file.
_SIGBUS_FRAMES = [("shm_exhausted", re.compile(r"torch/distributed/|sglang/srt/distributed/|pynccl|custom_all_reduce|"
                                               r"multiprocessing/(?:shared_memory|reduction)|/dev/shm")),
                  ("weights_sigbus", re.compile(r"safetensors|model_loader/|weight_utils|torch/serialization\.py"))]
_SHM_WORDS_RE = re.compile(r"/dev/shm|shared memory|\bshm\b")
# Stages where only a collective (NCCL's shared-memory transport between local ranks) maps new pages.
_SIGBUS_SHM_STAGES = ("dist_init", "cuda_graph", "http", "warmup", "ready")
# The launch's parallel layout, from SGLang's server_args line: whether the ranks have peers at all.
_LAUNCH_INT_RE = re.compile(r"\b(tp_size|pp_size|dp_size|ep_size|nnodes|node_rank|tensor_parallel_size|"
                            r"pipeline_parallel_size)=(\d+)")
_LAUNCH_ALIASES = {"tensor_parallel_size": "tp_size", "pipeline_parallel_size": "pp_size"}  # older dest names
# A flattened paste may carry the raised exception's own line right after the echo of the raise.
_ECHO_TAIL_RE = re.compile(r"(?<=\s)(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception): \S")
# A non-frame line naming a source file (a paraphrased or foreign traceback: "... in triton/runtime/cache.py, f").
# (Each pattern that scans a run of path characters starts only where the run starts: linear, not quadratic.)
_LOCATION_RE = re.compile(r"(?<![\w/.-])/*[\w.-]+/[\w/.-]+\.py\b")
# A runtime check's wording: raised from a JIT kernel's source path it is still no failed build.
_RUNTIME_CHECK_RE = re.compile(r"Check failed|\bmust be\b|\bexpected\b.{0,60}\bgot\b|[Mm]ismatch|\bout of (?:range|bounds)\b")
_JIT_BUILD_REMEDIES = (R_JIT, R_COMPILE)
# A message-less exception line: the echoed raise/assert above it says what it is.
_BARE_EXC_RE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\s*$")
# A crash signal whose native backtrace runs through a transport's library is that transport failing.
_SIGNAL_RE = re.compile(r"Caught signal \d+|Segmentation fault|Fatal Python error: (?:Segmentation|Aborted|Bus)")
_TRANSPORT_LIBS = [(re.compile(r"nixl|libuc[pst]\b|libuc[pst][-.]|libibverbs|libmlx5"), "transfer_engine", R_NIXL),
                   (re.compile(r"mooncake|libtransfer_engine"), "transfer_engine", R_MOONCAKE),
                   (re.compile(r"deep_ep|libnvshmem|nvshmem"), "nccl", R_DEEPEP),
                   (re.compile(r"libnccl|libgloo"), "nccl", R_NCCL)]
# Lines a server survives (see the module docstring): a C++ transport's logged error (glog: severity, MMDD, time,
# thread, file:line]), a per-request error, a retried step. Never strong; they rank below any raised exception.
_SURVIVABLE_RE = re.compile(r"^\s*[EWI]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w./-]+:\d+\]|\bfor request\b|\breq\.rid=|"
                            r"\bbootstrap_room=|(?i:\bretr(?:y|ying|ied|ies)\b)")
# ... but a raised exception is terminal whatever it says ("RuntimeError: ... failed after 3 retries").
_RAISED_RE = re.compile(r"^\W*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception): ")
SURVIVABLE_SHIFT, SURVIVABLE_FLOOR = 70, 13
MAX_WARNINGS = 5  # warning lines kept (all are counted)
# An NCCL failure's peer: the first error line naming the failing address (host<port>, ip:port) or rank.
_PEER_RE = re.compile(r"(?:\.\.\.|\]|(?<![\w-])[\w-]+)\s*<\d+>|(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}:\d{2,5}\b|\b[Rr]ank \d+\b")
_PEER_TROUBLE_RE = re.compile(r"(?i)fail|error|refused|reset|closed|timed? ?out|unreachable|no route|abort|exit")
# An index past a table (a token id beyond a vocabulary), asserted on the device.
_INDEX_ASSERT_RE = re.compile(r"srcIndex < srcSelectDimSize|index out of bounds|indexSelect|[Ii]ndex \w* ?is out of bounds|"
                              r"idx_dim >= 0 && idx_dim < index_size|ind >= 0 && ind < ind_dim_size")
_SPEC_RE = re.compile(r"speculative_algorithm['\"]?\s*[:=]\s*['\"](?:EAGLE|NEXTN|STANDALONE|DFLASH|DSPARK)|"
                      r"speculative_draft_model_path['\"]?\s*[:=]\s*['\"][^'\"]+|--speculative-draft-model-path\b")
_PORT_NAME_RE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)*_port)\b(?:\s+at)?\s*[=:]?\s*(\d{2,5})?")
_MODEL_IN_RE = re.compile(r"Unrecognized model in (\S+?)\.?(?:\s|$)")
_FEATURE_RE = re.compile(r"'(\w+)' object has no attribute '(\w+)'")


def _excerpt(line, m, width=500):
    """The line, or for a long one (a flattened paste) the window around the match."""
    text = line.strip()
    if len(text) <= width:
        return text
    start = max(0, min(m.start() - (len(line) - len(line.lstrip())) - width // 4, len(text) - width))
    return text[start:start + width]


class Signature:
    __slots__ = ("category", "rx", "remedy", "priority", "strong", "generic", "user")

    def __init__(self, category, regex, remedy, priority, strong, generic=False, user=False):
        self.category = category
        self.rx = re.compile(regex)
        self.remedy = remedy
        self.priority = priority
        self.strong = strong
        self.generic = generic
        self.user = user


def build_table(extra_patterns=None):
    """Built-ins plus user patterns; user patterns outrank every built-in."""
    table = []
    for i, p in enumerate(extra_patterns or []):
        table.append(Signature(p.get("category") or "unknown", p["regex"],
                               p.get("remedy") or "see log_tail",
                               1000 - i, bool(p.get("strong", True)), user=True))
    table.extend(Signature(*row) for row in BUILTIN)
    return table


# A traceback's echo of the raising source line (``raise RuntimeError(f"NCCL
# error: {error_str}")``) carries the message template, not the message: the
# built-ins skip it so the real message line below becomes the key line.
_SOURCE_ECHO_RE = re.compile(r"^\s*(?:raise|assert)\s")


# A log line is untrusted and can be megabytes (a base64 blob, a progress bar with no newline): the classifier matches
# its first CLIP_HEAD and last CLIP_TAIL characters, so a line costs bounded time whatever pattern reads it.
CLIP_HEAD, CLIP_TAIL = 3072, 1024


def clip(line):
    """``line`` itself, or its head and tail around a marker that says how much was left out."""
    if len(line) <= CLIP_HEAD + CLIP_TAIL:
        return line
    return "%s [... %d characters ...] %s" % (line[:CLIP_HEAD], len(line) - CLIP_HEAD - CLIP_TAIL, line[-CLIP_TAIL:])


def is_noise(line):
    return bool(NOISE_RE.search(line))


def frame_of(line):
    """(path, function) of a traceback frame line, or None."""
    m = _FRAME_RE.search(line)
    return (m.group(1), m.group(2)) if m else None


def match_line(table, line, stage="starting", frames=None, paths=None, launch=None, last_file=None):
    """Best signature for one line: dict or None.

    ``frames`` are the traceback frame lines just above (see Classifier), used to
    place a bare exception line: the innermost frame that a FRAME_RULES entry
    knows decides.  ``paths`` maps path values of the launch (from its server_args
    line) to their flags, so that a remedy names the flag whose value is wrong.
    """
    best = None
    found = None
    echo = bool(_SOURCE_ECHO_RE.match(line))
    if echo:
        tail = _ECHO_TAIL_RE.search(line)
        if tail:  # "raise RuntimeError( RuntimeError: Cannot ..." on one line: the message is real
            line, echo = line[tail.start():], False
    notice = bool(NOISE_RE.search(line))
    for sig in table:
        if not sig.user and (echo or (notice and sig.category not in NOTICE_OK)):
            continue
        if best is None or sig.priority > best.priority:
            m = sig.rx.search(line)
            if m:
                best, found = sig, m
    if best is None:
        return None
    category, remedy, priority, strong = best.category, best.remedy, best.priority, best.strong
    if notice and not best.user:
        priority, strong = min(priority, NOTICE_PRIORITY), False
    draft = bool(frames) and any(_DRAFT_FRAME_RE.search(f) for f in frames)
    if best.generic and _MEMORY_SHORT_RE.search(line) and _HOST_MEMORY_RE.search(line):
        category, remedy, priority = "host_oom", R_HOSTOOM, 75
    elif best.generic and _MEMORY_SHORT_RE.search(line):
        category, priority = "oom", 80
        for cat, rx in _MEMORY_SUBJECT:
            if rx.search(line):
                category = cat
                remedy = _REMEDY[cat]
                break
    elif best.generic and draft and _SHAPE_RE.search(line):
        category, remedy, priority = "draft_mismatch", R_DRAFT, 88
    elif best.generic:
        placed = _place(frames, line) if frames else None
        if placed:
            category, remedy, priority = placed[0], placed[1], FRAME_PRIORITY
        elif _FLAG_RE.search(line[found.end():]):
            # The message tells the user to change a launch flag: an argument problem.
            category, remedy, priority = "bad_args", R_ARGS, FLAG_PRIORITY
    if category == "oom":
        category = _oom_by_frame(frames) or _OOM_BY_STAGE.get(stage, "oom_weights")
        remedy = _REMEDY[category]
    if category == "sigbus":
        category = _sigbus_kind(line, frames, stage, launch)
        if category == "shm_exhausted":
            remedy = R_SHM
        else:
            named = _WEIGHT_FILE_RE.search(line) or (_WEIGHT_FILE_RE.search(last_file) if last_file else None)
            model = _path_value(paths, "--model-path")
            remedy = R_SIGBUS % (os.path.basename(named.group(0)) if named else
                                 ("the weights under %s" % model) if model else "the weight files")
    if category == "checkpoint_corrupt":
        named = _WEIGHT_FILE_RE.search(line)
        remedy = R_CKPT % (os.path.basename(named.group(0)) if named else "the weight files the loader read last")
    if category in ("model_not_found", "checkpoint_corrupt", "tokenizer") and not best.user:
        flag = _flag_of_path(line, paths) or (DRAFT_FLAG if draft else None)
        if flag and category == "tokenizer":
            remedy = "the tokenizer given to %s (%s) could not be loaded: %s" % (
                flag, _path_in(line, paths, flag) or "the value given", R_TOKENIZER)
        elif flag and category == "model_not_found":
            remedy = R_PATH_FLAG % (flag, _path_in(line, paths, flag) or "the value given")
        elif flag:
            remedy += " (the files given to %s)" % flag
    remedy = _fit_remedy(category, remedy, line, paths, launch, frames, draft) if not best.user else remedy
    out = {"category": category, "remedy": remedy, "priority": priority,
           "strong": strong, "line": _excerpt(line, found), "stage": stage}
    if not best.user and _SURVIVABLE_RE.search(line) and not _RAISED_RE.match(line):
        # A line a server survives (logged by a transport, per request, retried): never terminal, below any exception.
        out.update(strong=False, survivable=True, priority=max(SURVIVABLE_FLOOR, priority - SURVIVABLE_SHIFT))
    if category == "scheduler_exception" and _SIGNAL_RE.search(line):
        out["signal"] = True  # a crash signal: a transport library in the backtrace after it places it
    if best.generic and category == "scheduler_exception":
        out["generic"] = True  # a bare exception nothing placed yet (a location line after it still may)
    return out


def has_peers(launch):
    """True when the launch's ranks talk to each other (TP, PP or several nodes); None when the log did not say."""
    if not launch:
        return None
    return any(int(launch.get(k) or 1) > 1 for k in ("tp_size", "pp_size", "nnodes"))


def _sigbus_kind(line, frames, stage, launch):
    for frame in reversed(frames or []):
        for cat, rx in _SIGBUS_FRAMES:
            if rx.search(frame):
                return cat
    if _SHM_WORDS_RE.search(line):
        return "shm_exhausted"
    if stage in _SIGBUS_SHM_STAGES and has_peers(launch):
        return "shm_exhausted"
    return "weights_sigbus"


def _path_value(paths, flag):
    for value, f in (paths or {}).items():
        if f == flag:
            return value
    return None


def _flag_of_path(line, paths):
    """The launch flag whose path value the line names (the longest such value), or None."""
    hits = [(len(v), f) for v, f in (paths or {}).items() if v and v in line]
    return max(hits)[1] if hits else None


def _path_in(line, paths, flag):
    for value, f in (paths or {}).items():
        if f == flag and value in line:
            return value
    m = re.search(r"'(/[^']+)'|\"(/[^\"]+)\"", line)
    return (m.group(1) or m.group(2)) if m else None


def paths_of_server_args(line):
    """{path value: --flag} from SGLang's server_args=ServerArgs(...) line."""
    return dict((value, "--" + key.replace("_", "-")) for key, value in _SERVER_ARGS_PATH_RE.findall(line))


def _oom_by_frame(frames):
    """oom_* category from the traceback frames above an out-of-memory line, or None."""
    for frame in reversed(frames or []):
        for cat, rx in _OOM_FRAMES:
            if rx.search(frame):
                return cat
    return None


def _place(frames, line=""):
    """(category, remedy) from a traceback's frames, innermost first, or None.

    A frame only adds context to the message: a runtime check raised from a JIT kernel's
    source path is not placed as a failed build."""
    check = bool(_RUNTIME_CHECK_RE.search(line))
    for frame in reversed(frames):
        for cat, rx, rem in _FRAME_COMPILED:
            if rx.search(frame) and not (check and rem in _JIT_BUILD_REMEDIES):
                return cat, rem
    return None


def spec_on(launch, paths, frames=None):
    """True when the launch runs speculation (its server_args or argv named a draft or an algorithm)."""
    return bool((launch or {}).get("speculative") or _path_value(paths, DRAFT_FLAG)
                or (frames and any(_DRAFT_FRAME_RE.search(f) for f in frames)))


def _fit_remedy(category, remedy, line, paths, launch, frames, draft):
    """The remedy fitted to what the line and the launch name (the flag, the path, the class)."""
    filled = _fill_limits(remedy, line)
    if filled is not None:
        return filled
    if remedy == R_MODEL_TYPE:
        flag = _flag_of_path(line, paths) or (DRAFT_FLAG if draft else None)
        m = _MODEL_IN_RE.search(line)
        where = m.group(1) if m else None
        if flag:
            return remedy % (" of %s (%s)" % ((where or _path_value(paths, flag) or "the model")[-40:], flag))
        return remedy % (" of %s" % where[-40:] if where else "")
    if remedy == R_MODEL_FEATURE:
        m = _FEATURE_RE.search(line)
        return remedy % ((m.group(1), m.group(2)) if m else ("model class", "a method"))
    if category == "port_in_use":
        m = _PORT_NAME_RE.search(line)
        if m and m.group(1) not in ("port",):
            flag = "--" + m.group(1).replace("_", "-")
            return R_PORT_FLAG % (flag, " (%s)" % m.group(2) if m.group(2) else "", flag)
    if category == "cuda_error" and _INDEX_ASSERT_RE.search(line):
        return R_VOCAB_DRAFT if spec_on(launch, paths, frames) else R_VOCAB
    return remedy


class Classifier:
    """Keeps the best match seen so far (incremental, O(new lines))."""

    def __init__(self, extra_patterns=None, state=None):
        self.table = build_table(extra_patterns)
        self.reset()
        if state:
            self.best = state.get("best")
            self.first_strong_at = state.get("first_strong_at")
            self.frames = state.get("frames") or []
            self.frame_age = state.get("frame_age", 0)
            self.telling = state.get("telling")
            self.paths = state.get("paths") or {}
            self.launch = state.get("launch") or {}
            self.last_file = state.get("last_file")
            self.best_age = state.get("best_age", 0)
            self.echo = state.get("echo")
            self.warnings = state.get("warnings", 0)
            self.warning_lines = state.get("warning_lines") or []
            self.peer_line = state.get("peer_line")

    def dump(self):
        return {"best": self.best, "first_strong_at": self.first_strong_at, "frames": self.frames,
                "frame_age": self.frame_age, "telling": self.telling, "paths": self.paths,
                "launch": self.launch, "last_file": self.last_file, "best_age": self.best_age,
                "echo": self.echo, "warnings": self.warnings, "warning_lines": self.warning_lines,
                "peer_line": self.peer_line}

    def reset(self):
        self.best = None
        self.first_strong_at = None
        self.frames = []         # frame lines of the traceback being read
        self.frame_age = 0       # lines since the last one
        self.telling = None      # most telling unmatched line, for `unknown`
        self.paths = {}          # path values of the launch -> their flags
        self.launch = {}         # tp_size, pp_size, nnodes, ... of the launch
        self.last_file = None    # the last weight file a line named
        self.best_age = 0        # lines since the best match
        self.echo = None         # the last raise/assert line a traceback echoed (for a message-less exception)
        self.warnings = 0        # lines a server survives (retried, per request, a transport's logged error)
        self.warning_lines = []  # ... the first MAX_WARNINGS of them
        self.peer_line = None    # the first error line naming a peer (address or rank), quoted by an nccl verdict

    def feed(self, line, stage, now):
        full, line = line, clip(line)
        if len(line) < 600 and frame_of(line):  # (a flattened paste is no frame line)
            if self.frame_age > FRAME_REACH:
                self.frames = []  # a new traceback
            self.frames = (self.frames + [line.strip()[:300]])[-MAX_FRAMES:]
            self.frame_age = 0
            return None
        self.frame_age += 1
        if _SOURCE_ECHO_RE.match(line) and len(line) < 300:
            self.echo = line.strip()
        elif self.echo and _BARE_EXC_RE.match(line) and self.frame_age <= FRAME_REACH:
            line = "%s: (%s)" % (line.strip(), self.echo)  # a message-less exception names its raise/assert
        self.best_age += 1
        if "server_args=ServerArgs(" in full:  # one long structured line, read whole (its patterns are linear)
            self.paths.update(paths_of_server_args(full))
            self.launch.update((_LAUNCH_ALIASES.get(k, k), int(v)) for k, v in _LAUNCH_INT_RE.findall(full))
        if len(full) < 20000 and _SPEC_RE.search(full):
            self.launch["speculative"] = 1
        named = _WEIGHT_FILE_RE.search(line)
        if named:
            self.last_file = named.group(0)
        if (self.best and self.best.get("generic") and self.best_age <= FRAME_REACH
                and _LOCATION_RE.search(line)):
            # The place follows the exception (a paraphrased or foreign traceback): it places it all the same.
            placed = _place([line])
            if placed:
                self.best = dict(self.best, category=placed[0], remedy=placed[1], priority=FRAME_PRIORITY)
                self.best.pop("generic", None)
        if self.best and self.best.get("signal") and self.best_age <= FRAME_REACH:
            for rx, cat, rem in _TRANSPORT_LIBS:
                if rx.search(line):  # the crash's native backtrace runs through a transport library
                    self.best = dict(self.best, category=cat, remedy=rem)
                    self.best.pop("signal", None)
                    break
        frames = self.frames if self.frame_age <= FRAME_REACH else None
        if self.peer_line is None and len(line) < 2000 and _PEER_RE.search(line) and _PEER_TROUBLE_RE.search(line) \
                and not NOISE_RE.search(line):
            self.peer_line = line.strip()[:500]
        m = match_line(self.table, line, stage, frames, self.paths, self.launch, self.last_file)
        survivable = m.get("survivable") if m else bool(_SURVIVABLE_RE.search(line) and _TELLING_RE.search(line)
                                                        and not _RAISED_RE.match(line))
        if survivable:
            self.warnings += 1
            if len(self.warning_lines) < MAX_WARNINGS:
                self.warning_lines.append(line.strip()[:300])
        if m is None:
            if _TELLING_RE.search(line) and not NOISE_RE.search(line):
                self.telling = line.strip()[:500]
            return None
        if m["strong"] and self.first_strong_at is None:
            self.first_strong_at = now
        if self.best is None or m["priority"] > self.best["priority"]:
            self.best = m
            self.best_age = 0
        return m

    def verdict(self):
        best = self.best
        if (best is None or best["priority"] <= 5) and self.frames and self.frame_age <= FRAME_REACH:
            # A traceback cut before its exception: the innermost frame a rule knows places it.
            placed = _place(self.frames)
            if placed:
                return {"category": placed[0], "remedy": placed[1], "priority": FRAME_PRIORITY, "strong": False,
                        "line": self.frames[-1], "stage": (best or {}).get("stage", "starting")}
        if best is None:
            return {"category": "unknown", "line": self.telling,
                    "remedy": "no known failure line in the log; read log_tail and journal_tail"}
        if best["category"] == "nccl" and self.peer_line and self.peer_line != best["line"]:
            # The key line of a communication failure is the first that names the failing peer; the cause stays beside it.
            return dict(best, line=self.peer_line, cause_line=best["line"])
        return best

    def warnings_seen(self):
        """Lines the server survived (retried, per request, a transport's logged error): counted, the first few kept."""
        return {"count": self.warnings, "lines": list(self.warning_lines)}


def classify_text(text, extra_patterns=None, stage="starting"):
    """Classify a whole log text (tests, ad-hoc use)."""
    c = Classifier(extra_patterns)
    st = StageTracker()
    lines, _order = in_order([raw for raw in text.replace("\r", "\n").split("\n") if raw.strip()])
    for raw in lines:
        st.feed(raw, 0)
        c.feed(raw, st.stage if st.stage != "starting" else stage, 0)
    return c.verdict()
