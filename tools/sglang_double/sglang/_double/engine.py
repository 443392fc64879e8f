# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Token generation at the configured rate: min(per_request_tps, saturation_tps / in_flight).

Speculative modes (perf["eagle3"], see docs/sglang-double.md):
- plain EAGLE-3: eagle3 rates at every batch size;
- ``--speculative-adaptive``: SGLang routes the decode batch size (padded up to a CUDA-graph capture size) to the
  adaptive config's slot with the largest key <= it, and a slot whose candidate_steps are all 0 runs without
  drafting - baseline rates (source: 0.5.15.post1/0.5.23 speculative/adaptive_spec_params.py). With drafts that are
  never accepted the EMA drops each slot to its smallest candidate, so a 0 candidate turns drafting off there too;
- ``"draft": "mismatched"``: a draft trained for another target - accept length 1.00 and the rates real SGLang
  0.5.15.post1 showed on an H200 with a random draft (about half the base model's single-request speed, 0.44 of its
  saturated throughput);
- ``"stall_seconds": S``: the first generation of more than 8 tokens stops half-way for S seconds while /health
  stays 200 and /server_info waits behind it (seen on the H200 with the random draft).
- Step 0 of ``--speculative-adaptive`` (a slot whose steps are 0) is not a plain decode in SGLang: the target runs its
  verify graph and the draft extends every step. Measured on the H200 (0.5.15.post1, issue 34) a step-0 step cost
  45 ms at batch 256 against the baseline's 8.9 ms, 1.6x at 16, 2.7x at 64, 3.9x at 128, growing with context
  length: the double's step-0 steps cost ``step0_factor`` plain decode steps. ``SGLANG_DOUBLE_STEP0=plain`` (or the
  venv's roles/sglang patch record listing STEP0_PATCH) stands for the patch that runs it as a plain decode;
  ``SGLANG_DOUBLE_STEP0=verify`` forces the unpatched cost; ``perf["step0"] = {"at_256": X}`` changes the cost.
- The running batch is capped at ``--max-running-requests`` (default 48 with speculation, as 0.5.15.post1 caps an
  EAGLE server, else 2048): requests above it wait in the queue (``#queue-req``, sglang:num_queue_reqs).
"""
import json
import os
import sys
import threading
import time

from sglang.version import at_least
from sglang._double.out import log

# speculative/adaptive_spec_params.py DEFAULT_ADAPTIVE_CONFIG (candidate_steps per batch-size key).
DEFAULT_ADAPTIVE = {"0.5.23": {1: [1, 3, 5, 7], 8: [0, 1, 3], 32: [0, 1], 64: [0]},
                    "0.5.15": {1: [1, 3, 7], 8: [0, 1, 3], 32: [0, 1], 64: [0]}}
MISMATCH_PER_REQUEST, MISMATCH_SATURATION = 0.5, 0.44  # of the baseline rates (H200, random draft)
DECODE_LOG_INTERVAL = 40  # --decode-log-interval: /server_info has avg_spec_accept_length after the first line
# The step-0 cost (issue 34's H200 table; plugins/plugin_utils/_bench_report.py step0_factor is the same model).
STEP0_AT_256, STEP0_BATCH_EXP, STEP0_CONTEXT_REF = 5.0, 0.6, 160.0
STEP0_PATCH = "spec-step0-plain-decode"  # the patch roles/sglang records (plugin_utils/_bench_curves.py)


def step0_factor(batch, context, at_256=STEP0_AT_256):
    """Plain decode steps one unpatched step-0 step costs at this batch size and context length (tokens)."""
    return 1.0 + (at_256 - 1.0) * (max(batch, 1.0) / 256.0) ** STEP0_BATCH_EXP * max(context, 1.0) / STEP0_CONTEXT_REF


def step0_plain(env=None, prefix=None):
    """Does step 0 run as a plain decode?  SGLANG_DOUBLE_STEP0 (plain | verify), else the venv's patch record."""
    env = os.environ if env is None else env
    mode = env.get("SGLANG_DOUBLE_STEP0", "")
    if mode in ("plain", "verify"):
        return mode == "plain"
    try:
        with open(os.path.join(prefix or sys.prefix, "llmserve-patches.json")) as f:
            record = json.load(f)
        return any(p.get("name") == STEP0_PATCH for p in record.get("patches") or [])
    except (IOError, OSError, ValueError, AttributeError):
        return False


def load_adaptive(path):
    """{batch key: candidate_steps} from --speculative-adaptive-config (None: the version's default)."""
    if not path:
        return dict(DEFAULT_ADAPTIVE["0.5.23" if at_least("0.5.23") else "0.5.15"])
    with open(path) as f:
        cfg = json.load(f)
    slots = dict((int(k), list(v["candidate_steps"])) for k, v in cfg.items() if str(k).isdigit())
    if not slots:
        raise ValueError("speculative_adaptive_config must contain at least one integer-string BS key")
    return slots


def capture_sizes(max_bs):
    """Decode CUDA-graph batch sizes with speculation on (0.5.15.post1 server_args / 0.5.23 cuda_graph_hook
    _generate_decode_cuda_graph_batch_sizes, the spec branch); adaptive routing pads a batch up to one of them."""
    bss = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + list(range(72, 257, 8))
           + list(range(272, max_bs + 1, 16)))
    bss = [b for b in bss if b <= max_bs]
    return bss if max_bs in bss else bss + [max_bs]


