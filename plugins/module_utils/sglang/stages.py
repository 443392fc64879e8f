# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start-up stage of an SGLang server, read from its log lines.

Stages, in order: init, dist_init, load_weights, kv_cache, cuda_graph, http,
warmup, ready.  Wording is taken from the SGLang 0.5.9, 0.5.10.post1 and
0.5.23 sources.  Lines are matched with ``search`` so prefixes (``[date TP3]``,
``sglang-1  | ``, journald) do not matter.
"""

from __future__ import annotations

import re

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

STAGES = ("starting", "init", "dist_init", "load_weights", "kv_cache",
          "cuda_graph", "http", "warmup", "ready")
LABELS = {
    "starting": "starting", "init": "parsing arguments",
    "dist_init": "init distributed", "load_weights": "loading weights",
    "kv_cache": "allocating KV cache", "cuda_graph": "capturing CUDA graphs",
    "http": "starting HTTP server", "warmup": "warm-up request", "ready": "ready",
}

# (stage, regex).  First match wins for a line.
_STAGE_PATTERNS = [
    ("ready", r"The server is fired up and ready to roll"),
    ("warmup", r"Uvicorn running on |Application startup complete"),
    ("http", r"max_total_num_tokens=\d|Started server process \[|Waiting for application startup"),
    ("cuda_graph", r"Capture (?:[\w ]+ )?(?:cuda|CUDA) graph begin|Capturing batches \("),
    ("kv_cache", r"Load weight end\.|KV Cache is allocated|Memory pool end\.|KV cache allocated"),
    ("load_weights", r"Load weight begin\.|Loading safetensors|Loading pt checkpoint shards"),
    # 0.5.9-0.5.20 "Init torch distributed begin.", 0.5.21+ "Init parallel begin." (sglang/gates.STARTUP_LINES)
    ("dist_init", "|".join(re.escape(t) for t in gates.lines("dist_init_begin"))),
    # up to 0.5.15.post1 "server_args=ServerArgs(...)", from 0.5.20 "server_args={...}" (sglang/gates.STARTUP_LINES)
    ("init", "|".join(re.escape(t) for t in gates.lines("server_args"))),
]
_COMPILED = [(s, re.compile(p)) for s, p in _STAGE_PATTERNS]
RESTART_RE = re.compile("|".join(re.escape(t) for t in gates.lines("server_args")))
_PROGRESS_RE = re.compile(r"(\d{1,3})%(?:[^|\n%]*\|){1,2}\s*(\d+)/(\d+)")
# CUDA-graph capture: the list of sizes each capture announces (0.5.15.post1 / 0.5.23 "Capture <role> <kind> CUDA graph
# begin. ... bs=[1, 2, ...]" or "num_tokens=[...]"; older "Capture cuda graph bs [...]"), and the size tqdm's description
# names before each capture ("Capturing batches (bs=48 ...)", "Capturing num tokens (num_tokens=512 ...)"). The sizes are
# captured largest first, so the size being captured says how many are done even while tqdm's own count lags (it
# redraws only every so often, and not at all while one slow size compiles its kernels).
_CAPTURE_BEGIN_RE = re.compile(r"Capture (?P<name>[\w ]*?) ?(?:cuda|CUDA) graph begin\..*?\b(?:bs|num_tokens)=\[(?P<list>[\d, ]+)\]|"
                               r"Capture (?:cuda|CUDA) graph (?:bs|num_tokens) \[(?P<old>[\d, ]+)\]")
_CAPTURE_ITEM_RE = re.compile(r"Capturing (?:batches|num tokens) \((?:bs|num_tokens)=(\d+)")
_RANK_RE = re.compile(r"\b(TP\d+|DP\d+|PP\d+|EP\d+)(?:[ \]])")


def stage_of(line):
    for stage, rx in _COMPILED:
        if rx.search(line):
            return stage
    return None


def progress_of(line):
    """'62/64' from a tqdm bar line, or None."""
    m = _PROGRESS_RE.search(line)
    return "%s/%s" % (m.group(2), m.group(3)) if m else None


def rank_of(line):
    m = _RANK_RE.search(line[:80])
    return m.group(1) if m else None


class StageTracker:
    """Current stage and when each stage began (seconds since the wait began).

    Stages only move forward: with tp > 1 every rank prints the same lines a
    little apart, and EAGLE loads a draft model after the target; going back
    would make the stage flap.  A new ``server_args=`` line before the HTTP
    stage (the server was restarted into the same log) starts the history again.
    """

    def __init__(self, state=None):
        self.stage = "starting"
        self.stages = [{"stage": "starting", "began": 0.0}]
        self.detail = None
        self.restarts = 0
        self.capture = None  # {"sizes": [largest first], "name": "target verify"} of the capture under way
        if state:
            self.stage = state["stage"]
            self.stages = state["stages"]
            self.detail = state.get("detail")
            self.restarts = state.get("restarts", 0)
            self.capture = state.get("capture")

    def dump(self):
        return {"stage": self.stage, "stages": self.stages,
                "detail": self.detail, "restarts": self.restarts, "capture": self.capture}

    @property
    def began(self):
        return self.stages[-1]["began"]

    def index(self, stage=None):
        return STAGES.index(stage or self.stage)

    def feed(self, line, now):
        """Feed one line; return True when the stage changed."""
        # A new server_args= line is a restart into the same log - but only before the
        # HTTP server came up: past that a stray echo must not send the stage back to
        # init (the waiter calls restart() itself when the watched process changes).
        if RESTART_RE.search(line) and 1 < self.index() < STAGES.index("http"):
            self.restart(now)
            return True
        begin = _CAPTURE_BEGIN_RE.search(line) if "raph" in line else None
        stage = stage_of(line)
        changed = False
        if stage is not None and STAGES.index(stage) > self.index():
            self.stage = stage
            self.stages.append({"stage": stage, "began": round(now, 3)})
            self.detail = None
            changed = True
        if begin:
            sizes = sorted(set(int(x) for x in re.findall(r"\d+", begin.group("list") or begin.group("old"))), reverse=True)
            self.capture = {"sizes": sizes, "name": (begin.group("name") or "").strip()}
            if self.stage == "cuda_graph":
                self.detail = "0/%d" % len(sizes)
        self.progress(line)
        return changed

    def progress(self, line):
        """Take the progress a line shows (a tqdm bar; for a CUDA-graph capture, the size it is capturing)."""
        prog = progress_of(line)
        item = _CAPTURE_ITEM_RE.search(line) if self.capture else None
        if item:
            sizes = self.capture["sizes"]
            size = int(item.group(1))
            done, total = (int(x) for x in prog.split("/")) if prog else (0, len(sizes))
            if size in sizes and total == len(sizes):
                prog = "%d/%d" % (max(done, sizes.index(size)), total)
        if prog is not None:
            self.detail = prog
        return prog

    def restart(self, now):
        self.restarts += 1
        self.stages = [{"stage": "init", "began": round(now, 3)}]
        self.stage, self.detail, self.capture = "init", None, None

    def set(self, stage, now):
        if stage != self.stage:
            self.stage = stage
            self.stages.append({"stage": stage, "began": round(now, 3)})
            self.detail = None

    def label(self):
        text = LABELS.get(self.stage, self.stage)
        if self.detail and self.stage in ("load_weights", "cuda_graph"):
            text += " " + self.detail
            if self.stage == "cuda_graph" and self.capture and self.capture.get("name"):
                text += " (%s)" % self.capture["name"]
        return text
