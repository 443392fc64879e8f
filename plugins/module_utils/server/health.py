# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which HTTP endpoint tells that an SGLang server can take requests, by version, and how long to give it.

SGLang 0.5.20 added ``/ready`` (200 once the server serves, 503 while it starts or drains); before it ``/health`` is
the only probe. SGLang answers ``/health`` within its own 1 s budget, so a probe timeout of 1 s flaps on a busy
server (modelplane#206): probes get more than that.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates


def endpoint(versions):
    """'/ready' when every version is known and has it, else '/health' (sglang/gates.health_path)."""
    return gates.health_path(versions)
