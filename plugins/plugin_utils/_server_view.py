# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""One SGLang instance as the rest of the collection sees it: its resolved view (pure; controller side).

The one home of roles/server's settings (:data:`SETTINGS`, their kinds) and of their defaults (:data:`DEFAULTS`,
tested equal to roles/server/defaults/main.yml), and of :func:`build`, which turns the settings - with what the host
recorded at the instance's last start, when there is a record - into::

    instance, paths, host, port, url, health_path, python, version, model_path, served_model_name,
    spec {on, algorithm, draft_model_path, adaptive}, speculation (what it applies, in words, and where it came
    from: sglang/speculative.in_force), speculative (the setting), nodes, rank, tp_group,
    min_accept_length, manager, args

roles/server publishes it as the fact ``server_view`` (the server_info and server_plan actions) and records it in the
instance's ``argv.json``; status, stop, the benchmark, monitoring, the router and the molecule verifies read it
through the private filter ``_server_view`` instead of restating a setting's default.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.llmserve.sglang.plugins.module_utils.host.net import local_url
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import paths, valid_instance
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.plugin_utils._replica import replica_nodes

# Every setting of roles/server (server_<name>) with its kind; tests check this against meta/argument_specs.yml.
SETTINGS = {
    "instance": "str", "state": "str", "model_path": "str", "tp": "int", "host": "str", "port": "int",
    "served_model_name": "str", "speculative": "dict", "args": "dict", "env": "dict", "api_key": "str",
    "cuda_visible_devices": "list", "python": "str", "sglang_version": "str", "patches": "list",
    "patch_state": "str", "base_env": "dict", "service_manager": "str", "user": "str", "group": "str",
    "create_user": "bool", "home": "str", "config_dir": "str", "log_dir": "str", "log_keep": "int",
    "restart_policy": "str", "restart_sec": "int", "start_limit_burst": "int", "start_limit_interval": "int",
    "stop_timeout": "int", "unit_hardening": "dict", "unit_limits": "dict", "unit_extra": "dict",
    "restart": "str", "preflight": "bool", "verify_model": "bool", "model_check_unknown": "str", "on_failure": "str",
    "stop_grace_unready": "int", "wait": "bool", "ready_chat_probe": "bool",
    "lock_stale_after": "int", "adopt_dirs": "list",
    "ready_timeout": "int", "stall_timeout": "int", "ready_interval": "float", "stage_timeouts": "dict",
    "tail_lines": "int", "progress_interval": "float", "tp_group": "str", "dist_init_host": "str",
    "dist_init_port": "int", "peer_watch": "bool", "peer_watch_port": "int",
    # the health latch (sglang/gates.health_env): /health a status check; SGLANG_HEALTH_CHECK_TIMEOUT (0 = derived)
    "health_status_check": "bool", "health_check_timeout": "int",
    # read by tasks/spec_check.yml (module spec_check) after READY; checked here with the rest
    "spec_check": "str", "spec_min_accept_length": "float", "spec_check_requests": "int",
    "spec_check_max_new_tokens": "int", "spec_check_request_timeout": "float",
    # read by defaults/main.yml (which install record the SGLang settings above came from); checked here
    "sglang_record": "str",
}
OPTIONAL = ("dist_init_host", "peer_watch_port", "sglang_version")
# Settings whose null is a value: server_speculative: null (or '') serves without speculation.
NULL_IS_VALUE = ("speculative",)

