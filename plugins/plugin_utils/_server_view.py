# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""One SGLang instance as the rest of the collection sees it: its resolved view (pure; controller side).

It reads roles/server's settings (:data:`SETTINGS`, their kinds) and their defaults (:data:`DEFAULTS`, tested equal
to roles/server/defaults/main.yml) from their one declaration (_server_settings.TABLE), and holds :func:`build`, which turns the settings - with what the host
recorded at the instance's last start, when there is a record - into::

    instance, paths, host, port, url, health_path, python, version, model_path, served_model_name,
    spec {on, algorithm, draft_model_path, adaptive}, speculation (what it applies, in words, and where it came
    from: sglang/speculative.in_force), speculative (the setting), nodes, rank, tp_group,
    min_accept_length, manager, args

roles/server publishes it as the fact ``server_view`` (the server_info and server_plan actions) and records it in the
instance's ``argv.json``; status, stop, the benchmark, monitoring, the router and the molecule verifies read it
through the private filter ``_server_view`` instead of restating a setting's default.
"""

from __future__ import annotations

import copy
import typing as t

from ansible_collections.llmserve.sglang.plugins.module_utils.host.net import local_url_or_empty
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import paths, valid_instance
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_settings as _settings
from ansible_collections.llmserve.sglang.plugins.plugin_utils._replica import replica_nodes

# Every setting of roles/server, its kind, default, what it follows: declared once in _server_settings (TABLE).
SETTINGS, DEFAULTS, OPTIONAL = _settings.SETTINGS, _settings.DEFAULTS, _settings.OPTIONAL
NULL_IS_VALUE, SGLANG_FOLLOWS = _settings.NULL_IS_VALUE, _settings.SGLANG_FOLLOWS
# What the instance's record says about the server that runs (it wins over the settings for these).
RUNNING = ("host", "port", "url", "health_path", "python", "version", "model_path", "served_model_name", "spec",
           "speculation")


class Spec(t.TypedDict):
    """Is speculation on, and with what (sglang/speculative.resolve): the draft's one name."""

    on: bool
    algorithm: str
    draft_model_path: str | None
    adaptive: bool


class Gpus(t.TypedDict):
    """The instance's GPUs on this host: what the GPU gate's all-reduce runs over."""

    count: int
    visible: list[t.Any]


class View(t.TypedDict):
    """The contract of :func:`build`: the fact ``server_view``, ``plan.view`` and argv.json's ``view`` (less ``args``).

    Readers in YAML reach it as ``server_view.<key>`` or ``__server_plan.view.<key>``; a key added here is a key every
    view has (tests/unit/plugins/plugin_utils/test_server_contracts.py).
    """

    instance: str
    paths: dict[str, str] | None  # module_utils/server/layout.paths; None for an invalid instance name
    host: str
    port: int
    url: str
    health_path: str
    python: str
    version: str
    model_path: str
    served_model_name: str
    spec: Spec
    speculation: dict[str, t.Any]  # sglang/speculative.in_force: setting, algorithm, threshold, tiers, source, words
    speculative: t.Any  # the setting itself: a mapping, or null/'' (off)
    nodes: list[str]
    rank: int
    replica_problem: str | None
    tp_group: str
    min_accept_length: float
    manager: str
    args: dict[str, t.Any]
    gpus: Gpus
    nccl_env: dict[str, str]


def settings_from_vars(hv: t.Mapping[str, t.Any] | None) -> dict[str, t.Any]:
    """The settings of a host from its variables (``hostvars[host]`` or an action's task vars): ``server_<name>``
    where set, else what roles/server/defaults/main.yml would give - roles/sglang's facts, its install record
    (``ansible_local``), :data:`DEFAULTS`."""
    hv = hv if hv is not None else {}
    out: dict[str, t.Any] = {}
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


