# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to the collection (controller side; may change at any time): roles/server's settings as an action plugin
sees them - every ``server_<name>`` of plugin_utils/_server_view.SETTINGS that is set (the role's defaults when the
action runs inside roles/server), templated, plus what the defaults follow (roles/sglang's facts, its install
record, models_list)."""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_view import SETTINGS, SGLANG_FOLLOWS, settings_from_vars

_FOLLOWED = tuple(fact for fact, _key in SGLANG_FOLLOWS.values()) + ("ansible_local", "models_list")


def templated_settings(task_vars, templar):
    """``{name: value}`` of the role's settings (server_ prefix dropped) with their defaults resolved."""
    picked = {}
    for var in ["server_" + name for name in SETTINGS] + list(_FOLLOWED):
        if var in task_vars:
            picked[var] = templar.template(task_vars[var])
    return settings_from_vars(picked)
