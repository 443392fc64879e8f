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

from __future__ import absolute_import, division, print_function

__metaclass__ = type

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
_PROGRESS_RE = re.compile(r"(\d{1,3})%(?:[^|\n]*\|){1,2}\s*(\d+)/(\d+)")
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
        if state:
            self.stage = state["stage"]
            self.stages = state["stages"]
            self.detail = state.get("detail")
            self.restarts = state.get("restarts", 0)

    def dump(self):
        return {"stage": self.stage, "stages": self.stages,
                "detail": self.detail, "restarts": self.restarts}

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
        prog = progress_of(line)
        stage = stage_of(line)
        changed = False
        if stage is not None and STAGES.index(stage) > self.index():
            self.stage = stage
            self.stages.append({"stage": stage, "began": round(now, 3)})
            self.detail = None
            changed = True
        if prog is not None:
            self.detail = prog
        return changed

    def restart(self, now):
        self.restarts += 1
        self.stages = [{"stage": "init", "began": round(now, 3)}]
        self.stage, self.detail = "init", None

    def set(self, stage, now):
        if stage != self.stage:
            self.stage = stage
            self.stages.append({"stage": stage, "began": round(now, 3)})
            self.detail = None

    def label(self):
        text = LABELS.get(self.stage, self.stage)
        if self.detail and self.stage in ("load_weights", "cuda_graph"):
            text += " " + self.detail
        return text
