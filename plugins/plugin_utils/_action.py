# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to the collection (controller side; may change at any time): the preamble every action plugin of the
collection shared - no file transfer, check mode supported, no async, and (for the planners) no connection to the
host - and the door to roles/server's settings as the task sees them.

A subclass writes only ``decide(args, task_vars, result)``: the task's arguments (a copy), the task's variables
(never None) and the result ActionBase started; it returns the result. An action that runs no module of its own sets
``ARGSPEC``, the argument spec of its doc-only module (tests/unit/plugins/action/test_action_argspec.py holds the
module's DOCUMENTATION equal to it): the arguments are then validated, typed and defaulted as a module's would be.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_vars import templated_settings


class CollectionAction(ActionBase):
    """An action of the collection; set ``_requires_connection = True`` where it runs a module on the host."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False
    _requires_connection = False
    ARGSPEC = None

    def run(self, tmp=None, task_vars=None):
        result = super(CollectionAction, self).run(tmp, task_vars)
        args = dict(self._task.args)
        if self.ARGSPEC is not None:
            args = self.validate_argument_spec(argument_spec=self.ARGSPEC)[1]
        return self.decide(args, task_vars or {}, result)

    def decide(self, args, task_vars, result):  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def server_settings(self, task_vars):
        """roles/server's settings (``server_`` prefix dropped), templated, with their defaults resolved."""
        return templated_settings(task_vars, self._templar)