# The default of every setting: what roles/server/defaults/main.yml resolves to on a host where roles/sglang did not
# run in this play and left no install record, and no models_list is staged (tests/unit/.../test_server_view.py
# renders that file and compares). The SGLang settings then follow roles/sglang's facts, else its record
# (:data:`SGLANG_FOLLOWS`), and peer_watch_port follows dist_init_port.
DEFAULTS = {
    "instance": "default", "state": "started", "model_path": "", "tp": 1, "host": "127.0.0.1", "port": client.DEFAULT_PORT,
    "served_model_name": "",
    "speculative": {"algorithm": "EAGLE3", "draft_model_path": "", "num_steps": None, "eagle_topk": None,
                    "num_draft_tokens": None, "adaptive": False},
    "args": {}, "env": {}, "api_key": "", "cuda_visible_devices": [],
    "sglang_record": "llmserve_sglang", "python": "/opt/sglang/venv/bin/python", "sglang_version": "", "patches": [],
    "patch_state": "", "base_env": {},
    "service_manager": "auto", "user": "sglang", "group": "sglang", "create_user": True, "home": "/var/lib/sglang",
    "config_dir": "/etc/sglang", "log_dir": "/var/log/sglang", "log_keep": 5, "restart_policy": "on-failure",
    "restart_sec": 30, "start_limit_burst": 3, "start_limit_interval": 1800, "stop_timeout": 120,
    "stop_grace_unready": 10,
    "unit_hardening": {"NoNewPrivileges": "yes", "ProtectSystem": "full", "ProtectHome": "read-only",
                       "PrivateTmp": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
                       "ProtectControlGroups": "yes", "RestrictSUIDSGID": "yes", "LockPersonality": "yes",
                       "RestrictRealtime": "yes"},
    "unit_limits": {"LimitNOFILE": 1048576, "LimitMEMLOCK": "infinity"}, "unit_extra": {},
    "restart": "changed", "preflight": True, "verify_model": True, "model_check_unknown": "refuse", "lock_stale_after": 7200, "adopt_dirs": [],
    "on_failure": "rollback",
    "wait": True, "ready_chat_probe": True, "ready_timeout": 1800, "stall_timeout": 600, "ready_interval": 2, "stage_timeouts": {},
    "tail_lines": 30, "progress_interval": 15,
    "tp_group": "", "dist_init_host": None, "dist_init_port": 50000, "peer_watch": True, "peer_watch_port": 50009,
    "health_status_check": True, "health_check_timeout": 0,
    "spec_check": "warn", "spec_min_accept_length": api.MIN_ACCEPT_LENGTH, "spec_check_requests": 3, "spec_check_max_new_tokens": 48,
    "spec_check_request_timeout": 30,
}
# Settings that follow roles/sglang: (its fact of this play, the key of its install record, the last resort).
SGLANG_FOLLOWS = {
    "python": ("sglang_venv_python", "venv_python"),
    "sglang_version": ("sglang_installed_version", "installed_version"),
    "patches": ("sglang_patches_applied", "patches_applied"),
    "patch_state": ("sglang_patch_state", "patch_state"),
    "base_env": ("sglang_server_env", "server_env"),
}
# What the instance's record says about the server that runs (it wins over the settings for these).
RUNNING = ("host", "port", "url", "health_path", "python", "version", "model_path", "served_model_name", "spec",
           "speculation")


def settings_from_vars(hv):
    """The settings of a host from its variables (``hostvars[host]`` or an action's task vars): ``server_<name>``
    where set, else what roles/server/defaults/main.yml would give - roles/sglang's facts, its install record
    (``ansible_local``), :data:`DEFAULTS`."""
    hv = hv if hv is not None else {}
    out = {}
    for name in SETTINGS:
        var = "server_" + name
        if var in hv and (hv[var] is not None or name in NULL_IS_VALUE):
            out[name] = hv[var]
    record_name = out.get("sglang_record", DEFAULTS["sglang_record"])
    # ansible_facts' ansible_local first: facts injected as ansible_* variables are deprecated from ansible-core 2.20
    facts = hv["ansible_facts"] if "ansible_facts" in hv else {}
    local = (facts or {}).get("ansible_local") or {}
    record = (local or {}).get(record_name) if record_name else None
    record = record if isinstance(record, dict) else {}
    for name, (fact, key) in SGLANG_FOLLOWS.items():
        if name in out:
            continue
        if fact in hv and hv[fact] is not None:
            out[name] = hv[fact]
        elif key in record:
            out[name] = record[key]
    if "peer_watch_port" not in out and "dist_init_port" in out:
        out["peer_watch_port"] = _int(out["dist_init_port"], DEFAULTS["dist_init_port"]) + 9
    return out


def _int(v, default):
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _float(v, default):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def resolved(raw):
    """``raw`` settings with every missing one taken from :data:`DEFAULTS` (a copy; nothing is validated here:
    server/plan.validate refuses a bad value by name)."""
    s = copy.deepcopy(DEFAULTS)
    for name, value in (raw or {}).items():
        if value is not None or name in OPTIONAL or name in NULL_IS_VALUE:
            s[name] = value
    return s


def _recorded_listen(recorded):
    """(host, port) from a recorded argv (an instance started before the view was recorded), or (None, None)."""
    argv = [str(a) for a in (recorded or {}).get("argv") or []]
    host = argv[argv.index("--host") + 1] if "--host" in argv[:-1] else None
    port = argv[argv.index("--port") + 1] if "--port" in argv[:-1] else None
    return host, port


