# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Prometheus file_sd targets for the SGLang servers and routers of an inventory (roles/monitoring).

One target per replica (the rank-0 host of a server_tp_group: higher ranks only run a /health stub), one per
instance (several instances on one machine differ by port), one per router (its --prometheus-port). Every
problem is reported at once, naming the host and the fix, before anything is written.

Every value that becomes a label, a line of the rules file or a word of a runbook's command passes the one rule of
its kind (module_utils/host/values.py): host and instance names are plain words (the runbooks say ``systemctl status
sglang-<instance>``, ``-l <host>``), label names are Prometheus' and not ``__``-reserved, label values one line.
"""

from __future__ import annotations

import json

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.host.net import LOOPBACK, WILDCARD, host_port
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import valid_instance
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_view import of_host
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._replica import replica_nodes

SERVER_JOB = "sglang"
ROUTER_JOB = "sglang-router"


def _get(hv, key, default):
    return hv[key] if key in hv and hv[key] is not None else default


def host_records(hosts, hostvars, kind, default_port):
    """The records :func:`build_targets` takes, one per host of ``hosts`` (``hostvars`` as Ansible gives them).

    ``kind`` ``server``: where the instance listens, its replica and arguments, from its view (roles/server's
    settings and defaults, or what it published), ``default_port`` where the host sets no server_port;
    ``router``: roles/router's metrics listener from its view (published, else its router_* settings and the role's
    declared defaults), ``default_port`` where the host sets no router_prometheus_port and it is not None.
    """
    out = []
    for name in hosts or []:
        hv = hostvars[name] if name in hostvars else {}
        rec = {"name": name, "ansible_host": _get(hv, "ansible_host", name),
               "scrape": boolean(_get(hv, "monitoring_scrape", True), strict=False)}
        if kind == "server":
            v = of_host(hv, defaults={"port": default_port})
            rec.update(address=_get(hv, "monitoring_address", _get(hv, "router_worker_address", "")), host=v["host"],
                       port=v["port"], tp_group=v["tp_group"], instance=v["instance"], args=v["args"])
        elif kind == "router":
            v = _router_view.of_host(hv, defaults={"prometheus_port": default_port})
            rec.update(address=_get(hv, "monitoring_address", ""), host=v["prometheus_host"], port=v["prometheus_port"])
        else:
            raise ValueError("kind must be server or router, not %r" % (kind,))
        out.append(rec)
    return out


def _metrics_enabled(args):
    for key in ("enable-metrics", "enable_metrics"):
        if key in (args or {}):
            value = args[key]
            return value is True or str(value).lower() in ("true", "yes", "1")
    return False


def _address(rec, bind, monitoring_machine, what, fix):
    """Where Prometheus reaches a listener bound to `bind` on the machine of `rec` (None + error when it cannot)."""
    if rec.get("address"):
        return rec["address"], None
    bind = str(bind or "")
    if bind in WILDCARD:
        return rec.get("ansible_host") or rec["name"], None
    if bind in LOOPBACK:
        if (rec.get("ansible_host") or rec["name"]) == monitoring_machine:
            return "127.0.0.1", None
        return None, ("%s: %s listens on %s only, which Prometheus on %s cannot reach: %s, or set the hostvar "
                      "monitoring_address" % (rec["name"], what, bind, monitoring_machine, fix))
    return bind, None


def _shown(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def record_problems(rec, kind):
    """What keeps a host record's values out of labels and runbook commands, each naming the fix."""
    out = []
    name = rec.get("name")
    problem = values.shell_word_problem(name)
    if problem:
        out.append("inventory host %s %s: it becomes the llmserve_host label and a runbook's 'ansible-playbook -l "
                   "HOST': rename the host (ansible_host may stay what it is)" % (_shown(name), problem))
    if kind == "server":
        inst = rec.get("instance")
        if not valid_instance(inst) or values.shell_word_problem(inst):
            out.append("%s: server_instance %s cannot name a unit, a label and a runbook's 'systemctl status "
                       "sglang-INSTANCE': use letters, digits, '.', '_' or '-' (at most 64)"
                       % (_shown(name), _shown(inst)))
        problem = values.label_value_problem(rec.get("tp_group"))
        if problem:
            out.append("%s: server_tp_group %s %s: give the replica's group name"
                       % (_shown(name), _shown(rec.get("tp_group")), problem))
    return out


