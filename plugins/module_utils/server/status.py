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

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api


def _answer(status, error):
    """One line for what an endpoint answered: ``200``, ``HTTP 503``, or why nothing answered."""
    if status is None:
        return error or "no answer"
    return "200" if status == 200 else "HTTP %s" % status


def read(client, health_path=None, version=None, timeout=10.0):
    """``{ready, health, model, server_info, accept_length, model_path, served_model_name}`` of the server behind
    ``client``. ``health_path`` as the instance's view has it (else the one ``version`` has, else ``/ready`` with
    ``/health`` where the server lacks it). A server that is not ready is not asked more: its facts would be stale or
    missing, and each question costs a timeout on a hung one."""
    st, _body, err, path = client.readiness(path=health_path, version=version, timeout=timeout)
    out = {"ready": st == 200, "health": {"path": path, "status": st, "answer": _answer(st, err)},
           "model": {}, "server_info": {}, "accept_length": None, "model_path": None, "served_model_name": None,
           "answers": {}}
    if st != 200:
        return out
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