def _int(v: t.Any, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _float(v: t.Any, default: float) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def resolved(raw: t.Mapping[str, t.Any] | None) -> dict[str, t.Any]:
    """``raw`` settings with every missing one taken from :data:`DEFAULTS` (a copy; nothing is validated here:
    server/plan.validate refuses a bad value by name)."""
    s = copy.deepcopy(DEFAULTS)
    for name, value in (raw or {}).items():
        if value is not None or name in OPTIONAL or name in NULL_IS_VALUE:
            s[name] = value
    return s


def _recorded_listen(recorded: t.Mapping[str, t.Any] | None) -> tuple[str | None, str | None]:
    """(host, port) from a recorded argv (an instance started before the view was recorded), or (None, None)."""
    argv = [str(a) for a in (recorded or {}).get("argv") or []]
    host = argv[argv.index("--host") + 1] if "--host" in argv[:-1] else None
    port = argv[argv.index("--port") + 1] if "--port" in argv[:-1] else None
    return host, port


def _serving(s: t.Mapping[str, t.Any], version: str | None,
             recorded: t.Mapping[str, t.Any] | None) -> tuple[str, int, str, str]:
    """(host, port, python, version) of the instance: the settings', or where a record written before the view was
    names them, its argv's and its own (as the role's status always read them)."""
    host, port = str(s["host"] or DEFAULTS["host"]), _int(s["port"], DEFAULTS["port"])
    python, ver = str(s["python"]), str(s["sglang_version"] or version or "")
    if recorded and recorded.get("argv"):
        rhost, rport = _recorded_listen(recorded)
        host, port = rhost or host, _int(rport, port)
        python = str(recorded["python"]) if recorded.get("python") else python
        ver = str(recorded["version"]) if recorded.get("version") else ver
    return host, port, python, ver


def build(raw: t.Mapping[str, t.Any] | None, name: str | None = None, groups: t.Mapping[str, list[str]] | None = None,
          version: str | None = None, recorded: t.Mapping[str, t.Any] | None = None, manager: str | None = None) -> View:
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
    recorded = recorded if isinstance(recorded, dict) else {}
    was = recorded.get("view")
    was = was if isinstance(was, dict) and was.get("instance") == inst else None
    # this room's own reading first, then each room it asks once, in turn (net, replica, speculative, layout, gates)
    host, port, python, ver = _serving(s, version, None if was else recorded)
    min_accept_length = _float(s["spec_min_accept_length"], DEFAULTS["spec_min_accept_length"])
    tp = _int(s["tp"], 1)
    url = local_url_or_empty(host, port)
    nodes, problem = replica_nodes(name or "localhost", str(s["tp_group"] or ""), groups)
    spec = speculative.resolve(s["speculative"])
    # what the setting applies, in words, and where it came from (a benchmark run and its date, or the inventory)
    in_force = speculative.in_force(s["speculative"])
    inst_paths = paths(dict(s, instance=inst, config_dir=str(s["config_dir"]), log_dir=str(s["log_dir"]))) \
        if valid_instance(inst) else None
    out: View = {
        "instance": inst, "paths": inst_paths,
        "host": host, "port": port, "url": url,
        "health_path": gates.health_path([ver]),
        "python": python, "version": ver,
        "model_path": str(s["model_path"] or ""), "served_model_name": str(s["served_model_name"] or ""),
        "spec": spec, "speculation": in_force,
        # the setting itself (num_steps, adaptive_config, ...): what a benchmark mode starts from
        "speculative": copy.deepcopy(s["speculative"]) if isinstance(s["speculative"], dict) else s["speculative"],
        "nodes": nodes, "rank": nodes.index(name) if (name in nodes and not problem) else 0,
        # why server_tp_group gives no replica (sglang/replica's problem), or None
        "replica_problem": problem,
        "tp_group": str(s["tp_group"] or ""),
        "min_accept_length": min_accept_length,
        "manager": str(manager or s["service_manager"]), "args": dict(s["args"] or {}),
        # the instance's GPUs on this host (tp over its nodes; CUDA_VISIBLE_DEVICES' list when set) and the NCCL_*
        # settings of its env (no other env: it can hold secrets): what the GPU gate's all-reduce runs over and with
        "gpus": {"count": max(1, tp // max(1, len(nodes))), "visible": list(s["cuda_visible_devices"] or [])},
        "nccl_env": dict((k, str(v)) for k, v in dict(s["env"] or {}).items() if str(k).startswith("NCCL_")),
    }
    if was:
        # what the host recorded (JSON it wrote at the start) is taken as it is
        t.cast("dict[str, t.Any]", out).update((k, was[k]) for k in RUNNING if k in was)
    return out


def of_host(hv: t.Mapping[str, t.Any], recorded: t.Any = None, defaults: t.Mapping[str, t.Any] | None = None) -> View:
    """The view of the instance of a host, from its variables (``hostvars[host]`` or an action's task vars).

    The one roles/server published in this run (the fact ``server_view``) when there is one and ``recorded`` is not
    given; else built from the host's ``server_*`` variables with :data:`DEFAULTS`, and ``recorded`` (the instance's
    argv.json). ``defaults``: settings a reader defaults otherwise (the router's and monitoring's documented
    ``*_worker_port``/``*_server_port``), used when the host sets none; a name that is no setting is a ValueError.
    """
    if recorded is None and "server_view" in hv and isinstance(hv["server_view"], dict):
        return t.cast(View, hv["server_view"])
    settings = settings_from_vars(hv)
    for setting, value in (defaults or {}).items():
        if setting not in SETTINGS:
            raise ValueError("defaults names %r, which is no roles/server setting" % setting)
        settings.setdefault(setting, value)
    name = hv["inventory_hostname"] if "inventory_hostname" in hv else None
    groups = hv["groups"] if "groups" in hv else {}
    return build(settings, name=name, groups=dict((g, list(h)) for g, h in (groups or {}).items()),
                 recorded=recorded if isinstance(recorded, dict) else None)


def record(view: View) -> dict[str, t.Any]:
    """What ``argv.json`` keeps of the view (everything the readers need to find and judge the running server)."""
    return dict((k, v) for k, v in view.items() if k != "args")
