# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to the collection (controller side; may change at any time): the resume loop of a live-progress action.

A long module (server_ready, model_stage) returns after a slice of work with ``_<key>_pending`` and an opaque
``_<key>_state``; its action plugin calls it again with ``resume_state`` until it is done, printing a progress line
between the calls. The loop is the same for every such action; each supplies only its progress line.
"""

from __future__ import annotations


def run_resumable(action, module, args, task_vars, key, on_pending):
    """Run ``module`` through ``action`` (an ActionBase) until it is no longer pending; return its last result.

    ``on_pending(result)`` is called with each intermediate result (the pending flag and state removed).
    """
    state = None
    while True:
        call = dict(args)
        if state is not None:
            call["resume_state"] = state
        res = action._execute_module(module_name=module, module_args=call, task_vars=task_vars)
        pending = res.pop("_%s_pending" % key, False)
        state = res.pop("_%s_state" % key, None)
        if pending and state is not None:
            on_pending(res)
            continue
        return res
