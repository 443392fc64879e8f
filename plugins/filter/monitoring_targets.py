# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: monitoring_targets (inventory host records -> Prometheus file_sd target groups)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.plugin_utils._monitoring_targets import (
    build_targets, host_records, settings_problems)


def monitoring_targets(servers, routers=None, groups=None, monitoring_machine="", require_metrics=True, settings=None):
    if not isinstance(servers, list) or not isinstance(routers or [], list):
        raise AnsibleFilterError("monitoring_targets: servers and routers must be lists of host records")
    result = build_targets(servers, routers or [], dict(groups or {}), str(monitoring_machine),
                           require_metrics=bool(require_metrics))
    if not isinstance(settings or {}, dict):
        raise AnsibleFilterError("monitoring_targets: settings must be a mapping")
    result["errors"] = settings_problems(settings or {}) + result["errors"]
    if result["errors"]:
        raise AnsibleFilterError("monitoring_targets: %d problem(s) with the scrape targets:\n- %s"
                                 % (len(result["errors"]), "\n- ".join(result["errors"])))
    return result


def _monitoring_records(hosts, hostvars, kind, default_port):
    """Private: the host records monitoring_targets takes (plugin_utils/_monitoring_targets.host_records)."""
    try:
        return host_records(hosts or [], hostvars, kind, default_port)
    except ValueError as exc:
        raise AnsibleFilterError("_monitoring_records: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"monitoring_targets": monitoring_targets, "_monitoring_records": _monitoring_records}
