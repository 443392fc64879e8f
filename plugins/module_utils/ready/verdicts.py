# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When the wait ends, and what it means: pure predicates over one poll's snapshot.

Each verdict is one small function ``f(snapshot) -> Ending or None``; none does I/O, so a test
builds a ``Snapshot`` by hand and calls it.  The waiter (waiter.py) takes the snapshot in steps
(probe.py) and asks the predicates of each step in order (``STEPS``): the process first, then
its activity, then readiness over HTTP, then the time limits.  A new verdict is one predicate
here, added to its step, and one test.

``explain_*`` turn the classifier's verdict (sglang/signatures.py) into the reported one where
the way the wait ended says more than the log (exit status 2 is argparse's; a stall in
torch.distributed's set-up is NCCL's).
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.ready import messages
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.stages import STAGES

READY_GRACE = 15.0     # log says "fired up" but the health endpoint does not agree
FRESH_PROCESS_S = 3.0  # a server process younger than this, with an empty log, cannot be answering HTTP yet
WORKER_QUIET_S = 5.0   # a worker rank past its last init stage and quiet this long is serving
WORKER_STAGE_S = 10.0  # ... and in that stage at least this long
STOPPED_S = 30.0       # a member of the tree stopped (state T) this long holds the start-up (py-spy stops for ms)

_HTTP = STAGES.index("http")


class Snapshot:
    """What the waiter knows at one poll: plain values, filled by the probe step by step.

    Unknown keyword arguments are refused so that a hand-built snapshot in a test cannot
    set a field no predicate reads."""

    FIELDS = {
        "now": 0.0,                # seconds since the wait began
        "rank0": True, "node_rank": 0,
        # the process
        "pid": None, "alive": None,   # alive: True/False, None when nothing is watched
        "died_before": None,          # text: the server was gone before the wait began
        "process_age": None,          # seconds since the main process started (asked only when it matters)
        "unit": None, "unit_running": None, "unit_active": None, "unit_sub": None,
        # the log
        "has_log": False, "stage": "starting", "stage_label": "", "stage_began": 0.0, "ready_at": None,
        "first_strong_at": None,      # when the first line that ends a start-up was read
        "tail": (),                   # the last log lines
        "last_progress": 0.0,         # last log byte, CPU, I/O or GPU memory change
        # HTTP (rank 0)
        "base": "", "health_path": "/ready",  # the readiness endpoint: /ready (SGLang >= 0.5.20) or /health
        "health": None, "health_error": None,  # the readiness status: 200 also when the log said ready (see fast)
        "fast": False,                # "fired up" read and verify_generation on: a generation proves it, not /health
        "ready_hint_at": None,        # when the log first said ready
        "foreign_port": False,        # a process outside the watched tree listens on the port now
        "foreign_seen": False, "answered_early_seen": False,  # ... at any poll so far
        "generation": None,           # (ok, detail) of the 1-token generation, once tried
        "chat": None,                 # (ok, detail) of the 1-token chat completion, once tried (chat_probe)
        # settings
        "fatal_grace": 5.0, "stage_timeouts": None, "stall_timeout": 600.0, "timeout": 1800.0,
        "verify_generation": True, "chat_probe": False,
        # the host (ready/host_fit.view): whether the ranks have peers; members of the tree found stopped
        "peers": None, "stopped": (),
        "stopped_since": None,        # since when some member of the tree has been in state T, at every slow poll
    }

    def __init__(self, **values):
        unknown = set(values) - set(self.FIELDS)
        if unknown:
            raise TypeError("unknown snapshot field(s): %s" % ", ".join(sorted(unknown)))
        for name, default in self.FIELDS.items():
            setattr(self, name, values.get(name, default))


class Ending:
    """How the wait ends: reason (None when ready), the one-line why, and for some endings the
    verdict to report instead of the classifier's (``key``) or how to explain it (``explain``)."""

    __slots__ = ("reason", "why", "key", "explain")

    def __init__(self, reason, why, key=None, explain=None):
        self.reason, self.why, self.key, self.explain = reason, why, key, explain

    @property
    def failed(self):
        return self.reason is not None

    def __repr__(self):
        return "Ending(%r, %r)" % (self.reason, self.why)


