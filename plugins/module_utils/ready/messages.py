# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The words of server_ready's verdicts, apart from the rules that pick them (verdicts.py).

The failure causes found in the log have their remedies in sglang/signatures.py; these are the
texts for how the wait itself ended.
"""

from __future__ import annotations

FIRED_UP = "The server is fired up and ready to roll!"

# why the wait ended
PROCESS_EXITED = "server process %s exited"
UNIT_STOPPED = "unit %s is %s/%s"
FATAL_LINGERS = "fatal error in log %.0fs ago and no recovery"
STAGE_OVER_BUDGET = "stage %s over its %ss budget (%.0fs)"
STALLED = "no log output, CPU, I/O or GPU memory change for %.0fs"
MEMBER_STOPPED = "a process of the server has been stopped (state T) for %.0fs"
TIMED_OUT = "not ready within timeout %ss"
LOG_READY_ENDPOINT_NOT = "log says ready but %s%s answers %s"
GENERATION_FAILS = "%s but a 1-token generation fails (%s)"
ENDPOINT_SAYS_READY = "%s answers 200"
LOG_SAYS_READY = "the log says ready"
EXIT_STATUS = " (exit status %s)"
CHAT_FAILS = "ready, but a 1-token /v1/chat/completions answers %s: %s"

# the server was gone before the wait began
UNIT_DIED_BEFORE = "unit %s died before the wait began (%s/%s, result %s)"
PID_DIED_BEFORE = "pid %s is not running: it exited before the wait began (or the pid is wrong)"
SUPERVISED_DIED_BEFORE = "server (pid %s) exited before the wait began"

# remedies for the endings the log does not explain
R_EXIT_2 = "exit status 2 is argparse's: check the launch arguments"
R_STALL_NCCL = ("NCCL/torch.distributed init does not finish: on PCIe boxes try NCCL_P2P_DISABLE=1; check "
                "--dist-init-addr reachability and that every node was started; NCCL_DEBUG=INFO tells where it waits")
R_STALL = "the server is stuck: py-spy dump --pid <pid> (and children) shows where"
R_STALL_NO_PEERS = ("frozen in init distributed with no peer to wait for (TP 1 on one node), so no NCCL/PCIe remedy "
                    "applies: the process itself is stuck - grep State /proc/<pid>/status (D: waiting on I/O), "
                    "py-spy dump --pid <pid>, nvidia-smi and dmesg for a GPU that stopped answering")
R_STALL_STOPPED = ("process(es) %s of the server are stopped (state T: SIGSTOP, a debugger or a job-control stop), so "
                   "the server cannot go on: kill -CONT them or find who stopped them")
R_TIMEOUT = ("still %s at the deadline and not idle: raise timeout, or per-stage stage_timeouts to catch slow "
             "stages sooner")
R_FOREIGN_PORT = "another process answers on %s (ss -ltnp): stop it or change --port"
R_CHECK_URL = "check url/port/api_key point at this server, and the firewall"
R_GENERATION = "the scheduler cannot generate: read log_tail for the request's traceback; restart the server"
R_CHAT = ("every chat request fails the same way: fix the model's chat template (tokenizer_config.json chat_template, "
          "chat_template.jinja; llmserve.sglang.model_verify renders it) or set server_args chat-template; for a "
          "completion-only endpoint set server_ready_chat_probe: false")
R_OWN_ERROR = ("server_ready itself could not go on, so this says nothing about the server: fix what the message "
               "names, or report it with this message if it names nothing you can change")


def failure(why, stage, elapsed, verdict):
    """The one-line diagnosis: what ended the wait and where, the key log line, the category and what to try."""
    parts = ["%s in stage %s after %.0fs" % (why, verdict.get("stage") or stage, elapsed)]
    if verdict.get("line"):
        parts.append("log: %s" % verdict["line"][:300])
    parts.append("%s -> try: %s" % (verdict["category"], verdict["remedy"]))
    return " | ".join(parts).replace("\n", " ")


def server_said(detail):
    """The server's own message from a failed call's detail ({status, error}): OpenAI's error body or the text."""
    err = (detail or {}).get("error")
    if isinstance(err, dict):
        inner = err.get("error") if isinstance(err.get("error"), dict) else err
        err = inner.get("message") or err
    return " ".join(str(err or "no answer").split())[:1000]


def ready(elapsed, warnings=None):
    """Ready, and the lines it survived on the way (counted, the first one quoted)."""
    w = warnings or {}
    if not w.get("count"):
        return "SGLang server ready after %.1fs" % elapsed
    return ("SGLang server ready after %.1fs, with %d warning line(s) it survived (first: %s)"
            % (elapsed, w["count"], (w.get("lines") or [""])[0][:200])).replace("\n", " ")


def worker_ready(node_rank, elapsed):
    return "SGLang worker (node_rank %s) initialised after %.1fs" % (node_rank, elapsed)


def own_error(exc, where, secrets=()):
    """What broke inside the waiter, with any secret (the API key) blanked in every spelling it may take
    (as given, escaped by repr, or as the bytes http.client quotes)."""
    text = "server_ready failed %s: %s: %s" % (where, type(exc).__name__, exc)
    for secret in secrets:
        if secret:
            spellings = {secret, repr(secret)[1:-1], repr(secret.encode("utf-8", "replace"))[2:-1]}
            for spelling in sorted(spellings, key=len, reverse=True):
                text = text.replace(spelling, "<api_key>")
    return text.replace("\n", " ")
