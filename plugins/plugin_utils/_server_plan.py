# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""roles/server's decisions, in one pure function: settings + host facts -> what to write and what to do.

``plan(validate(settings), host)`` is deterministic (no I/O, no clock, no randomness): the action plugin
``llmserve.sglang.server_plan`` checks the role's variables once (``validate``: a ``Checked``, the only form plan takes
settings in) and feeds it them and what ``llmserve.sglang.server_info`` read on the
host (GPU facts, the installed SGLang version, the instance's state, the hashes of the files on disk), and the
role's tasks only carry out what it returns:

  refusals   every bad setting, each with its fix (nothing else is computed to be acted upon when there is one)
  argv, env  the SGLang command line (module_utils/sglang/argv.render) and the server's environment
  files      every file of the instance with its text, mode and owner; ``write`` the ones that differ on disk
  fingerprint  hash of what the server runs with; compared with the one recorded when it was started
  action     none | start | restart | stop, and why
  preflight, ready, peer_watch   the arguments of the steps that follow

The checks are layered once: argument_specs check the types, ``validate()`` here checks meaning and ranges
(before anything running is touched), server_preflight checks the host (SGLang's own parser, paths, GPUs, port).
"""

from __future__ import annotations

import hashlib
import json
import re
import typing as t

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs
from ansible_collections.llmserve.sglang.plugins.module_utils.host.values import (
    HOST_RE, UNIT_KEY_RE, USER_RE, control_name as _control_name, to_bool, to_float, to_int)
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import (
    HELPER_DIR, HELPERS, RUN_ROOT, instance_dirs, resolve_manager, valid_instance)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render, shell_join
from ansible_collections.llmserve.sglang.plugins.plugin_utils._replica import NOT_A_GROUP, NOT_A_MEMBER
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import compare as version_compare, is_version
from ansible_collections.llmserve.sglang.plugins.module_utils.server.orphans import MARKER as ORPHAN_MARKER
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_settings as _settings
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as server_view
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_view import OPTIONAL, Spec, View

MANAGED = "Managed by llmserve.sglang.server: changes here are overwritten."
API_KEY_ENV = "SGLANG_SERVER_API_KEY"
ACTIONS = ("none", "start", "restart", "stop")

# Every setting of roles/server with its kind, default, choices and range: _server_settings.TABLE.
CHOICES, RANGES = _settings.CHOICES, _settings.RANGES
SPEC_ALGORITHMS = speculative.ALGORITHMS
# SGLang's flag for weights on a shared filesystem ("Each rank prefetches a fraction of the shards, reducing total
# network I/O on shared filesystems (NFS/Lustre) from N*checkpoint to 1*checkpoint"): in the 0.5.15.post1 and 0.5.23
# wheels' server arguments, not in 0.5.9's or 0.5.10.post1's (tests/unit read them). Applied from the first release
# seen with it; between 0.5.10.post1 and 0.5.15.post1 it is only recommended.
PREFETCH_FLAG = "weight-loader-prefetch-checkpoints"
PREFETCH_SINCE = gates.GATES["weight_prefetch"]

ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FLAG_RE = re.compile(r"^(--)?[A-Za-z0-9][A-Za-z0-9_-]*$")

# The settings as validate() returns them: every name of _server_settings.TABLE, checked and normalised, plus spec_on.
Settings = t.Dict[str, t.Any]
Action = t.Literal["none", "start", "restart", "stop"]


# --------------------------------------------------------------------------------------------------------------------
# The plan's contract: what roles/server's tasks read as __server_plan.<key> (tests/unit/plugins/plugin_utils/
# test_server_contracts.py holds every key read by a task or a named consumer, and every key a task reads declared)
# --------------------------------------------------------------------------------------------------------------------

class File(t.TypedDict):
    """A file of the instance, with its text (the instance controller writes the ones in ``write``)."""

    path: str
    content: str
    mode: str
    owner: str
    group: str
    secret: bool
    sha256: str


class Dir(t.TypedDict):
    """A directory of the instance and what it must be."""

    path: str
    owner: str
    group: str
    mode: str


class Service(t.TypedDict):
    """What the tasks pass to the instance's controller, the lock and the service user, whatever the action."""

    user: str
    group: str
    home: str
    adopt_dirs: list[str]
    stop_timeout: int
    stop_grace_unready: int
    log_keep: int
    on_failure: str
    lock_stale_after: int
    preflight: bool
    wait: bool


class ModelCheck(t.TypedDict):
    """llmserve.sglang.model_verify's arguments (:func:`model_check_args`)."""

    python: str
    env: dict[str, str]
    user: str | None
    cache_dir: str
    trust_remote_code: bool
    model_impl: str
    tokenizer_path: str | None
    skip_tokenizer_init: bool
    unknown: str
    chat_template: str | None


class Preflight(t.TypedDict):
    """llmserve.sglang.server_preflight's arguments, and whether model_verify runs first."""

    python: str
    argv: list[str]
    model_path: str
    tp: int
    nnodes: int
    gpu_count: int | None
    host: str
    port: int
    owner_unit: str | None
    owner_pid: int | None
    env: dict[str, str]
    become_user: str
    verify_model: bool
    model_check: ModelCheck
    become_error: str | None


class Ready(t.TypedDict):
    """llmserve.sglang.server_ready's arguments."""

    url: str
    log_path: str
    unit: str | None
    pid_file: str | None
    node_rank: int
    timeout: int
    stall_timeout: int
    stage_timeouts: dict[str, t.Any] | None
    interval: float
    tail_lines: int
    progress_interval: float
    chat_probe: bool
    sglang_version: str
    host: dict[str, t.Any]  # :func:`ready_host`


class Watch(t.TypedDict):
    """The peer watch of a multi-node start (its peers and token filled in by :func:`settle`)."""

    name: str | None
    endpoint: str
    port: int
    timeout: int
    peers: list[str]
    token: str | None


class SpecCheck(t.TypedDict):
    """tasks/spec_check.yml's arguments (llmserve.sglang.spec_check)."""

    run: bool
    mode: str
    requests: int
    max_new_tokens: int
    request_timeout: float


class ModelStorage(t.TypedDict):
    """Where the weights are read from (:func:`model_storage`)."""

    network: list[str]
    apply: dict[str, t.Any]
    notes: list[str]


class _PlanAlways(t.TypedDict):
    """The keys of every plan, a refused one included."""

    refusals: list[str]
    warnings: list[str]
    manager: str
    nodes: list[str]
    node_rank: int
    nnodes: int
    action: Action
    why: str
    write: list[str]
    remove: list[str]
    dirs: list[Dir]
    files: list[File]


class Plan(_PlanAlways, total=False):
    """The contract of :func:`plan`: what roles/server's tasks carry out (``__server_plan``).

    Past the keys of every plan: ``paths`` .. ``service`` once the instance's paths are known; ``watch`` also for a
    stop; the rest for a start that passed every check. ``peer_token`` comes from the server_plan action.
    """

    paths: dict[str, str]
    label: str
    running: bool
    pid: int
    service: Service
    watch: Watch | None
    version: str
    view: View
    argv: list[str]
    env: dict[str, str]
    model_storage: ModelStorage
    dirs_missing: list[str]
    create_user: bool
    user_pending: bool
    fingerprint: str
    changed: bool
    daemon_reload: bool
    needs_write: bool
    preflight: Preflight
    ready: Ready
    peer_endpoint: str
    instance: str
    restart: str
    spec_check: SpecCheck
    peer_token: str


class Refusals(object):
    """Collects 'server_X=VALUE: problem: fix' lines."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, name: str, value: t.Any, problem: str, fix: str, secret: bool = False) -> None:
        shown = "(hidden)" if secret else json.dumps(value, sort_keys=True, default=str)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        self.items.append("server_%s=%s %s: %s" % (name, shown, problem, fix))


_to_int, _to_float, _to_bool = to_int, to_float, to_bool  # host/values: the one coercer family


def _abs_path(v: t.Any) -> bool:
    return isinstance(v, str) and v.startswith("/") and not re.search(r"\s", v) and "/../" not in v + "/"


def _scalar(v: t.Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


class Checked(t.NamedTuple):
    """What :func:`validate` made of the settings: the only form :func:`plan` takes them in (it never reads a raw
    setting, so every value it decides on passed the one rule of its kind)."""

    settings: Settings
    refusals: Refusals


def validate(raw: t.Mapping[str, t.Any]) -> Checked:
    """Check and normalise every setting. Returns (settings, refusals)."""
    bad = Refusals()
    s: Settings = {}
    for setting in _settings.TABLE:  # kinds here, then the declared choices and ranges
        name, kind = setting.name, setting.kind
        v = raw.get(name)
        if name == "speculative" and (v is None or v == ""):
            v = {"algorithm": ""}  # null or '': served without speculation (sglang/speculative.py)
        if v is None and name in OPTIONAL:
            s[name] = None
            continue
        if kind == "int":
            n = _to_int(v)
            if n is None:
                bad.add(name, v, "is not a whole number", "give an integer, e.g. server_%s: %s" % (name, _example(name)))
            s[name] = n
        elif kind == "float":
            n = _to_float(v)
            if n is None:
                bad.add(name, v, "is not a number", "give a number of seconds, e.g. server_%s: %s" % (name, _example(name)))
            s[name] = n
        elif kind == "bool":
            b = _to_bool(v)
            if b is None:
                bad.add(name, v, "is not a boolean", "give true or false")
            s[name] = b
        elif kind == "str":
            if v is None:
                v = ""
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                bad.add(name, v, "is not a string", "give a plain string", secret=name == "api_key")
                v = ""
            s[name] = str(v)
        elif kind == "dict":
            if v is None:
                v = {}
            if not isinstance(v, dict):
                bad.add(name, v, "is not a mapping", "give a YAML mapping ({key: value})")
                v = {}
            s[name] = dict(v)
        elif kind == "list":
            if v is None:
                v = []
            if not isinstance(v, (list, tuple)):
                bad.add(name, v, "is not a list", "give a YAML list ([a, b])")
                v = []
            s[name] = list(v)

    for name, choices in CHOICES.items():
        if s.get(name) not in choices:
            bad.add(name, raw.get(name), "is not one of %s" % ", ".join(choices), "pick one of them")
    for name, (lo, hi) in RANGES.items():
        n = s.get(name)
        if n is None:
            continue
        if n < lo or (hi is not None and n > hi):
            bad.add(name, n, "is out of range", "give a value %s" % ("from %s to %s" % (lo, hi) if hi is not None else ">= %s" % lo))

    if not valid_instance(s["instance"]):
        bad.add("instance", s["instance"], "cannot name a systemd unit or a directory",
                "use letters, digits, '.', '_' or '-' (at most 64), e.g. server_instance: kimi-tp8")
    if s["sglang_record"] and not ENV_NAME_RE.match(s["sglang_record"]):
        bad.add("sglang_record", s["sglang_record"], "is not the name of a local facts record",
                "give roles/sglang's sglang_local_fact (letters, digits, '_'), e.g. llmserve_sglang, or '' for none")
    for name in ("user", "group"):
        if not USER_RE.match(s[name]):
            bad.add(name, s[name], "is not a valid user or group name",
                    "use lower-case letters, digits, '_' or '-' (at most 32), e.g. sglang")
    for name in ("home", "config_dir", "log_dir", "python"):
        if not _abs_path(s[name]):
            bad.add(name, s[name], "is not an absolute path without spaces", "give a path like /opt/sglang/venv/bin/python"
                    if name == "python" else "give an absolute path, e.g. /var/lib/sglang")
    for name in ("home", "config_dir", "log_dir"):  # the one path rule (host/owned_dirs); links: on the target
        clean = owned_dirs.quiet_normalise(s[name]) if _abs_path(s[name]) else None
        if clean and owned_dirs.system_reason(clean) == "system":
            bad.add(name, s[name], "is a system directory or holds one: the role would chmod and chown it",
                    "give a directory of its own, e.g. /var/lib/sglang, /etc/sglang and /var/log/sglang")
        elif clean and owned_dirs.refusal(clean):
            bad.add(name, s[name], *owned_dirs.refusal(clean))
    if not s["host"] or not HOST_RE.match(s["host"]):
        bad.add("host", s["host"], "is not an address to listen on", "give an IP address or host name, e.g. 127.0.0.1 or 0.0.0.0")
    if s["dist_init_host"] is not None and (not s["dist_init_host"] or not HOST_RE.match(str(s["dist_init_host"]))):
        bad.add("dist_init_host", s["dist_init_host"], "is not an address", "give the IP address other nodes reach this host on")

    started = s["state"] == "started"
    if started:
        mp = s["model_path"]
        if not mp:
            bad.add("model_path", mp, "is empty", "set it to the model directory on the host, e.g. /models/Kimi-K2.5-int4")
        elif re.search(r"\s", mp) or not (mp.startswith("/") or re.match(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$", mp)):
            bad.add("model_path", mp, "is neither an absolute path nor a hub id (org/name)",
                    "give the checkpoint directory, e.g. /models/Kimi-K2.5-int4")
    _validate_spec(s, raw, bad, started)
    _validate_env(s, bad)
    _validate_args(s, bad)
    _validate_text(s, bad)
    for name in ("unit_hardening", "unit_limits", "unit_extra"):
        for k, v in sorted(s[name].items(), key=lambda kv: str(kv[0])):
            if not UNIT_KEY_RE.match(str(k)):
                bad.add(name, {k: v}, "has a key that is not a systemd setting name", "use names like LimitNOFILE")
            elif not _scalar(v) or _control_name(str(v)):  # systemd ends a line at CR too
                bad.add(name, {k: v}, "has a value that is not one line", "give a single-line value")
    cvd = s["cuda_visible_devices"]
    if any(_to_int(d) is None or _to_int(d) < 0 for d in cvd) or len(set(str(d) for d in cvd)) != len(cvd):
        bad.add("cuda_visible_devices", cvd, "must list distinct GPU indexes >= 0", "e.g. server_cuda_visible_devices: [0, 1, 2, 3]")
    else:
        s["cuda_visible_devices"] = [_to_int(d) for d in cvd]
    if not all(isinstance(p, str) for p in s["patches"]):
        bad.add("patches", s["patches"], "must be a list of patch ids", "leave it to roles/sglang (sglang_patches_applied)")
    if s["sglang_version"] and not is_version(s["sglang_version"]):
        bad.add("sglang_version", s["sglang_version"], "is not a version", "give it as X.Y.Z (e.g. 0.5.23), or leave it empty to ask the venv")
    for k, v in sorted(s["stage_timeouts"].items(), key=lambda kv: str(kv[0])):
        n = _to_float(v)
        if n is None or n <= 0:
            bad.add("stage_timeouts", {k: v}, "has a timeout that is not a positive number", "give seconds, e.g. {load_weights: 900}")
    return Checked(s, bad)


def _example(name: str) -> int:
    return {"tp": 8, "port": 30000, "ready_interval": 2, "progress_interval": 15}.get(name, 1)


def _validate_spec(s: Settings, raw: t.Mapping[str, t.Any], bad: Refusals, started: bool) -> None:
    # the one "is it on" rule and the one check of a spec that is on (sglang/speculative.py); the renderer trusts it
    s["spec_on"] = bool(speculative.algorithm(s["speculative"]))
    if not s["spec_on"] or not started:
        return
    s["speculative"], found = speculative.problems(s["speculative"])
    for shown, problem, fix in found:
        bad.add("speculative", shown, problem, fix)


def _validate_env(s: Settings, bad: Refusals) -> None:
    for name in ("env", "base_env"):
        for k, v in sorted(s[name].items(), key=lambda kv: str(kv[0])):
            if not ENV_NAME_RE.match(str(k)):
                bad.add(name, {k: v}, "has a name that is not an environment variable name (systemd would ignore it)",
                        "use letters, digits and '_', not starting with a digit, e.g. NCCL_DEBUG")
            elif not _scalar(v):
                bad.add(name, {k: v}, "has a value that is not a string or number", "give a plain value, e.g. \"1\"")
            elif v is not None and _control_name(str(v)):
                bad.add(name, {k: "..."}, "has a value with %s" % _control_name(str(v)), "give a one-line value")


# Numeric SGLang options whose argparse type is int/float with no range (SGLang checks none of these before it has
# loaded the weights, or at all): (low, low_inclusive, high or None, example). Keyed by the option name as written.
ARG_RANGES = {
    "mem-fraction-static": (0.0, False, 1.0, 0.85),
    "schedule-conservativeness": (0.0, False, None, 1.0),
    "max-running-requests": (1, True, None, 256),
    "cuda-graph-max-bs": (1, True, None, 128),
    "max-total-tokens": (1, True, None, 262144),
    "context-length": (1, True, None, 131072),
    "max-prefill-tokens": (1, True, None, 16384),
    "page-size": (1, True, None, 64),
    "stream-interval": (1, True, None, 1),
    "dp-size": (1, True, None, 1),
    "pp-size": (1, True, None, 1),
    "ep-size": (1, True, None, 8),
    "watchdog-timeout": (0.0, False, None, 300),
    "dist-timeout": (1, True, None, 600),
    "num-continuous-decode-steps": (1, True, None, 1),
    "max-queued-requests": (1, True, None, 1024),
}


def _validate_text(s: Settings, bad: Refusals) -> None:
    """Text that reaches a header, a unit line or an argv element: one line of printable characters."""
    names = ("api_key", "served_model_name", "model_path", "python", "home", "config_dir", "log_dir", "host")
    checks = [(name, s[name], s[name]) for name in names]
    for key in ("draft_model_path", "algorithm"):
        if isinstance(s["speculative"].get(key), str):
            checks.append(("speculative", s["speculative"][key], {key: s["speculative"][key]}))
    for name, value, shown in checks:
        what = _control_name(value)
        if what:
            bad.add(name, shown, "contains %s" % what,
                    "remove it (a stray line break from a vault or a file lookup: use | trim)", secret=name == "api_key")


def _validate_args(s: Settings, bad: Refusals) -> None:
    for k, v in sorted(s["args"].items(), key=lambda kv: str(kv[0])):
        if not FLAG_RE.match(str(k)):
            bad.add("args", {k: v}, "has a key that is not an SGLang option name", "give option names like mem-fraction-static")
            continue
        values = v if isinstance(v, (list, tuple)) else [v]
        what = next((w for w in (_control_name(x) for x in values) if w), None)
        if what:
            bad.add("args", {k: v}, "has a value that contains %s" % what,
                    "give it on one line without control characters (| trim a looked-up value)")
            continue
        rng = ARG_RANGES.get(str(k).lstrip("-").replace("_", "-"))
        if rng is None or v is None or isinstance(v, bool):
            continue
        low, low_inclusive, high, example = rng
        n = _to_float(v)
        if n is None:
            continue  # not a number: SGLang's own parser (the preflight) says so in its words
        if n < low or (n == low and not low_inclusive) or (high is not None and n > high):
            bounds = "%s %s%s" % (">=" if low_inclusive else ">", low, " and <= %s" % high if high is not None else "")
            bad.add("args", {k: v}, "is out of range (SGLang does not check it before loading the model)",
                    "give a value %s, e.g. %s: %s" % (bounds, k, example))


# --------------------------------------------------------------------------------------------------------------------
# What the plan writes
# --------------------------------------------------------------------------------------------------------------------

def env_text(s: Settings, env: t.Mapping[str, str]) -> str:
    lines = ["# " + MANAGED,
             "# Environment of SGLang instance '%s' (the API key, if any, is in api-key.yaml, read by SGLang via --config)."
             % s["instance"]]
    lines += ["%s=%s" % (k, json.dumps(str(env[k]))) for k in sorted(env)]
    return "\n".join(lines) + "\n"


def api_key_text(s: Settings) -> str:
    # JSON strings are YAML double-quoted scalars: SGLang's yaml.safe_load reads back exactly the key.
    return ("# SGLang --config file of instance '%s': SGLang merges it inside the process (prepare_server_args),\n"
            "# so the API key stays out of the server's argv (ps, /proc/PID/cmdline). %s\n"
            "api-key: %s\n" % (s["instance"], MANAGED, json.dumps(s["api_key"])))


def unit_text(s: Settings, p: dict[str, str], argv: list[t.Any], node_rank: int, nnodes: int) -> str:
    cmd = [s["python"], "-m", "sglang.launch_server"]
    exec_lines = shell_join(cmd)
    for a in (str(x) for x in argv):
        exec_lines += (" \\\n   " if a.startswith("--") else " ") + shell_join([a])
    out = [
        "# " + MANAGED,
        "# SGLang server instance '%s' (node %d of %d)." % (s["instance"], node_rank, nnodes),
        "# Log: %s (previous runs rotated beside it)." % p["log"],
        "[Unit]",
        "Description=SGLang server %s" % s["instance"],
        "Documentation=https://github.com/llmserve/sglang/tree/main/docs/roles/server.md",
        "After=network-online.target",
        "Wants=network-online.target",
        "StartLimitIntervalSec=%d" % s["start_limit_interval"],
        "StartLimitBurst=%d" % s["start_limit_burst"],
        "",
        "[Service]",
        "Type=simple",
        "User=%s" % s["user"],
        "Group=%s" % s["group"],
        "WorkingDirectory=%s" % s["home"],
        "Environment=HOME=%s" % s["home"],
        "EnvironmentFile=%s" % p["env"],
        "ExecStart=" + exec_lines,
        "StandardOutput=append:%s" % p["log"],
        "StandardError=append:%s" % p["log"],
        "Restart=%s" % s["restart_policy"],
        "RestartSec=%d" % s["restart_sec"],
        "TimeoutStopSec=%d" % s["stop_timeout"],
        "KillMode=control-group",
    ]
    for table in ("unit_limits", "unit_hardening"):
        out += ["%s=%s" % (k, _unit_value(v)) for k, v in s[table].items()]
    out.append("ReadWritePaths=%s" % s["home"])
    out += ["%s=%s" % (k, _unit_value(v)) for k, v in s["unit_extra"].items()]
    out += ["", "[Install]", "WantedBy=multi-user.target"]
    return "\n".join(out) + "\n"


def _unit_value(v: t.Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def launch_spec_text(s: Settings, p: dict[str, str], argv: list[t.Any]) -> str:
    spec = {
        "_comment": "SGLang instance %s on a host without systemd: read by %s (start --spec). %s"
                    % (s["instance"], p["supervisor"], MANAGED),
        "pid_file": p["pid_file"], "log": p["log"], "env_file": p["env"], "user": s["user"], "cwd": s["home"],
        "timeout": s["stop_timeout"],
        "command": [s["python"], "-m", "sglang.launch_server"] + [str(a) for a in argv],
    }
    return json.dumps(spec, indent=4, sort_keys=True) + "\n"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------------------------------------

def _topology(s: Settings, view: View, host: t.Mapping[str, t.Any], bad: Refusals) -> str | None:
    """The refusals of the replica the view found (its nodes and this host's rank), and the rendezvous address
    (rank 0's)."""
    name = host.get("name") or "localhost"
    nodes, problem = view["nodes"], view["replica_problem"]
    if problem == NOT_A_GROUP:
        bad.add("tp_group", s["tp_group"], problem, "set it to the group whose hosts form one TP replica")
    elif problem == NOT_A_MEMBER:
        bad.add("tp_group", s["tp_group"], "%s %s" % (problem, name), "add the host to the group or unset server_tp_group for it")
    if problem or not s["tp_group"]:
        return None
    if s["tp"] and s["tp"] % len(nodes):
        bad.add("tp", s["tp"], "(total across nodes) does not divide over the %d hosts of %s" % (len(nodes), s["tp_group"]),
                "set server_tp to a multiple of the node count (e.g. %d)" % (8 * len(nodes)))
    rank0 = host.get("rank0") or {}
    addr = rank0.get("dist_init_host") or rank0.get("default_ipv4") or rank0.get("ansible_host") or nodes[0]
    return "%s:%d" % (addr, s["dist_init_port"])


def _running(state: t.Mapping[str, t.Any]) -> bool:
    """A unit waiting to be restarted after a crash (activating/auto-restart) does not count as running."""
    active = state.get("active_state") or "inactive"
    return active in ("active", "reloading") or (active == "activating" and state.get("sub_state") != "auto-restart")


def plan(checked: Checked, host: t.Mapping[str, t.Any]) -> Plan:
    """The whole decision, from the settings :func:`validate` checked (and its refusals). ``host`` holds what server_info read and a few inventory facts:

    name, groups, service_mgr, check_mode, helper_python, helpers {name: text}, rank0 {dist_init_host, default_ipv4,
    ansible_host}, own {dist_init_host, default_ipv4, ansible_host}, gpu (ansible_facts.gpu), version (installed SGLang
    or None), version_error, state {active_state, sub_state, pid, load_state, ...}, files {path: sha256 or None},
    dirs {path: exists}, fingerprint (recorded), user_exists, group_exists.
    """
    if not isinstance(checked, Checked):
        raise TypeError("plan() takes validate()'s result, not raw settings")
    s, bad = checked.settings, Refusals()
    bad.items = list(checked.refusals.items)  # the caller's refusals stay as validate() wrote them
    manager, manager_error = resolve_manager(s["service_manager"], host.get("service_mgr"), host.get("name", "the host"))
    if manager_error:
        bad.items.append(manager_error)
    version = s["sglang_version"] or host.get("version")
    # the instance as the rest of the collection sees it: its paths, nodes and rank, URL and speculation, once
    view = server_view.build(s, name=host.get("name"), groups=host.get("groups"), version=str(version or ""),
                             manager=manager)
    p = view["paths"] if _abs_path(s["config_dir"]) and _abs_path(s["log_dir"]) else None
    nodes, rank, spec = view["nodes"], view["rank"], view["spec"]
    dist_addr = _topology(s, view, host, bad)
    out: Plan = {"refusals": bad.items, "warnings": [], "manager": manager, "nodes": nodes, "node_rank": rank,
                 "nnodes": len(nodes), "action": "none", "why": "", "write": [], "remove": [], "dirs": [], "files": []}
    if p is None:
        return out
    out["paths"] = p
    out["label"] = p["unit_name"] if manager == "systemd" else "sglang-%s (pid file %s)" % (s["instance"], p["pid_file"])
    state = host.get("state") or {}
    running = _running(state)
    out["running"] = running
    out["pid"] = state.get("pid") or 0

    # what the tasks pass to the instance's controller, the lock and the service user, whatever the action
    out["service"] = {"user": s["user"], "group": s["group"], "home": s["home"], "adopt_dirs": s["adopt_dirs"],
                      "stop_timeout": s["stop_timeout"], "stop_grace_unready": s["stop_grace_unready"],
                      "log_keep": s["log_keep"], "on_failure": s["on_failure"], "lock_stale_after": s["lock_stale_after"],
                      "preflight": s["preflight"], "wait": s["wait"]}
    if s["state"] == "stopped":
        out["watch"] = None  # the act task reads it whatever the action
        if not bad.items:
            out["action"] = "stop" if running or state.get("enabled") else "none"
            out["why"] = "server_state is stopped"
        return out

    if not version:
        bad.items.append("%s cannot report an installed sglang (%s): run roles/sglang first, or set server_python to the "
                         "python of the venv that holds sglang" % (s["python"], host.get("version_error") or "no answer"))
    if bad.items:
        return out
    out["version"] = t.cast(str, version)  # refused above when empty
    out["view"] = view

    # ---- the command line and the environment
    base_env = dict((k, v) for k, v in s["base_env"].items() if v is not None)
    user_env = dict((k, v) for k, v in s["env"].items() if v is not None)
    settings = {
        "model_path": s["model_path"], "tp": s["tp"], "host": s["host"], "port": s["port"],
        "served_model_name": s["served_model_name"] or None,
        "speculative": dict(s["speculative"], algorithm=spec["algorithm"]) if spec["on"] else None,
        "args": s["args"], "api_key_env": API_KEY_ENV if s["api_key"] else None,
        "health_status_check": s["health_status_check"], "health_check_timeout": s["health_check_timeout"],
    }
    if len(nodes) > 1:
        settings.update(nnodes=len(nodes), node_rank=rank, dist_init_addr=dist_addr)
    storage = model_storage(s, spec, host.get("model_fs") or {}, str(version))
    if storage["apply"]:
        settings["args"] = dict(s["args"], **storage["apply"])
    gpu = host.get("gpu") or {}
    env_for_render = dict(base_env)
    env_for_render.update(user_env)
    launch = render(settings, str(version), gpu=gpu, patches=s["patches"], env=env_for_render,
                    adaptive_config_path=p["adaptive"], api_key_config_path=p["api_key"])
    if launch["errors"]:
        out["refusals"] = ["server settings rejected for SGLang %s: %s" % (version, e) for e in launch["errors"]]
        return out
    # compile caches on persistent disk, per instance and version (sglang/caches.py); anything set explicitly wins
    env = caches.env(s["home"], s["instance"], version)
    env.update(base_env)
    env.update(launch["env"])
    env.update(user_env)
    # every process of the instance inherits it (through setsid and double forks): how a stop finds what it left
    env[ORPHAN_MARKER] = s["instance"]
    if s["cuda_visible_devices"]:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(d) for d in s["cuda_visible_devices"])
    out.update({"argv": launch["argv"], "env": dict((k, str(v)) for k, v in env.items()), "warnings": launch["warnings"]})
    out["model_storage"] = storage
    out["warnings"].extend(storage["notes"])

    # ---- the files
    group = s["group"]
    user_pending = bool(host.get("check_mode")) and not host.get("user_exists", True)
    files = [
        _file(p["env"], env_text(s, out["env"]), "0644", "root", "root"),
        # the record of the last start: what runs, and the instance's view (status, stop and the benchmark read it)
        _file(p["argv"], json.dumps({"python": s["python"], "argv": launch["argv"], "version": str(version),
                                     "view": server_view.record(view)}, indent=4, sort_keys=True) + "\n",
              "0644", "root", "root"),
    ]
    if manager == "systemd":
        files.append(_file(p["unit"], unit_text(s, p, launch["argv"], rank, len(nodes)), "0644", "root", "root"))
    else:
        files.append(_file(p["launch_spec"], launch_spec_text(s, p, launch["argv"]), "0644", "root", "root"))
    if s["api_key"]:
        files.append(_file(p["api_key"], api_key_text(s), "0640", "root", group, secret=True))
    for path, text in sorted(launch["files"].items()):
        files.append(_file(path, text, "0640", "root", group))
    for name in HELPERS:
        text = (host.get("helpers") or {}).get(name)
        if text is not None:
            files.append(_file("%s/%s" % (HELPER_DIR, name), text, "0755", "root", "root"))
    on_disk = host.get("files") or {}
    out["files"] = files
    out["write"] = [f["path"] for f in files if on_disk.get(f["path"]) != f["sha256"]]
    wanted = set(f["path"] for f in files)
    stale = [p["api_key"], p["instance_dir"] + "/secret.env", p["unit"] if manager == "pidfile" else p["launch_spec"]]
    out["remove"] = [x for x in stale if x not in wanted and on_disk.get(x)]
    dirs = instance_dirs(s["home"], s["config_dir"], s["log_dir"], p, s["user"], group)
    dirs += [(caches.root(s["home"], s["instance"]), s["user"], group, "0750"),
             (caches.version_dir(s["home"], s["instance"], version), s["user"], group, "0750")]
    known = host.get("dirs") or {}
    out["dirs"] = [{"path": d, "owner": o, "group": g, "mode": m} for d, o, g, m in dirs]
    out["dirs_missing"] = [d for d, _o, _g, _m in dirs if not known.get(d)]
    out["create_user"] = s["create_user"] and not (host.get("user_exists") and host.get("group_exists"))
    out["user_pending"] = user_pending

    # ---- what runs, and what to do about it
    fp_input = {
        "unit": next(f["content"] for f in files if f["path"] in (p["unit"], p["launch_spec"])),
        "env": next(f["content"] for f in files if f["path"] == p["env"]),
        "secret": api_key_text(s) if s["api_key"] else "",
        "files": launch["files"], "version": str(version), "patches": s["patches"], "patch_state": s["patch_state"],
    }
    fingerprint = sha256(json.dumps(fp_input, sort_keys=True))
    changed = (host.get("fingerprint") or "").strip() != fingerprint
    out["fingerprint"] = fingerprint
    out["changed"] = changed
    if not running:
        out["action"], out["why"] = "start", "not running (%s)" % (state.get("active_state") or "never started")
    elif s["restart"] == "always":
        out["action"], out["why"] = "restart", "server_restart is always"
    elif changed and s["restart"] == "changed":
        out["action"], out["why"] = "restart", "what it runs changed"
    else:
        out["action"] = "none"
        out["why"] = "running, unchanged" if not changed else "running an older configuration; server_restart is never"
        if changed:
            out["warnings"].append(
                "%s runs an older configuration and server_restart is 'never': the new one is written and takes effect "
                "at the next restart (playbooks/restart.yml)" % out["label"])
    out["daemon_reload"] = manager == "systemd" and p["unit"] in out["write"]
    out["needs_write"] = bool(out["write"] or out["remove"] or out["dirs_missing"] or out["action"] in ("start", "restart"))

    # ---- the steps after this one
    gpu_count = len(s["cuda_visible_devices"]) if s["cuda_visible_devices"] else (gpu.get("count") if gpu.get("present") else None)
    out["preflight"] = {
        "python": s["python"], "argv": launch["argv"], "model_path": s["model_path"],
        "tp": s["tp"], "nnodes": len(nodes), "gpu_count": gpu_count, "host": s["host"], "port": s["port"],
        "owner_unit": p["unit_name"] if manager == "systemd" else None,
        "owner_pid": (out["pid"] or None) if manager == "pidfile" else None,
        "env": out["env"], "become_user": "root" if user_pending else s["user"],
        # llmserve.sglang.model_verify before anything is touched, on every start unless server_verify_model is
        # false (or the preflight is off); a model given by Hub name is not a path to check
        "verify_model": bool(s["preflight"] and s["verify_model"] and str(s["model_path"]).startswith("/")),
        "model_check": model_check_args(s, out["env"], None if user_pending else s["user"]),
        "become_error": become_error(s["user"], host.get("become") or {}, host.get("become_method")),
    }
    out["ready"] = {
        "url": view["url"],
        "log_path": p["log"], "unit": p["unit_name"] if manager == "systemd" else None,
        "pid_file": p["pid_file"] if manager == "pidfile" else None, "node_rank": rank,
        "timeout": s["ready_timeout"], "stall_timeout": s["stall_timeout"],
        "stage_timeouts": s["stage_timeouts"] or None, "interval": s["ready_interval"], "tail_lines": s["tail_lines"],
        "progress_interval": s["progress_interval"],
        "chat_probe": bool(s["ready_chat_probe"]),  # and only when model_verify found a template (wait.yml)
        "sglang_version": str(version),  # picks /ready (0.5.20+) or /health without a probe
        # what server_ready fits its remedies to (ready/host_fit.py): peers, topology, compute capability
        "host": ready_host(s, len(nodes), gpu_count, gpu),
    }
    own = host.get("own") or {}
    watch_port = s["peer_watch_port"] or s["dist_init_port"] + 9
    addr = own.get("dist_init_host") or own.get("default_ipv4") or own.get("ansible_host") or host.get("name")
    out["peer_endpoint"] = "%s:%d" % (addr, watch_port)
    out["watch"] = None
    if len(nodes) > 1 and s["peer_watch"]:
        out["watch"] = {"name": host.get("name"), "endpoint": out["peer_endpoint"], "port": watch_port,
                        "timeout": s["ready_timeout"] + 60, "peers": [], "token": None}
    out["instance"] = s["instance"]
    out["restart"] = s["restart"]
    # after READY with a speculative algorithm (tasks/spec_check.yml); off still checks that adaptive runs adaptive
    off = s["spec_check"] == "off"
    out["spec_check"] = {"run": not off or bool(spec["adaptive"]), "mode": "warn" if off else s["spec_check"],
                         "requests": 0 if off else s["spec_check_requests"],
                         "max_new_tokens": s["spec_check_max_new_tokens"],
                         "request_timeout": s["spec_check_request_timeout"]}
    return out


def _arg(args: t.Mapping[str, t.Any], name: str) -> t.Any:
    """An SGLang option from server_args, whichever spelling the inventory used (tokenizer-path, tokenizer_path)."""
    for key in (name, name.replace("-", "_"), "--" + name):
        if key in args:
            return args[key]
    return None


def model_check_args(s: Settings, env: dict[str, str], user: str | None) -> ModelCheck:
    """What llmserve.sglang.model_verify needs to judge the checkpoint as this launch will read it."""
    args = s["args"] or {}
    tokenizer = _arg(args, "tokenizer-path")
    chat = _arg(args, "chat-template")
    return {"python": s["python"], "env": env, "user": user, "cache_dir": RUN_ROOT + "/model-check",
            "trust_remote_code": _to_bool(_arg(args, "trust-remote-code")) is True,
            "model_impl": str(_arg(args, "model-impl") or "auto"),
            "tokenizer_path": str(tokenizer) if tokenizer else None,
            "skip_tokenizer_init": _to_bool(_arg(args, "skip-tokenizer-init")) is True,
            "unknown": s["model_check_unknown"],
            # SGLang's --chat-template: chat uses it, so the model's own template is not rendered (model_verify)
            "chat_template": str(chat) if chat else None}


def model_storage(s: Settings, spec: Spec, model_fs: t.Mapping[str, t.Any], version: str) -> ModelStorage:
    """Where the weights are read from, and what SGLang ``version`` offers when that is a network filesystem.

    ``spec``: the view's (its draft); ``model_fs``: {path: {mount, fstype, source, network}} from server_info.
    Returns {network: [paths], apply: {flag: value} added to the launch, notes: [text]}.
    """
    paths_ = [s["model_path"], spec["draft_model_path"]]
    out: ModelStorage = {"network": [], "apply": {}, "notes": []}
    for path in paths_:
        fs = model_fs.get(path) if path else None
        if fs and fs.get("network"):
            out["network"].append(path)
            out["notes"].append("%s is on a network filesystem (%s %s at %s): every start reads the weights over the "
                                "network" % (path, fs.get("fstype"), fs.get("source"), fs.get("mount")))
    if not out["network"]:
        return out
    if _arg(s["args"] or {}, PREFETCH_FLAG) is not None:
        out["notes"].append("server_args sets %s: left as given" % PREFETCH_FLAG)
    elif is_version(version) and version_compare(version, PREFETCH_SINCE) >= 0:
        out["apply"][PREFETCH_FLAG] = True
        out["notes"].append("SGLang %s: --%s applied (each rank prefetches a share of the shards into the page "
                            "cache: one read of the checkpoint over the network instead of one per rank); set "
                            "server_args: {%s: false} to leave it off" % (version, PREFETCH_FLAG, PREFETCH_FLAG))
    else:
        out["notes"].append("SGLang %s has no --%s (first seen in %s): stage the weights to a local disk "
                            "(roles/models, models_list) for faster starts" % (version, PREFETCH_FLAG, PREFETCH_SINCE))
    return out


def become_error(user: str, become: t.Mapping[str, t.Any], method: str | None) -> str | None:
    """Why a task with become_user cannot run on this host (no sudo), with the fix; None when it can.

    ``become``: server_info's {euid, sudo, su}; ``method``: the play's become method (ansible_become_method).
    """
    method = (method or "sudo").split(".")[-1]
    if not user or user == "root" or become.get("euid") is None:
        return None
    if method == "sudo" and not become.get("sudo"):
        return ("the preflight runs SGLang's parser as the server user %s (become_user) and become_method is sudo, "
                "but this host has no sudo: install sudo, or set ansible_become_method: su with "
                "ansible_become_flags: '-s /bin/sh' for this host (as root su needs no password; the flag gives "
                "the nologin service user a shell), or server_preflight: false to skip the preflight" % user)
    if method == "su" and not become.get("su"):
        return ("become_method is su but this host has no su: install it (util-linux) or sudo, or set "
                "ansible_become_method to a method the host has")
    return None


def _file(path: str, content: str, mode: str, owner: str, group: str, secret: bool = False) -> File:
    return {"path": path, "content": content, "mode": mode, "owner": owner, "group": group, "secret": secret,
            "sha256": sha256(content)}


def settle(own: Plan, peers: t.Mapping[str, Plan]) -> Plan:
    """A multi-node replica restarts as a whole: one node relaunching alone could never rejoin the others.

    ``own`` is this node's plan, ``peers`` maps the other nodes of the replica that take part in the play to their
    plans. Returns this node's plan with the action raised to restart when a peer (re)starts, and the peer watch's
    peers (``name=host:port``) and shared token (rank 0's).
    """
    out = t.cast(Plan, dict(own))
    if own.get("refusals") or own.get("nnodes", 1) < 2:
        return out
    moving = sorted(n for n, pl in peers.items() if pl.get("action") in ("start", "restart"))
    if moving and own.get("action") == "none" and own.get("restart") != "never":
        out["action"] = "restart"
        out["why"] = "node %s of the replica (re)starts" % ", ".join(moving)
    watch = out.get("watch")
    if watch:
        rank0 = own["nodes"][0]
        token_src = own if own.get("node_rank") == 0 else peers.get(rank0)
        out["watch"] = {**watch, "token": (token_src.get("peer_token") if token_src else None) or own.get("peer_token"),
                        "peers": ["%s=%s" % (n, pl["peer_endpoint"]) for n, pl in sorted(peers.items())
                                  if pl.get("peer_endpoint")]}
    return out


def ready_host(s: Settings, nnodes: int, gpu_count: int | None, gpu: t.Mapping[str, t.Any] | None) -> dict[str, t.Any]:
    """server_ready's ``host`` option: the launch's parallel layout and this host's GPUs (gpu_facts), unknowns left out."""
    topo = (gpu or {}).get("topology") or {}
    host = {"tp_size": s.get("tp") or 1, "nnodes": nnodes, "gpu_count": gpu_count,
            "compute_caps": [str(c) for c in (gpu or {}).get("compute_caps") or []] or None,
            "gpu_names": sorted(set(g["name"] for g in (gpu or {}).get("gpus") or [] if g.get("name"))) or None,
            "pcie_only": topo.get("pcie_only"), "all_nvlink": topo.get("all_nvlink")}
    return dict((k, v) for k, v in host.items() if v is not None)


def wait_failed(ready: t.Any) -> bool:
    """Whether server_ready's result is a failed wait: ``ready: false`` (roles/server registers the wait with
    failed_when false, so that Ansible does not print the whole result), or ``failed`` where no ``ready`` is given."""
    ready = ready if isinstance(ready, dict) else {}
    return ready.get("ready") is False or ("ready" not in ready and bool(ready.get("failed")))


def came_up(ready: object) -> t.TypeGuard[dict[str, t.Any]]:
    """Whether server_ready's result is a READY (not skipped, not failed)."""
    ready = ready if isinstance(ready, dict) else {}
    return bool(ready) and not ready.get("skipped") and ready.get("ready", not ready.get("failed", True)) is True


def failure_message(own: Plan, ready: dict[str, t.Any] | None, failed_step: dict[str, t.Any] | None,
                    rollback_ready: dict[str, t.Any] | None, failed_nodes: list[str] | None, on_failure: str = "rollback") -> str:
    """The one block a failed start ends with, printed once per host: what ended the wait, the category, the key log
    line, the remedy, how the server that failed was stopped, what it left on the GPUs, the log, and what became of
    the previous configuration (one line each; the wait's whole result stays registered, -v shows it).

    ``ready`` is server_ready's result (``msg`` the one-line diagnosis, ``category``/``key_line``/``remedy`` its
    parts), ``failed_step`` the instance controller's result for action=recover (peer_failure, stopped, orphans,
    rolled_back), ``rollback_ready`` server_ready's result for the previous configuration, ``failed_nodes`` the nodes
    of the replica whose wait failed, ``on_failure`` server_on_failure (rollback or stop).
    """
    label = own.get("label") or "the server"
    failed_step = failed_step or {}
    ready = ready or {}
    lines = []
    peer = failed_step.get("peer_failure")
    if peer:
        delay = float(peer.get("time") or 0) - float(peer.get("sent") or peer.get("time") or 0)
        lines.append("%s is not ready: node %s of the replica failed (%s), so this node (rank %s) was stopped %.1f s "
                     "later instead of waiting for a timeout." % (label, peer.get("node"), peer.get("detail"),
                                                                  own.get("node_rank"), delay))
    elif wait_failed(ready):
        msg = ready.get("msg") or "no diagnosis"
        parts = ready.get("category") and ready.get("remedy")
        lines.append("%s is not ready: %s." % (label, (msg.split(" | ")[0] if parts else msg).rstrip(".")))
        if parts:
            lines.append("  category: %s" % ready["category"])
            if ready.get("key_line"):
                lines.append("  key line: %s" % str(ready["key_line"])[:300])
            lines.append("  remedy: %s" % ready["remedy"])
    else:
        lines.append("%s is not ready: node(s) %s of the replica failed (see their messages)." % (
            label, ", ".join(failed_nodes or [])))
    stopped = failed_step.get("stopped") or {}
    if stopped.get("at_once"):
        lines.append("  Its processes were stopped (state T, deaf to SIGTERM): killed at once.")
    elif stopped.get("killed"):
        lines.append("  It did not act on SIGTERM: killed after %s s (server_stop_grace_unready)." % stopped.get("grace"))
    ended = (failed_step.get("orphans") or {}).get("ended") or []
    if ended:
        lines.append("  Ended %d process(es) it left on the GPUs: %s." % (len(ended), ", ".join(
            "pid %s (%s MiB)" % (o.get("pid"), o.get("used_memory_mib")) for o in ended)))
    lines.append("  Log kept: %s." % own.get("paths", {}).get("log", "?"))
    previous = own.get("paths", {}).get("previous_dir", "?")
    if own.get("action") == "start":
        nxt = "Nothing ran before this deploy, so nothing is rolled back: the instance stays stopped."
    elif on_failure == "rollback":
        if not failed_step.get("rolled_back"):
            nxt = "Nothing to roll back to (no previous configuration in %s): the instance stays stopped." % previous
        elif not came_up(rollback_ready):
            nxt = "Rolled back to the previous configuration, but it did NOT come back: %s" % (
                (rollback_ready or {}).get("msg") or "not waited on")
        else:
            nxt = "Rolled back: the previous configuration came back and is ready (in %.1f s)." % float(
                (rollback_ready or {}).get("elapsed") or 0)
    else:
        nxt = ("Left stopped (server_on_failure=stop); the previous configuration is kept in %s "
               "(server_on_failure=rollback puts it back on a failed deploy)." % previous)
    lines.append("  " + nxt)
    return "\n".join(lines)


def report(own: Plan, ready: dict[str, t.Any] | None = None) -> list[str]:
    """What the role says at the end: the decision, the command line, the warnings, and how the start went."""
    lines = ["%s: %s (%s); sglang %s, node %d of %d" % (
        own.get("label"), own.get("action"), own.get("why"), own.get("version"), own.get("node_rank", 0),
        own.get("nnodes", 1))]
    if own.get("argv") is not None:
        lines.append("%s -m sglang.launch_server %s" % (own["preflight"]["python"], " ".join(own["argv"])))
    lines += ["WARNING: %s" % w for w in own.get("warnings") or []]
    if came_up(ready) and ready.get("elapsed") is not None:
        srv = ready.get("server") or {}
        view = own.get("view")
        speculation = view.get("speculation") if view else None
        stages = " > ".join(st.get("stage", "?") for st in ready.get("stages") or [])
        lines.append("READY in %.1f s (sglang %s; model %s; %s; stages %s; speculation: %s)" % (
            float(ready["elapsed"]), srv.get("version") or own.get("version"), srv.get("served_model") or "?",
            own["ready"]["url"] if own.get("node_rank", 0) == 0 else "worker of %s" % own["nodes"][0], stages,
            (speculation or {}).get("words") or "not known"))
    elif own.get("action") == "none" and own.get("running"):
        lines.append("running, pid %s" % (own.get("pid") or "?"))
    return lines
