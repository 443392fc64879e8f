# -*- coding: utf-8 -*-
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

The generic ``oom`` category is resolved from the stage the line was seen in:
out of memory while loading weights, allocating the KV cache or capturing CUDA
graphs needs different fixes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang_stages import StageTracker

CATEGORIES = (
    "oom_cuda_graph", "oom_kv", "oom_weights", "nccl", "arch_unsupported",
    "import_error", "driver_mismatch", "bad_args", "port_in_use",
    "scheduler_exception", "warmup_failure", "model_not_found", "unknown",
)

R_CG = ("CUDA graph capture ran out of GPU memory: lower --mem-fraction-static "
        "(e.g. 0.8), lower --cuda-graph-max-bs (0.5.23: --cuda-graph-max-bs-decode), "
        "or --disable-cuda-graph as a last resort")
R_KV = ("not enough GPU memory left for the KV cache: raise --mem-fraction-static, "
        "shorten --context-length, use --kv-cache-dtype fp8_e4m3, or add GPUs (--tp)")
R_W = ("the weights do not fit: use more GPUs (--tp), a quantized checkpoint, or "
       "free the GPUs (nvidia-smi shows other processes)")
R_NCCL = ("NCCL failed between ranks: rerun with NCCL_DEBUG=INFO; on PCIe boxes try "
          "NCCL_P2P_DISABLE=1 and --disable-custom-all-reduce; check that every node "
          "reaches --dist-init-addr")
R_ARCH = ("the kernels were not built for this GPU (e.g. sm_120): install an SGLang / "
          "sglang-kernel / torch build for this architecture, pick another "
          "--attention-backend (triton), or set TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas")
R_IMPORT = ("a Python package or CUDA library is missing or mismatched: reinstall "
            "sglang-kernel / flashinfer / torch for this CUDA version and check LD_LIBRARY_PATH")
R_DRV = ("the NVIDIA driver is older than the CUDA runtime in the venv: upgrade the "
         "driver or install torch/sglang built for the driver's CUDA version")
R_ARGS = "fix the launch arguments: run sglang.launch_server --help for this version"
R_PORT = ("the port is taken: stop the other server (ss -ltnp), or change --port / "
          "--dist-init-addr (internal ports are dist-init port +1..+5)")
R_SCHED = ("a scheduler process raised: read the traceback in log_tail; rerun with "
           "--log-level debug if it is unclear")
R_WARM = ("the warm-up request failed after the model loaded: read the warm-up "
          "traceback; try --attention-backend triton --sampling-backend pytorch")
R_MODEL = ("the model was not found: check --model-path (a local folder with "
           "config.json, or a Hub id with HF_TOKEN for gated repos and network access)")
R_HOSTOOM = ("a scheduler was killed (SIGKILL): most often the kernel OOM killer while "
             "loading weights (dmesg -T | grep -i oom); add host RAM/swap or use fewer ranks per host")
R_WATCHDOG = ("a forward step hung past --watchdog-timeout: check NCCL/GPU health "
              "(py-spy dump), then raise --watchdog-timeout if the step is just slow")

# priority: 90 exact causes, 70 resolved-by-stage, 50 weak hints,
# 30 bare exception lines, 10 banners.
BUILTIN = [
    ("oom_cuda_graph", r"Capture (?:[\w ]+ )?(?:cuda|CUDA) graph failed:.*(?:out of memory|OutOfMemory)", R_CG, 95, True),
    ("oom_kv", r"Not enough memory\. Please try to increase --mem-fraction-static", R_KV, 90, True),
    ("oom_kv", r"max_total_num_tokens=-?\d+.*(?:must be|should be) positive|KV cache pool is too small", R_KV, 88, True),
    ("oom", r"(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED)", None, 80, True),
    ("oom_weights", r"scheduler died during initialization \(exit code: -9\)|\b[Ee]xit code: -9\b", R_HOSTOOM, 75, True),
    ("driver_mismatch",
     r"NVIDIA driver on your system is too old|CUDA driver version is insufficient|"
     r"Driver/library version mismatch|unsupported display driver / cuda driver combination|"
     r"forward compatibility was attempted on non supported HW|Found no NVIDIA driver on your system", R_DRV, 90, True),
    ("arch_unsupported",
     r"no kernel image is available for execution on the device|ptxas fatal\s*:.*sm_\d+a?|"
     r"Unsupported architecture|is not compatible with the current PyTorch installation|(?:CUDA|"
     r"compute) capability \S+ (?:is )?not supported", R_ARCH, 85, True),
    # Triton's ptxas failing for the GPU: the "ptxas fatal" stderr often goes to a temp file, not the log.
    ("arch_unsupported", r"PTXASError|ptxas\W.*--gpu-name=sm_\d+a?\b.*returned non-zero exit status", R_ARCH, 84, True),
    ("nccl",
     r"NCCL error|nccl\w*Error|Failed to load NCCL library|ProcessGroup(?:NCCL|Gloo).*(?:[Tt]imeout|"
     r"[Ee]rror)|monitoredBarrier|gloo/transport/tcp|DistNetworkError|DistStoreError|"
     r"NCCL communicator was aborted", R_NCCL, 85, True),
    ("port_in_use", r"EADDRINUSE", R_PORT, 88, True),
    ("port_in_use", r"failed to listen on any local network address", R_PORT, 86, True),
    ("port_in_use", r"\[Errno 98\]|[Aa]ddress already in use|Port is already in use|error while attempting to bind on address", R_PORT, 85, True),
    ("bad_args",
     r"(?:launch_server(?:\.py)?|__main__\.py|sglang\.launch_server): error: |"
     r"error: (?:unrecognized arguments|ambiguous option|argument --[\w-]+: )", R_ARGS, 90, True),
    ("model_not_found",
     r"is not a local folder and is not a valid model identifier|Repository Not Found|"
     r"RepositoryNotFoundError|GatedRepoError|HFValidationError|does not appear to have a file named \S+|"
     r"Can't load the configuration of|No such file or directory: '[^']*(?:config\.json|\.safetensors)'|"
     r"We couldn't connect to 'https://huggingface\.co'|LocalEntryNotFoundError|Incorrect path_or_model_id", R_MODEL, 85, True),
    ("import_error",
     r"Could not load any common_ops library|is less than the minimum required version|"
     r"with minimum required version \S+ is not installed", R_IMPORT, 85, True),
    ("bad_args", r"^\s*usage: (?:launch_server(?:\.py)?|sglang\S*|python3? -m sglang\S*) \[-h\]", R_ARGS, 45, False),
    ("import_error", r"cannot open shared object file|undefined symbol: |(?:ImportError|ModuleNotFoundError): ", R_IMPORT, 50, False),
    ("scheduler_exception", r"Fatal Python error: |Segmentation fault \(core dumped\)|terminate called after throwing", R_SCHED, 60, True),
    ("warmup_failure", r"Initialization failed\. warmup error|warmup error:", R_WARM, 40, True),
    ("scheduler_exception", r"Scheduler watchdog timeout|watchdog timeout \(", R_WATCHDOG, 35, True),
    ("scheduler_exception", r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception): |[\]|]\s*(?:[\w.]+\.)?\w*(?:Error|Exception): ", R_SCHED, 30, False),
    ("scheduler_exception",
     r"Scheduler hit an exception|Received sigquit from a child process|"
     r"scheduler died during initialization|Initialization failed\. Please see the error messages above|"
     r"Child process unexpectedly failed|scheduler is dead|[Ee]xit code: -?\d+", R_SCHED, 10, True),
    ("scheduler_exception", r"Traceback \(most recent call last\)", R_SCHED, 5, False),
]

