# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""The gateway as the rest of the collection sees it: roles/router's view (pure; controller side).

:func:`build` turns the role's settings (_router_settings: :data:`SETTINGS`, :data:`DEFAULTS`) and, from the
router_plan action, the plan's workers and the health endpoint it decided, into::

    state, package, version, venv, python, install_os_packages, user, group, service_name, config_dir,
    host, port, url, prometheus_host, prometheus_port, policy, log_level, health_endpoint, health_check_port,
    worker_scheme, worker_port, workers, expected, urls_in_env, argv_workers,
    flags (the gateway's flags in its argv's order), optional_flags (those only newer gateways take), args,
    wait, ready_timeout, ready_interval

It never carries a secret (router_api_key) nor a worker URL's password (the plan masks them). The router_plan action
publishes it as the fact ``router_view``; roles/router's tasks read it from the plan, playbooks/restart.yml and
roles/monitoring through :func:`of_host` (the private filter ``_router_view``) instead of restating a default.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.host.net import local_url_or_empty
from ansible_collections.llmserve.sglang.plugins.module_utils.host.values import to_int
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_settings as _settings

DEFAULTS = _settings.DEFAULTS
# the settings the view carries as they are (router_<name>)
CARRIED = ("state", "package", "version", "venv", "python", "install_os_packages", "user", "group", "service_name",
           "config_dir", "host", "port", "prometheus_host", "prometheus_port", "policy", "log_level",
           "health_check_port", "worker_scheme", "worker_port", "args", "wait", "ready_timeout", "ready_interval")


def settings_from_vars(hv):
    """``router_<name>`` of a host's variables (``hostvars[host]``) where set and not null."""
    out = {}
    for name in DEFAULTS:
        var = "router_" + name
        if var in hv and hv[var] is not None:
            out[name] = hv[var]
    return out


def health_endpoint(setting, decided=None):
    """The worker endpoint the gateway probes: the setting unless ``auto``, then ``decided`` (the plan's answer from
    the workers' SGLang versions: _server_view.health_endpoint), None where nobody decided it."""
    return decided if setting == "auto" else setting


def build(settings, plan=None, decided_endpoint=None):
    """The view from ``settings`` (router_ dropped; a setting not given takes its declared default) and the plan
    (``{urls, expected, urls_in_env}``, _router_plan.plan) when there is one."""
    s = dict(DEFAULTS)
    s.update((k, v) for k, v in (settings or {}).items() if k in DEFAULTS)
    view = dict((name, s[name]) for name in CARRIED)
    view["url"] = local_url_or_empty(s["host"], s["port"])
    view["health_endpoint"] = health_endpoint(s["health_check_endpoint"], decided_endpoint)
    flags = dict((_settings.flag(name), s[name]) for name in _settings.FLAGS)
    flags["health-check-endpoint"] = view["health_endpoint"]
    view["flags"] = flags
    # only newer gateways take these: off at 0, left out (with a note) by router_argv where the installed one lacks them
    view["optional_flags"] = dict((_settings.flag(name), s[name]) for name in _settings.NEWER_FLAGS
                                  if (to_int(s[name]) or 0) > 0)
    plan = plan or {}
    view["workers"] = list(plan.get("urls") or [])
    view["expected"] = plan.get("expected")
    view["urls_in_env"] = bool(plan.get("urls_in_env"))
    # the URLs on the gateway's command line: none when they reach it through the 0600 environment file
    view["argv_workers"] = [] if view["urls_in_env"] else view["workers"]
    return view


def of_host(hv, defaults=None):
    """The view of the gateway of a host, from its variables (``hostvars[host]``): the one roles/router published in
    this run (the fact ``router_view``), else built from the host's ``router_*`` variables with the declared
    defaults and ``defaults`` (settings a reader defaults otherwise, e.g. monitoring_router_metrics_port; a name that
    is no setting is a ValueError). Built so, it has no workers and no decided health endpoint."""
    hv = hv if hv is not None else {}
    if "router_view" in hv and isinstance(hv["router_view"], dict):
        return hv["router_view"]
    settings = settings_from_vars(hv)
    for name, value in (defaults or {}).items():
        if name not in DEFAULTS:
            raise ValueError("defaults names %r, which is no roles/router setting" % name)
        if value is not None:
            settings.setdefault(name, value)
    return build(settings)


def setting(hv, name):
    """One ``router_<name>`` of a host's variables, else its declared default - for what the view never carries (the
    API key); a name that is no setting is a ValueError."""
    if name not in DEFAULTS:
        raise ValueError("%r is no roles/router setting" % (name,))
    return settings_from_vars(hv if hv is not None else {}).get(name, DEFAULTS[name])
