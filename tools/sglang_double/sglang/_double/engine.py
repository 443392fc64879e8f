# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Token generation at the configured rate: min(per_request_tps, saturation_tps / in_flight)."""
import threading
import time

from sglang._double.out import log


class Engine(object):
    def __init__(self, perf, speculative, tp, hung):
        self.perf, self.speculative = perf, speculative
        self.prefix = " TP0" if tp > 1 else ""
        self.hung = hung  # threading.Event: scheduler wedged (hang:ready)
        self.lock = threading.Lock()
        self.running = 0
        self.tokens_total = 0
        self.prompt_total = 0
        self.last_tps = 0.0
        self._window = []  # (time, tokens) for the decode-batch line

    def rate(self):
        c = max(self.running, 1)
        return min(float(self.perf["per_request_tps"]), float(self.perf["saturation_tps"]) / c)

    def accept_length(self):
        return float(self.perf.get("accept_length", 1.0)) if self.speculative else None

    def generate(self, n_tokens, prompt_tokens, on_token=None):
        """Sleep through n_tokens at the modelled rate, calling on_token(i) per token."""
        with self.lock:
            self.running += 1
            self.prompt_total += prompt_tokens
        try:
            # Pace against deadlines, not per-token sleeps: on a loaded machine each sleep
            # overshoots, and the overshoot would pile up into a slower modelled rate.
            due = time.monotonic()
            for i in range(n_tokens):
                while self.hung.is_set():
                    time.sleep(0.5)
                    due = time.monotonic()
                due += 1.0 / self.rate()
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                with self.lock:
                    self.tokens_total += 1
                if on_token:
                    on_token(i)
        finally:
            with self.lock:
                self.running -= 1

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
                al = self.accept_length()
                spec = "accept len: %.2f, accept rate: %.2f, " % (al, al / 4.0)
            log("Decode batch, #running-req: %d, #token: %d, token usage: %.2f, %scuda graph: True, "
                "gen throughput (token/s): %.2f, #queue-req: 0," % (
                    running, running * 1100, min(running * 1100 / 412160.0, 1.0), spec, self.last_tps), self.prefix)