_OOM_BY_STAGE = {
    "starting": "oom_weights", "init": "oom_weights", "dist_init": "oom_weights",
    "load_weights": "oom_weights", "kv_cache": "oom_kv", "cuda_graph": "oom_cuda_graph",
    "http": "oom_kv", "warmup": "oom_kv", "ready": "oom_kv",
}
_REMEDY = {"oom_weights": R_W, "oom_kv": R_KV, "oom_cuda_graph": R_CG}


def _excerpt(line, m, width=500):
    """The line, or for a long one (a flattened paste) the window around the match."""
    text = line.strip()
    if len(text) <= width:
        return text
    start = max(0, min(m.start() - (len(line) - len(line.lstrip())) - width // 4, len(text) - width))
    return text[start:start + width]


class Signature:
    __slots__ = ("category", "rx", "remedy", "priority", "strong")

    def __init__(self, category, regex, remedy, priority, strong):
        self.category = category
        self.rx = re.compile(regex)
        self.remedy = remedy
        self.priority = priority
        self.strong = strong


def build_table(extra_patterns=None):
    """Built-ins plus user patterns; user patterns outrank every built-in."""
    table = []
    for i, p in enumerate(extra_patterns or []):
        table.append(Signature(p.get("category") or "unknown", p["regex"],
                               p.get("remedy") or "see log_tail",
                               1000 - i, bool(p.get("strong", True))))
    table.extend(Signature(*row) for row in BUILTIN)
    return table


# A traceback's echo of the raising source line (``raise RuntimeError(f"NCCL
# error: {error_str}")``) carries the message template, not the message: the
# built-ins skip it so the real message line below becomes the key line.
_SOURCE_ECHO_RE = re.compile(r"^\s*(?:raise|assert)\s")


def match_line(table, line, stage="starting"):
    """Best signature for one line: dict or None."""
    best = None
    found = None
    echo = bool(_SOURCE_ECHO_RE.match(line))
    for sig in table:
        if echo and sig.priority < 1000 - len(table):
            continue
        if best is None or sig.priority > best.priority:
            m = sig.rx.search(line)
            if m:
                best, found = sig, m
    if best is None:
        return None
    category, remedy = best.category, best.remedy
    if category == "oom":
        category = _OOM_BY_STAGE.get(stage, "oom_weights")
        remedy = _REMEDY[category]
    return {"category": category, "remedy": remedy, "priority": best.priority,
            "strong": best.strong, "line": _excerpt(line, found), "stage": stage}


class Classifier:
    """Keeps the best match seen so far (incremental, O(new lines))."""

    def __init__(self, extra_patterns=None, state=None):
        self.table = build_table(extra_patterns)
        self.best = None
        self.first_strong_at = None
        if state:
            self.best = state.get("best")
            self.first_strong_at = state.get("first_strong_at")

    def dump(self):
        return {"best": self.best, "first_strong_at": self.first_strong_at}

    def reset(self):
        self.best = None
        self.first_strong_at = None

    def feed(self, line, stage, now):
        m = match_line(self.table, line, stage)
        if m is None:
            return None
        if m["strong"] and self.first_strong_at is None:
            self.first_strong_at = now
        if self.best is None or m["priority"] > self.best["priority"]:
            self.best = m
        return m

    def verdict(self):
        if self.best is None:
            return {"category": "unknown", "remedy": "no known failure line in the log; read log_tail and journal_tail",
                    "line": None}
        return self.best


def classify_text(text, extra_patterns=None, stage="starting"):
    """Classify a whole log text (tests, ad-hoc use)."""
    c = Classifier(extra_patterns)
    st = StageTracker()
    for raw in text.replace("\r", "\n").split("\n"):
        if not raw.strip():
            continue
        st.feed(raw, 0)
        c.feed(raw, st.stage if st.stage != "starting" else stage, 0)
    return c.verdict()
