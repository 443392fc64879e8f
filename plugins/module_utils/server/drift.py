# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift: does the SGLang that runs run what is configured, and how long did its start-up phases take.

What is configured is the argv roles/server recorded for the instance (``argv.json``, written with the unit).
What runs is what SGLang itself says it was asked for, where it says it: ``/server_info`` ``launch_command``
(0.5.20+: the argv after the ``--config`` YAML was merged in, space-joined, watermark secrets redacted). Before
0.5.20, or when the server does not answer, it is the server process's own argv (``/proc/PID/cmdline``).

Both are compared flag by flag, order-insensitive. ``--config FILE`` is left out on both sides (the running side
has its keys merged in; roles/server writes only the API key there), and so are secret flags, whose values are
never shown. The start-up phase timings are ``/server_info`` ``startup_time`` (0.5.20+; the engine's own
figures, the critical path over the scheduler ranks).
"""

from __future__ import annotations

SECRET_FLAGS = ("--api-key", "--admin-api-key", "--watermark-config", "--watermark-key", "--watermark-key-b")
IGNORED_FLAGS = ("--config",)
LAUNCHERS = ("sglang.launch_server", "sglang.launch_server.py")


def server_args(cmdline):
    """A process argv -> the launch_server arguments (after ``-m sglang.launch_server`` or ``sglang serve``)."""
    argv = [str(a) for a in cmdline or []]
    for i, a in enumerate(argv):
        if a in LAUNCHERS or a.endswith("/sglang/launch_server.py"):
            return argv[i + 1:]
        if a == "serve" and i > 0 and argv[i - 1].endswith("sglang"):
            return argv[i + 1:]
    return argv


def parse_cmdline(raw):
    """``/proc/PID/cmdline`` bytes -> argv."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    return [a for a in (raw or "").split("\0") if a != ""]


def flags(argv):
    """argv -> ``{"--flag": (values...)}`` ("--a=b" is "--a b"; a bare flag has no values)."""
    out = {}
    current = None
    for a in [str(x) for x in argv or []]:
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            current = name
            out[current] = (value,) if eq else ()
        elif current is not None:
            out[current] = out[current] + (a,)
    return out


def _shown(flag, values):
    if flag in SECRET_FLAGS:
        return "<redacted>"
    return " ".join(values) if values else "(set)"


def compare(configured, running):
    """Differences between two launch_server argvs: ``{"same", "changed", "missing", "extra"}``.

    ``changed``: ``[{"flag", "configured", "running"}]``; ``missing``: configured flags that do not run;
    ``extra``: running flags that are not configured (secret values redacted)."""
    a = dict((k, v) for k, v in flags(configured).items() if k not in IGNORED_FLAGS)
    b = dict((k, v) for k, v in flags(running).items() if k not in IGNORED_FLAGS)
    changed = [{"flag": k, "configured": _shown(k, a[k]), "running": _shown(k, b[k])}
               for k in sorted(set(a) & set(b)) if a[k] != b[k] and k not in SECRET_FLAGS]
    missing = sorted(k for k in set(a) - set(b) if k not in SECRET_FLAGS)
    extra = sorted(k for k in set(b) - set(a) if k not in SECRET_FLAGS)
    return {"same": not (changed or missing or extra), "changed": changed, "missing": missing, "extra": extra}


def phases(startup_time):
    """``/server_info`` ``startup_time`` -> ``[(phase, seconds)]`` in start-up order (CUDA graph phases nested)."""
    st = startup_time if isinstance(startup_time, dict) else {}
    out = []
    for name in ("load_weight", "kv_cache_allocation"):
        if isinstance(st.get(name), (int, float)):
            out.append((name, float(st[name])))
    graphs = st.get("cuda_graph") if isinstance(st.get("cuda_graph"), dict) else {}
    for name in sorted(graphs):
        if isinstance(graphs[name], (int, float)):
            out.append(("cuda_graph." + name, float(graphs[name])))
    for name in ("scheduler_e2e", "tokenizer_e2e"):
        if isinstance(st.get(name), (int, float)):
            out.append((name, float(st[name])))
    return out


def report(configured, server_info=None, process_argv=None):
    """The whole answer: which source was used, the differences, the phases and one line of words."""
    info = server_info if isinstance(server_info, dict) else {}
    launch = info.get("launch_command")
    if isinstance(launch, str) and launch.strip():
        source, running = "launch_command", launch.split()
    elif process_argv:
        source, running = "process argv", server_args(process_argv)
    else:
        return {"source": None, "drift": None, "phases": phases(info.get("startup_time")),
                "msg": "drift: unknown (no /server_info launch_command and no running process)"}
    if configured is None:
        return {"source": source, "drift": None, "phases": phases(info.get("startup_time")),
                "msg": "drift: unknown (no recorded configuration: deploy with roles/server first)"}
    d = compare(configured, running)
    if d["same"]:
        words = "none: runs what is configured (%s)" % source
    else:
        parts = ["%s %s -> %s" % (c["flag"], c["configured"], c["running"]) for c in d["changed"]]
        parts += ["%s configured, not running" % f for f in d["missing"]]
        parts += ["%s running, not configured" % f for f in d["extra"]]
        words = "DRIFT (%s): %s - restart to apply (playbooks/restart.yml)" % (source, "; ".join(parts))
    ph = phases(info.get("startup_time"))
    timing = ", ".join("%s %.1f s" % p for p in ph) if ph else "not reported (SGLang < 0.5.20)"
    return {"source": source, "drift": d, "phases": ph, "msg": "drift: %s; start-up phases: %s" % (words, timing)}