def settings_problems(settings):
    """roles/monitoring's settings that reach the rules file, prometheus.yml or the service's ARGS line:
    ``{alert_labels, external_labels, runbook_url, prometheus_args}`` (each optional), each problem with its fix."""
    out = []
    for key in ("alert_labels", "external_labels"):
        labels = settings.get(key)
        if labels is None:
            continue
        if not isinstance(labels, dict):
            out.append("monitoring_%s=%s is not a mapping: give {name: value}" % (key, _shown(labels)))
            continue
        for k, v in sorted(labels.items(), key=lambda kv: str(kv[0])):
            problem = values.label_name_problem(k)
            if problem:
                out.append("monitoring_%s key %s %s: give a label name like team or severity_route"
                           % (key, _shown(k), problem))
            problem = values.label_value_problem(v)
            if problem:
                out.append("monitoring_%s.%s=%s %s: give one value on one line" % (key, k, _shown(v), problem))
    url = settings.get("runbook_url")
    if url not in (None, ""):
        problem = values.url_problem(url)
        if problem:
            out.append("monitoring_runbook_url=%s %s: give the http(s) URL of docs/monitoring.md, or ''"
                       % (_shown(values.without_credentials(url) if isinstance(url, str) else url), problem))
    for i, arg in enumerate(settings.get("prometheus_args") or []):
        # a flag (--name=value) is a plain word after its dashes
        problem = values.shell_word_problem(arg.lstrip("-") if isinstance(arg, str) else arg)
        if problem:
            out.append("Prometheus argument %d %s %s (the service's ARGS line is read by sh): fix "
                       "monitoring_extra_args, monitoring_listen_address or monitoring_retention"
                       % (i, _shown(arg), problem))
    return out


def build_targets(servers, routers, groups, monitoring_machine, require_metrics=True):
    """servers/routers: lists of host records (:func:`host_records`); groups: inventory groups.

    Returns {"server": [file_sd group, ...], "router": [...], "skipped": [reason, ...], "errors": [...]}.
    """
    errors, skipped, seen = [], [], {}
    server_groups, router_groups = [], []

    def claim(target, name, kind):
        other = seen.get(target)
        if other and other != name:
            errors.append("%s and %s both point Prometheus at %s: give each instance its own server_port (or "
                          "monitoring_address)" % (other, name, target))
            return False
        seen[target] = name
        return other is None

    for rec in servers:
        name = rec["name"]
        if not rec.get("scrape", True):
            skipped.append("%s: monitoring_scrape is false" % name)
            continue
        problems = record_problems(rec, "server")
        if problems:
            errors.extend(problems)
            continue
        tp_group = rec.get("tp_group") or ""
        members, problem = replica_nodes(name, tp_group, groups)
        if problem:
            errors.append("%s: server_tp_group '%s' is not an inventory group holding this host: fix "
                          "server_tp_group" % (name, tp_group))
            continue
        instance = rec.get("instance") or "default"
        if not valid_instance(instance):  # the one rule of roles/server: never a label (nor a runbook word) else
            errors.append("%s: server_instance %r is not an instance name: use letters, digits, '.', '_' or '-' (at "
                          "most 64, starting with a letter or digit)" % (name, instance))
            continue
        if members[0] != name:
            skipped.append("%s: rank %d of replica %s (only rank 0 serves /metrics)"
                           % (name, members.index(name), tp_group))
            continue
        if require_metrics and not _metrics_enabled(rec.get("args")):
            errors.append("%s: SGLang runs without --enable-metrics, so it has no /metrics: add "
                          "'enable-metrics: true' to server_args (or set monitoring_scrape: false for this host)"
                          % name)
            continue
        address, err = _address(rec, rec.get("host", "127.0.0.1"), monitoring_machine, "SGLang (server_host)",
                                "set server_host: 0.0.0.0 (or an address the monitoring host reaches)")
        if err:
            errors.append(err)
            continue
        target = host_port(address, rec.get("port"))
        if claim(target, name, "server"):
            server_groups.append({"targets": [target], "labels": {
                "job": SERVER_JOB, "llmserve_host": name, "llmserve_instance": instance,
                "llmserve_replica": tp_group or name}})

    for rec in routers:
        name = rec["name"]
        if not rec.get("scrape", True):
            skipped.append("%s: monitoring_scrape is false" % name)
            continue
        problems = record_problems(rec, "router")
        if problems:
            errors.extend(problems)
            continue
        address, err = _address(rec, rec.get("host", "127.0.0.1"), monitoring_machine,
                                "sglang-router's metrics (router_prometheus_host)",
                                "set router_prometheus_host: 0.0.0.0")
        if err:
            errors.append(err)
            continue
        target = host_port(address, rec.get("port"))
        if claim(target, name, "router"):
            router_groups.append({"targets": [target], "labels": {"job": ROUTER_JOB, "llmserve_host": name}})

    return {"server": server_groups, "router": router_groups, "skipped": skipped, "errors": errors}
