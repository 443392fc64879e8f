# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private filters (roles' plumbing; may change without notice): the YAML side's door to rules that live once in
module_utils - a local URL for a listen address (host/net.py), the router's worker URLs (sglang/replica.py), the
gateway's view (plugin_utils/_router_view.py) and
the speculative accept length of a /server_info answer (sglang/api.py), the version gates and limits
(sglang/gates.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.module_utils.host.net import local_url, split_listen_address
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as view
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import accept_length
from ansible_collections.llmserve.sglang.plugins.plugin_utils._router_plan import replica_urls
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_view as router_view


def _local_url(listen_host, port=None, scheme="http"):
    """``listen_host`` and ``port``, or one ``HOST:PORT`` listen address when ``port`` is left out."""
    try:
        if port is None:
            listen_host, port = split_listen_address(listen_host)
        return local_url(listen_host, port, scheme)
    except (TypeError, ValueError):
        raise AnsibleFilterError("_local_url: %r / %r is not a listen address and port: give HOST and PORT, or HOST:PORT"
                                 % (listen_host, port))


def _replica_urls(hosts, hostvars, groups, scheme="http", default_port=view.DEFAULTS["port"]):
    """One worker URL per replica among ``hosts`` (rank 0 of each server_tp_group): port and group from each host's
    instance view (plugin_utils/_router_plan.replica_urls; ``default_port`` where a host sets no server_port)."""
    return replica_urls(hosts, hostvars, groups, scheme, default_port)


def _router_view(hv, defaults=None):
    """The view of the gateway of a host (plugin_utils/_router_view.of_host), from ``hostvars[host]``."""
    if hv is None or not hasattr(hv, "__contains__"):
        raise AnsibleFilterError("_router_view: give hostvars[HOST] (the gateway host's variables)")
    try:
        return router_view.of_host(hv, defaults=defaults)
    except ValueError as exc:
        raise AnsibleFilterError("_router_view: %s" % exc)


def _router_setting(hv, name):
    """One roles/router setting of a host (``hostvars[host]``), else its declared default (plugin_utils/_router_view):
    for what the view never carries, the API key."""
    if hv is None or not hasattr(hv, "__contains__"):
        raise AnsibleFilterError("_router_setting: give hostvars[HOST] (the gateway host's variables)")
    try:
        return router_view.setting(hv, name)
    except ValueError as exc:
        raise AnsibleFilterError("_router_setting: %s" % exc)


def _sglang_has(version, gate):
    """Whether SGLang ``version`` has ``gate`` (module_utils/sglang/gates.py; False for an unknown version)."""
    if gate not in gates.GATES:
        raise AnsibleFilterError("_sglang_has: %r is no gate: one of %s" % (gate, ", ".join(sorted(gates.GATES))))
    return gates.has(gate, version)


def _sglang_python_min(version):
    """The lowest Python SGLang ``version`` installs on (module_utils/sglang/gates.py; the default for an unknown one)."""
    return gates.python_min(version)


def _sglang_limit(name):
    """A limit SGLang sets on the collection (module_utils/sglang/gates.LIMITS), e.g. ``min_probe_timeout`` (s)."""
    if name not in gates.LIMITS:
        raise AnsibleFilterError("_sglang_limit: %r is no limit: one of %s" % (name, ", ".join(sorted(gates.LIMITS))))
    return gates.LIMITS[name]


def _accept_length(server_info):
    return accept_length(server_info)


class FilterModule(object):
    def filters(self):
        return {"_local_url": _local_url, "_replica_urls": _replica_urls, "_accept_length": _accept_length,
                "_router_view": _router_view, "_router_setting": _router_setting,
                "_sglang_has": _sglang_has, "_sglang_limit": _sglang_limit,
                "_sglang_python_min": _sglang_python_min}