# -- the process ---------------------------------------------------------------------------
def died_before_the_wait(s):
    if s.died_before:
        return Ending("crashed", s.died_before, explain="crash")
    return None


def process_exited(s):
    if s.alive is False:
        return Ending("crashed", messages.PROCESS_EXITED % s.pid, explain="crash")
    return None


# -- its activity --------------------------------------------------------------------------
def unit_stopped(s):
    if s.unit and s.unit_running is False:
        return Ending("crashed", messages.UNIT_STOPPED % (s.unit, s.unit_active, s.unit_sub), explain="crash")
    return None


def fatal_line_lingers(s):
    """A fatal line while the parent lingers (a child died). A "fired up" read after it does not undo it
    (a failed bind, then a warm-up answered by whoever holds the port); only one read before it does."""
    fs = s.first_strong_at
    if fs is None or s.now - fs < s.fatal_grace:
        return None
    if s.ready_at is not None and fs > s.ready_at + 0.001:  # ready_at is rounded to 1 ms
        return None
    return Ending("crashed", messages.FATAL_LINGERS % (s.now - fs), explain="crash")


# -- readiness -----------------------------------------------------------------------------
def answered_before_our_http(s):
    """True for a 200 that cannot come from our server yet: our log is past 'starting' but uvicorn has not started
    (SGLang's rank 0 binds its HTTP port only after weights, KV cache and CUDA graphs), or our log is empty and the
    process was started moments ago. Whoever answers is another server (one on the same port, or a URL pointing
    elsewhere). A log that never shows stage lines (--log-level warning) only holds the first seconds back."""
    idx = STAGES.index(s.stage)
    # 'http' begins with the scheduler's last lines; the port is bound only at uvicorn's startup lines ('warmup').
    if STAGES.index("init") <= idx <= _HTTP:
        return True
    # Nothing in its log yet: a process this young is still importing (real SGLang prints its server_args
    # about 5 s after launch), not serving HTTP.
    return (s.stage == "starting" and s.has_log and s.pid is not None
            and s.process_age is not None and s.process_age < FRESH_PROCESS_S)


def ready_on_rank0(s):
    """Neither a 200 nor "fired up" proves it is OUR server: a fatal line in our own log outranks both (it ends the
    wait after the grace), and another process may hold our port. Real SGLang on a taken port fails to bind, then
    sends its warm-up to the port, which the other server answers, and prints "fired up" after the bind error."""
    if not s.rank0 or s.health != 200:
        return None
    if s.first_strong_at is not None or s.foreign_port or answered_before_our_http(s):
        return None
    return Ending(None, "ready")


def log_ready_but_endpoint_disagrees(s):
    if not s.rank0 or s.stage != "ready" or s.health == 200 or s.ready_hint_at is None:
        return None
    if s.now - s.ready_hint_at < READY_GRACE:
        return None
    return Ending("unhealthy", messages.LOG_READY_ENDPOINT_NOT % (
        s.base, s.health_path, s.health or s.health_error or "nothing"),
        key={"category": "unknown", "line": messages.FIRED_UP, "remedy": messages.R_CHECK_URL})


def worker_initialised(s):
    """Worker nodes print no "fired up" and serve an always-200 stub: after the last init stage and a few
    quiet seconds with the process alive, they are serving."""
    if s.rank0:
        return None
    idx = STAGES.index(s.stage)
    settled = (idx >= STAGES.index("cuda_graph") and s.alive is not False
               and s.now - s.stage_began >= WORKER_STAGE_S and s.now - s.last_progress >= WORKER_QUIET_S)
    if idx >= _HTTP or settled:
        return Ending(None, "worker")
    return None


def generation_fails(s):
    """Asked once readiness is seen: /health can say 200 while generation is broken."""
    if s.generation is None or s.generation[0]:
        return None
    detail = s.generation[1]
    said = messages.LOG_SAYS_READY if s.fast else messages.ENDPOINT_SAYS_READY % s.health_path
    return Ending("unhealthy", messages.GENERATION_FAILS % (said, detail),
                  key={"category": "scheduler_exception", "line": str(detail)[:300],
                       "remedy": messages.R_GENERATION})