def build(raw, name=None, groups=None, version=None, recorded=None, manager=None):
    """The view of one instance.

    ``raw``: the settings (``settings_from_vars`` or server/plan's validated ones); ``name``, ``groups``: the
    host's inventory name and the groups (ranks of a multi-node replica); ``version``: the SGLang version the venv
    reported, when asked; ``recorded``: the instance's ``argv.json`` (server_info's ``recorded``) - where it
    listens, what it runs, the SGLang it started with win over the settings (a port changed under
    ``server_restart: never`` is not served yet); ``manager``: the service manager resolved on the host (systemd or
    pidfile; else the setting, possibly ``auto``).
    """
    s = resolved(raw)
    inst = str(s["instance"] or "")
    host = str(s["host"] or DEFAULTS["host"])
    port = _int(s["port"], DEFAULTS["port"])
    nodes, problem = replica_nodes(name or "localhost", str(s["tp_group"] or ""), groups)
    spec = speculative.resolve(s["speculative"])
    ver = str(s["sglang_version"] or version or "")
    out = {
        "instance": inst,
        "paths": paths(dict(s, instance=inst, config_dir=str(s["config_dir"]), log_dir=str(s["log_dir"])))
        if valid_instance(inst) else None,
        "host": host, "port": port, "url": _url(host, port),
        "health_path": gates.health_path([ver]),
        "python": str(s["python"]), "version": ver,
        "model_path": str(s["model_path"] or ""), "served_model_name": str(s["served_model_name"] or ""),
        "spec": spec,
        # what the setting applies, in words, and where it came from (a benchmark run and its date, or the inventory)
        "speculation": speculative.in_force(s["speculative"]),
        # the setting itself (num_steps, adaptive_config, ...): what a benchmark mode starts from
        "speculative": copy.deepcopy(s["speculative"]) if isinstance(s["speculative"], dict) else s["speculative"],
        "nodes": nodes, "rank": nodes.index(name) if (name in nodes and not problem) else 0,
        # why server_tp_group gives no replica (sglang/replica's problem), or None
        "replica_problem": problem,
        "tp_group": str(s["tp_group"] or ""),
        "min_accept_length": _float(s["spec_min_accept_length"], DEFAULTS["spec_min_accept_length"]),
        "manager": str(manager or s["service_manager"]), "args": dict(s["args"] or {}),
        # the instance's GPUs on this host (tp over its nodes; CUDA_VISIBLE_DEVICES' list when set) and the NCCL_*
        # settings of its env (no other env: it can hold secrets): what the GPU gate's all-reduce runs over and with
        "gpus": {"count": max(1, _int(s["tp"], 1) // max(1, len(nodes))),
                 "visible": list(s["cuda_visible_devices"] or [])},
        "nccl_env": dict((k, str(v)) for k, v in dict(s["env"] or {}).items() if str(k).startswith("NCCL_")),
    }
    recorded = recorded if isinstance(recorded, dict) else {}
    was = recorded.get("view")
    if isinstance(was, dict) and was.get("instance") == inst:
        out.update((k, was[k]) for k in RUNNING if k in was)
    elif recorded.get("argv"):
        # a record written before the view was: where it listens, from its argv (as the role's status always did)
        rhost, rport = _recorded_listen(recorded)
        out["host"] = rhost or host
        out["port"] = _int(rport, port)
        out["url"] = _url(out["host"], out["port"])
        if recorded.get("python"):
            out["python"] = str(recorded["python"])
        if recorded.get("version"):
            out["version"] = str(recorded["version"])
            out["health_path"] = gates.health_path([out["version"]])
    return out


def of_host(hv, recorded=None, defaults=None):
    """The view of the instance of a host, from its variables (``hostvars[host]`` or an action's task vars).

    The one roles/server published in this run (the fact ``server_view``) when there is one and ``recorded`` is not
    given; else built from the host's ``server_*`` variables with :data:`DEFAULTS`, and ``recorded`` (the instance's
    argv.json). ``defaults``: settings a reader defaults otherwise (the router's and monitoring's documented
    ``*_worker_port``/``*_server_port``), used when the host sets none; a name that is no setting is a ValueError.
    """
    if recorded is None and "server_view" in hv and isinstance(hv["server_view"], dict):
        return hv["server_view"]
    settings = settings_from_vars(hv)
    for name, value in (defaults or {}).items():
        if name not in SETTINGS:
            raise ValueError("defaults names %r, which is no roles/server setting" % name)
        settings.setdefault(name, value)
    name = hv["inventory_hostname"] if "inventory_hostname" in hv else None
    groups = hv["groups"] if "groups" in hv else {}
    return build(settings, name=name, groups=dict((g, list(h)) for g, h in (groups or {}).items()),
                 recorded=recorded if isinstance(recorded, dict) else None)


def _url(host, port):
    try:
        return local_url(host, port)
    except (TypeError, ValueError):
        return ""


def record(view):
    """What ``argv.json`` keeps of the view (everything the readers need to find and judge the running server)."""
    return dict((k, v) for k, v in view.items() if k != "args")
