# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a running instance says of itself, for roles/server's status: ready or not, what it serves, its accept length.

Target-side, standard library only: every question goes through the one SGLang client (sglang/client.py) - the
readiness path the instance's view chose (``/ready`` from 0.5.20, else ``/health``), then, only when it is ready,
``/model_info`` and ``/server_info`` (each with its old name as the fallback). sglang/api.py reads the accept length.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import allreduce
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import log as sglang_log

READY_LINE = "The server is fired up and ready to roll!"
LOG_TAIL_BYTES = 1 << 20


def log_tail(log_path, tail_bytes=LOG_TAIL_BYTES):
    """The last ``tail_bytes`` of the server's log, or None where it cannot be read (sglang/log.read_tail: a link or a
    FIFO is never read)."""
    return sglang_log.read_tail(log_path, tail_bytes)


def latch_in_log(log_path, tail_bytes=LOG_TAIL_BYTES):
    """The last ``Health check failed`` line SGLang logged after its last start (its fired-up line), or None; a log
    that cannot be read is None (the status says what it could not tell)."""
    text = log_tail(log_path, tail_bytes)
    if text is None:
        return None
    since = text.rfind(READY_LINE)
    at = text.rfind(gates.HEALTH_LATCH_LINE)
    if at < 0 or at < since:
        return None
    end = text.find("\n", at)
    start = text.rfind("\n", 0, at) + 1
    return text[start:end if end >= 0 else len(text)].strip()[:400]


def health_latch(client, ready_status, log_path=None, timeout=10.0):
    """Is the server latched (a failed health check: /ready 503 while the process serves)? ``{latched, serving,
    line, note}``: ``serving`` from ``/model_info`` (the tokenizer answers it; it neither generates nor latches),
    ``line`` the log's last ``Health check failed`` since the start. Asked only where /ready said 503 and the log
    has that line."""
    out = {"latched": False, "serving": None, "line": None, "note": None}
    if ready_status != 503:
        return out
    out["line"] = latch_in_log(log_path)
    if not out["line"]:
        return out  # starting, paused or draining: not asked more (a hung server costs a timeout per question)
    mst, _model, merr = client.model_info(timeout=timeout)
    out["serving"] = mst == 200
    if out["serving"]:
        out["latched"] = True
        out["note"] = ("health latch: a health check failed (%s) and /ready answers 503 while the process serves; "
                       "the next passing /health_generate lifts it (docs/health.md)" % out["line"])
    else:
        out["note"] = "a health check failed (%s) and the server does not answer /model_info either (%s)" % (
            out["line"], _answer(mst, merr))
    return out


def _answer(status, error):
    """One line for what an endpoint answered: ``200``, ``HTTP 503``, or why nothing answered."""
    if status is None:
        return error or "no answer"
    return "200" if status == 200 else "HTTP %s" % status


def read(client, health_path=None, version=None, timeout=10.0, log_path=None):
    """``{ready, health, latch, model, server_info, accept_length, model_path, served_model_name}`` of the server behind
    ``client``. ``health_path`` as the instance's view has it (else the one ``version`` has, else ``/ready`` with
    ``/health`` where the server lacks it). A server that is not ready is not asked more: its facts would be stale or
    missing, and each question costs a timeout on a hung one."""
    st, _body, err, path = client.readiness(path=health_path, version=version, timeout=timeout)
    out = {"ready": st == 200, "health": {"path": path, "status": st, "answer": _answer(st, err)},
           "model": {}, "server_info": {}, "accept_length": None, "model_path": None, "served_model_name": None,
           "answers": {}}
    # what the last start did with FlashInfer's PCIe-IPC all-reduce tuning (sglang/allreduce.py): from the log only
    out["allreduce_tuning"] = allreduce.tuning_from_log(log_tail(log_path)) if log_path else None
    if st != 200:
        out["latch"] = health_latch(client, st if path == "/ready" else None, log_path, timeout)
        return out
    out["latch"] = health_latch(client, st, log_path, timeout)
    mst, model, merr = client.model_info(timeout=timeout)
    sst, info, serr = client.server_info(timeout=timeout)
    out["answers"] = {client.model_info_path or "/model_info": _answer(mst, merr),
                      client.server_info_path or "/server_info": _answer(sst, serr)}
    out["model"] = model if mst == 200 and isinstance(model, dict) else {}
    out["server_info"] = info if sst == 200 and isinstance(info, dict) else {}
    out["accept_length"] = api.accept_length(out["server_info"]) if out["server_info"] else None
    out["model_path"] = out["model"].get("model_path") or out["server_info"].get("model_path")
    out["served_model_name"] = (out["model"].get("served_model_name")
                                or out["server_info"].get("served_model_name"))
    return out