def chat_fails(s):
    """Asked after the generation when the model has a chat template: the OpenAI path most users call (issue 45)."""
    if s.chat is None or s.chat[0]:
        return None
    detail = s.chat[1]
    said = messages.server_said(detail)
    return Ending("unhealthy", messages.CHAT_FAILS % (detail.get("status"), said),
                  key={"category": "chat_template", "line": said[:300], "remedy": messages.R_CHAT})


# -- the limits ----------------------------------------------------------------------------
def stage_over_budget(s):
    """A per-stage budget (e.g. NCCL init spinning at 100% CPU)."""
    budget = (s.stage_timeouts or {}).get(s.stage)
    spent = s.now - s.stage_began
    if budget is not None and spent > budget:
        return Ending("stalled", messages.STAGE_OVER_BUDGET % (s.stage, budget, spent), explain="stall")
    return None


def member_stopped(s):
    """A process of the server stopped (SIGSTOP, a tracer) this long: the start-up cannot go on, whatever CPU the
    others burn waiting for it."""
    if s.stopped_since is not None and s.now - s.stopped_since >= min(STOPPED_S, s.stall_timeout):
        return Ending("stalled", messages.MEMBER_STOPPED % (s.now - s.stopped_since), explain="stall")
    return None


def stalled(s):
    idle = s.now - s.last_progress
    if idle >= s.stall_timeout:
        return Ending("stalled", messages.STALLED % idle, explain="stall")
    return None


def timed_out(s):
    if s.now >= s.timeout:
        return Ending("timeout", messages.TIMED_OUT % s.timeout, explain="timeout")
    return None


# The predicates each step of a poll asks, in order (the first Ending wins).
PROCESS = (died_before_the_wait, process_exited)
ACTIVITY = (unit_stopped, fatal_line_lingers)
READINESS = (ready_on_rank0, worker_initialised, log_ready_but_endpoint_disagrees)
LIMITS = (stage_over_budget, member_stopped, stalled, timed_out)


def first(predicates, s):
    for predicate in predicates:
        ending = predicate(s)
        if ending is not None:
            return ending
    return None


# -- explanations: the classifier's verdict, refined by how the wait ended ------------------
def explain(ending, verdict, s, exit_status=None):
    """The verdict to report for ``ending``: its own key, or the classifier's ``verdict`` refined."""
    if ending.key is not None:
        return ending.key
    refine = {"crash": explain_crash, "stall": explain_stall, "timeout": explain_timeout}.get(ending.explain)
    return refine(verdict, s, exit_status) if refine else verdict


def explain_crash(verdict, s, exit_status=None):
    if verdict["category"] == "unknown" and exit_status == 2:
        return dict(verdict, category="bad_args", remedy=messages.R_EXIT_2)
    return verdict


def explain_stall(verdict, s, exit_status=None):
    if verdict["category"] != "unknown":
        return verdict
    line = s.tail[-1] if s.tail else None
    if s.stopped:
        # A process of the server is stopped (SIGSTOP, a debugger): nothing in the server can be the cause.
        return {"category": "unknown", "line": line, "remedy": messages.R_STALL_STOPPED % ", ".join(
            str(pid) for pid in s.stopped)}
    dist_done = any(end.rstrip(".") in line for line in s.tail for end in gates.lines("dist_init_end"))
    if s.stage == "dist_init" and not dist_done:
        if s.peers is False:
            # TP 1 on one node waits for no peer in dist_init: an NCCL/PCIe remedy cannot apply.
            return {"category": "unknown", "line": verdict.get("line") or line, "remedy": messages.R_STALL_NO_PEERS}
        return {"category": "nccl", "line": verdict.get("line"), "remedy": messages.R_STALL_NCCL}
    return {"category": "unknown", "line": line, "remedy": messages.R_STALL}


def explain_timeout(verdict, s, exit_status=None):
    v = dict(verdict)
    if v.get("line") is None and s.tail:
        v["line"] = s.tail[-1]
    if v["category"] == "unknown":
        v["remedy"] = messages.R_TIMEOUT % (s.stage_label or s.stage)
    if s.foreign_seen or (s.answered_early_seen and v["category"] == "unknown"):
        v = dict(v, category="port_in_use", remedy=messages.R_FOREIGN_PORT % s.base)
    return v