class Engine(object):
    def __init__(self, perf, speculative, tp, hung, base_perf=None, adaptive=None, capture_bs=None,
                 max_running=None, plain_step0=False):
        self.perf, self.speculative = dict(perf), speculative
        self.max_running = int(max_running or (48 if speculative else 2048))
        self.plain_step0 = bool(plain_step0)
        self.step0_at_256 = float((self.perf.get("step0") or {}).get("at_256") or STEP0_AT_256) \
            if isinstance(self.perf.get("step0"), dict) else STEP0_AT_256
        self.queued = 0
        self.slots = threading.Condition()
        self.base_perf = dict(base_perf or perf)
        self.mismatched = speculative and self.perf.get("draft") == "mismatched"
        if self.mismatched:
            self.perf.update(accept_length=1.0,
                             per_request_tps=float(self.base_perf["per_request_tps"]) * MISMATCH_PER_REQUEST,
                             saturation_tps=float(self.base_perf["saturation_tps"]) * MISMATCH_SATURATION)
        self.adaptive = adaptive if speculative else None  # {key: candidate_steps}
        self.capture_bs = sorted(capture_bs) if capture_bs else None
        self.stall_seconds = float(self.perf.get("stall_seconds") or 0) if speculative else 0.0
        self.stalling = threading.Event()
        self._stalled_once = False
        self.prefix = " TP0" if tp > 1 else ""
        self.hung = hung  # threading.Event: scheduler wedged (hang:ready)
        self.lock = threading.Lock()
        self.running = 0
        self.tokens_total = 0
        self.prompt_total = 0
        self.spec_steps = 0  # decode steps that drafted (for avg_spec_accept_length's first appearance)
        self.last_tps = 0.0
        self._window = []  # (time, tokens) for the decode-batch line
        self.prefill_tps = 0.0  # launch_server sets it from the settings (0: prefill is instant)
        self.prefill_lock = threading.Lock()  # one prefill at a time; nothing decodes while one runs
        self.last_output = time.time()  # SGLang's tokenizer_manager.last_receive_tstamp: any output of any request

    @classmethod
    def from_launch(cls, settings, args, tp, hung, max_bs):
        """The engine launch_server builds from its parsed args."""
        spec = bool(args.get("speculative_algorithm"))
        adaptive = load_adaptive(args.get("speculative_adaptive_config")) if args.get("speculative_adaptive") else None
        capture = None if args.get("disable_cuda_graph") else capture_sizes(max_bs)
        engine = cls(settings.mode_perf(spec), spec, tp, hung, base_perf=settings.mode_perf(False),
                     adaptive=adaptive, capture_bs=capture, max_running=args.get("max_running_requests"),
                     plain_step0=step0_plain())
        engine.prefill_tps = float(getattr(settings, "prefill_tps", 0) or 0)
        return engine

    # ---- the speculative decision for the current batch
    def drafting(self, batch=None):
        """Does a decode batch of this size draft?  (adaptive: its slot's steps are > 0)"""
        if not self.speculative:
            return False
        if not self.adaptive:
            return True
        bs = max(batch if batch is not None else self.running, 1)
        if self.capture_bs:
            bigger = [c for c in self.capture_bs if c >= bs]
            bs = bigger[0] if bigger else bs
        keys = sorted(self.adaptive)
        slot = [k for k in keys if k <= bs]
        steps = self.adaptive[slot[-1] if slot else keys[0]]
        # Accepted drafts per step = accept length - 1; the EMA sinks to the smallest candidate when that is ~0.
        pick = min(steps) if self.accept_length_value() - 1.0 <= 0.5 else max(steps)
        return pick > 0

    def rate(self, context=None):
        """Tokens/s of one running request; ``context``: its length (tokens), for the step-0 cost."""
        c = max(self.running, 1)
        drafting = self.drafting(c)
        perf = self.perf if drafting else self.base_perf
        value = min(float(perf["per_request_tps"]), float(perf["saturation_tps"]) / c)
        if self.adaptive and not drafting and not self.plain_step0:
            value /= step0_factor(c, STEP0_CONTEXT_REF if context is None else context, self.step0_at_256)
        return value

    def accept_length_value(self):
        return float(self.perf.get("accept_length", 1.0))

    def accept_length(self):
        return self.accept_length_value() if self.speculative else None

    def info_accept_length(self):
        """avg_spec_accept_length of /server_info: absent until a decode log line folded the counters in."""
        if not self.speculative or self.spec_steps < DECODE_LOG_INTERVAL:
            return None
        return self.accept_length_value()

    def wait_scheduler(self, timeout):
        """/server_info asks the scheduler, which answers only between batches: not while a batch is stuck."""
        deadline = time.monotonic() + timeout
        while self.stalling.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _maybe_stall(self, i, n_tokens):
        if self.stall_seconds <= 0 or n_tokens <= 8 or i != n_tokens // 2:
            return
        with self.lock:
            if self._stalled_once:
                return
            self._stalled_once = True
        self.stalling.set()
        try:
            time.sleep(self.stall_seconds)
        finally:
            self.stalling.clear()

    def generate(self, n_tokens, prompt_tokens, on_token=None):
        """Sleep through n_tokens at the modelled rate, calling on_token(i) per token; waits in the queue while
        --max-running-requests requests run."""
        with self.slots:
            self.queued += 1
            while self.running >= self.max_running:
                self.slots.wait(0.5)
            self.queued -= 1
            with self.lock:
                self.running += 1
                self.prompt_total += prompt_tokens
        try:
            if self.prefill_tps > 0 and prompt_tokens:
                with self.prefill_lock:  # the prompt's prefill: the scheduler runs nothing else, nothing comes out
                    time.sleep(prompt_tokens / self.prefill_tps)
            # Pace against deadlines, not per-token sleeps: on a loaded machine each sleep
            # overshoots, and the overshoot would pile up into a slower modelled rate.
            due = time.monotonic()
            for i in range(n_tokens):
                while self.hung.is_set() or self.prefill_lock.locked():
                    time.sleep(0.5 if self.hung.is_set() else 0.02)
                    due = time.monotonic()
                self._maybe_stall(i, n_tokens)
                if self.stall_seconds and i == n_tokens // 2:
                    due = max(due, time.monotonic())
                due += 1.0 / self.rate(prompt_tokens + i)
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                with self.lock:
                    self.tokens_total += 1
                    self.last_output = time.time()
                    if self.drafting():
                        self.spec_steps += 1.0 / self.accept_length_value()
                if on_token:
                    on_token(i)
        finally:
            with self.slots:
                with self.lock:
                    self.running -= 1
                self.slots.notify()

    def decode_log_loop(self, stop):
        """Every ~40 decode steps while busy, the line SGLang's scheduler prints."""
        last_total, last_t = self.tokens_total, time.time()
        while not stop.wait(40.0 / float(self.perf["per_request_tps"])):
            now = time.time()
            with self.lock:
                running, total = self.running, self.tokens_total
            self.last_tps = (total - last_total) / max(now - last_t, 1e-6)
            last_total, last_t = total, now
            if running == 0 or self.hung.is_set():
                continue
            spec = ""
            if self.speculative:
                al = self.accept_length() if self.drafting(running) else 1.0
                spec = "accept len: %.2f, accept rate: %.2f, " % (al, (al - 1.0) / 3.0)
            log("Decode batch, #running-req: %d, #token: %d, token usage: %.2f, %scuda graph: True, "
                "gen throughput (token/s): %.2f, #queue-req: %d," % (
                    running, running * 1100, min(running * 1100 / 412160.0, 1.0), spec, self.last_tps, self.queued),
                self.prefix)
