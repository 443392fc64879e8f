# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an instance lives and who supervises it: the one home of the service-manager rule, of the instance's
paths and of its directories (stdlib only; imported by plugin_utils/_server_plan.py and plugin_utils/_server_view.py on the controller and by
the server_info module on the target).
"""

from __future__ import annotations

import re

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches

MANAGERS = ("auto", "systemd", "pidfile")
HELPERS = ("sglang_peer_watch.py", "sglang_supervise.py", "sglang_pidfile.py")  # the supervisor imports the last
HELPER_DIR = "/usr/local/lib/llmserve-sglang"
RUN_ROOT = owned_dirs.RUN_ROOT  # the one tree below /run the path rule lets the collection make
# The one rule for an instance name (a unit name, a directory, a label, a word in a runbook): \Z, not $ - a '$'
# also matches before a final newline, and "kimi\n" would pass.
INSTANCE_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


def valid_instance(name):
    """True when ``name`` is an instance name: a string, letters, digits, '.', '_' or '-', at most 64, not starting
    with a punctuation mark (so never '..', a path, a newline, a shell word)."""
    return isinstance(name, str) and INSTANCE_RE.match(name) is not None


def paths(s):
    """Every path of instance ``s["instance"]`` under ``s["config_dir"]`` and ``s["log_dir"]``."""
    inst = s["instance"]
    d = "%s/%s" % (s["config_dir"].rstrip("/"), inst)
    run = "%s/%s" % (RUN_ROOT, inst)
    return {
        "instance": inst,
        "unit_name": "sglang-%s.service" % inst,
        "unit": "/etc/systemd/system/sglang-%s.service" % inst,
        "instance_dir": d,
        "env": d + "/server.env",
        "api_key": d + "/api-key.yaml",
        "argv": d + "/argv.json",
        "fingerprint": d + "/fingerprint",
        "launch_spec": d + "/launch.json",
        "adaptive": d + "/adaptive.json",
        "previous_dir": d + "/previous",
        "log": "%s/%s.log" % (s["log_dir"].rstrip("/"), inst),
        "run_dir": run,
        "pid_file": run + "/server.pid",
        "lock": "%s/%s.deploy.lock" % (RUN_ROOT, inst),
        "peer_marker": run + "/peer-failed.json",
        "peer_done": run + "/wait-done",
        "helper_dir": HELPER_DIR,
        "supervisor": HELPER_DIR + "/sglang_supervise.py",
        "peer_watch": HELPER_DIR + "/sglang_peer_watch.py",
    }


def resolve_manager(setting, detected, host_name="the host"):
    """``(manager, problem)``: the manager that runs the instance for ``server_service_manager`` = ``setting`` on a
    host whose service manager is ``detected`` (ansible's ``service_mgr``).

    ``auto`` is systemd where systemd runs, else the pid-file supervisor. ``systemd`` on a host without it is kept
    with a problem naming the fix. Any other value reads as ``auto`` (_server_plan.validate refuses it by name).
    """
    detected = detected or "systemd"
    if setting == "auto" or setting not in MANAGERS:
        return ("systemd" if detected == "systemd" else "pidfile"), None
    if setting == "systemd" and detected != "systemd":
        return "systemd", ("server_service_manager=systemd but %s runs %s, not systemd: set server_service_manager to "
                           "auto or pidfile (a supervised launcher with a pid file)" % (host_name, detected))
    return setting, None


# The instance's option family of the roles/server modules (server_info, server_drift, server_instance, server_lock),
# each taking the names it needs through :func:`instance_spec` (sglang/client.ENDPOINT_SPEC's habit): one set of
# managers everywhere, ``auto`` resolved on the host by :func:`resolve_manager`.
INSTANCE_SPEC = {
    "instance": {"type": "str", "default": "default"},
    "config_dir": {"type": "path", "default": "/etc/sglang"},
    "log_dir": {"type": "path", "default": "/var/log/sglang"},
    "manager": {"type": "str", "default": "auto", "choices": list(MANAGERS)},
    "paths": {"type": "dict", "required": True},
}


def instance_spec(names, **options):
    """A module's argument spec: copies of the :data:`INSTANCE_SPEC` entries ``names`` plus its own ``options``."""
    spec = dict((k, dict(INSTANCE_SPEC[k], **({"choices": list(INSTANCE_SPEC[k]["choices"])}
                                              if "choices" in INSTANCE_SPEC[k] else {}))) for k in names)
    spec.update(options)
    return spec


def instance_dirs(home, config_dir, log_dir, paths, user, group):
    """The directories an instance needs, as ``(path, owner, group, mode)`` in creation order (``paths`` from
    :func:`paths`)."""
    return [
        (home, user, group, "0750"), (config_dir, "root", "root", "0755"),
        (paths["instance_dir"], "root", group, "0750"), (paths["previous_dir"], "root", "root", "0750"),
        (log_dir, "root", group, "0750"), (paths["run_dir"], "root", "root", "0755"),
        (paths["helper_dir"], "root", "root", "0755"),
    ]


def compile_cache_root(dirs, paths):
    """The instance's compile-cache folder among ``dirs`` (the plan's {path, ...} list), or None: it and what is
    below it are caches, never trusted with another owner or a looser mode (host/owned_dirs)."""
    suffix = caches.root("", paths["instance"])
    for d in dirs:
        path = d["path"].rstrip("/")
        if path.endswith(suffix) and len(path) > len(suffix):
            return path
    return None


def dir_names(dirs, paths):
    """{path: the setting or what it is} for the refusals of host/owned_dirs (which setting to change)."""
    root = compile_cache_root(dirs, paths)
    names = {paths["instance_dir"]: "the instance's configuration directory",
             paths["previous_dir"]: "the instance's previous-configuration directory",
             paths["run_dir"]: "the instance's run directory", paths["helper_dir"]: "the helpers' directory",
             paths["log"].rsplit("/", 1)[0]: "server_log_dir", paths["instance_dir"].rsplit("/", 1)[0]: "server_config_dir"}
    if root:
        names[root[:-len(caches.root("", paths["instance"]))]] = "server_home"
        names[root] = "the compile cache"
    return names
