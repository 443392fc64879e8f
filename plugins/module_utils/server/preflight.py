# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Target-side checks run before a running SGLang server is stopped (stdlib only, Python >= 3.8)."""

from __future__ import annotations

import errno
import json
import os
import pwd
import re
import shutil
import socket
import tempfile

from ansible_collections.llmserve.sglang.plugins.module_utils.host import access, net, owned_dirs, ownership, untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia import xid
from ansible_collections.llmserve.sglang.plugins.module_utils.server import orphans
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client as sglang_client
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import ports as sglang_ports
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version as sglang_version
from ansible_collections.llmserve.sglang.plugins.module_utils.nvidia.smi import APP_FIELDS, Unparseable, parse_compute_apps, parse_query_gpu

# Issue 45: config.json against the installed torch and SGLang, in the same interpreter (SGLang's parser has imported
# torch already). SGLang's own context-length rule: get_context_length (utils/hf_transformers_utils.py up to 0.5.10,
# utils/hf_transformers/common.py from 0.5.15) on the text config, refused by configs/model_config.py unless
# envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (the wheels read by tests/unit/.../test_preflight_model_limits.py).
LIMITS_SOURCE = r"""
import importlib, types
SUBCONFIGS = ("text_config", "llm_config", "language_config", "thinker_config")


def _model_limits(ns, config):
    problems, notes = [], []
    for key in ("torch_dtype", "dtype"):
        name = config.get(key)
        if not isinstance(name, str) or name == "auto":
            continue
        try:
            import torch
        except Exception as e:
            notes.append("config.json %s %r was not checked: torch does not import (%s)" % (key, name, e))
            break
        if not isinstance(getattr(torch, name, None), torch.dtype):
            problems.append("config.json %s: %r is not a dtype of the installed torch %s (SGLang would crash with "
                            "AttributeError: module 'torch' has no attribute): set it to one torch has (bfloat16, "
                            "float16, float32) or auto" % (key, name[:60], torch.__version__))
    asked = getattr(ns, "context_length", None)
    if asked is None:
        return {"problems": problems, "notes": notes}
    if any(isinstance(config.get(k), dict) for k in SUBCONFIGS):
        notes.append("context-length %s was not checked against the model: its config.json has a sub-config "
                     "(multimodal)" % asked)
        return {"problems": problems, "notes": notes}
    found = None
    for where in ("sglang.srt.utils.hf_transformers.common", "sglang.srt.utils.hf_transformers_utils"):
        try:
            found = importlib.import_module(where)
        except Exception:
            continue
        if hasattr(found, "get_context_length"):
            break
        found = None
    try:
        from sglang.srt.environ import envs
        allow = envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get()
        derived = found.get_context_length(types.SimpleNamespace(**config)) if found else None
    except Exception as e:
        derived, allow = None, False
        notes.append("context-length %s was not checked against the model: %s: %s" % (asked, type(e).__name__, e))
    if derived is None:
        if found is None:
            notes.append("context-length %s was not checked against the model: this SGLang has no get_context_length"
                         % asked)
        return {"problems": problems, "notes": notes}
    if int(asked) > int(derived) and not allow:
        keys = [k for k in getattr(found, "CONTEXT_LENGTH_KEYS", ()) if config.get(k) is not None][:1]
        problems.append("server_args context-length %s is above the %s SGLang %s derives from config.json%s (SGLang "
                        "would stop at start with a ValueError): lower context-length to %s or less, or set "
                        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 in server_env when the model really takes longer "
                        "inputs (RoPE scaling)" % (asked, derived, _sglang_version(),
                                                   " (%s)" % keys[0] if keys else "", derived))
    return {"problems": problems, "notes": notes, "derived_context_length": derived}
"""

# Run by the venv's python: the INSTALLED SGLang's own parser decides, its argparse error verbatim.
PARSE_SCRIPT = sglang_version.PROBE_SOURCE + LIMITS_SOURCE + r"""
import argparse, io, json, sys
from contextlib import redirect_stderr
job = json.loads(sys.stdin.read())
argv, config = (job, None) if isinstance(job, list) else (job["argv"], job.get("config"))
ver = _sglang_version()
from sglang.srt.server_args import ServerArgs
p = argparse.ArgumentParser(prog="sglang.launch_server")
ServerArgs.add_cli_args(p)
err = io.StringIO()
try:
    with redirect_stderr(err):
        ns = p.parse_args(argv)
    out = {"version": ver, "ok": True}
    if isinstance(config, dict):
        out["model"] = _model_limits(ns, config)
    print(json.dumps(out))
except SystemExit:
    lines = [l for l in err.getvalue().splitlines() if " error: " in l]
    print(json.dumps({"version": ver, "ok": False, "error": lines[-1] if lines else err.getvalue().strip()}))
"""

_HF_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_TRUE = ("1", "true", "yes", "on")


def _check(name, ok, msg):
    return {"name": name, "ok": bool(ok), "msg": msg}


_DENIED = re.compile(r"PermissionError: \[Errno \d+\] [^:\n]*: '([^'\n]{1,4096})'")


def _user():
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return "uid %d" % os.geteuid()


def denied_msg(python, tail):
    """The refusal for a parser that could not be loaded because this user may not use a path: the path, its
    owner and mode (or its nearest existing parent's), and the fix - not a broken SGLang."""
    m = _DENIED.search(tail)
    if not m:
        return None
    path = owned_dirs.printable(m.group(1))
    seen = path
    while not os.path.lexists(seen) and seen not in ("/", ""):
        seen = os.path.dirname(seen)
    where = ("%s is %s" % (path, access.describe(path)) if seen == path
             else "%s does not exist and %s, where it would be made, is %s" % (path, seen, access.describe(seen)))
    return ("SGLang's parser could not be loaded from %s as %s: permission denied on %s (%s). The installed SGLang "
            "is not at fault: give %s access to it (roles/server makes server_home and the instance's directories "
            "for server_user before the preflight; a path from server_env or server_args must be one that user can "
            "use)" % (python, _user(), path, where, _user()))


def check_parse(python, argv, env=None, timeout=300, run=None):
    """Parse argv with the installed SGLang. Returns (check, version). ``run``: the runner (host/run.py)."""
    return parse_and_limits(python, argv, None, env, timeout, run)[:2]


def parse_and_limits(python, argv, config=None, env=None, timeout=300, run=None):
    """(check, version, model) - check_parse, and with ``config`` (config.json) what the installed torch and SGLang
    say of its dtype and the argv's context-length: model is {problems, notes} or None.

    Importing SGLang makes its compile-cache folders (``SGLANG_CACHE_DIR``, ``TRITON_CACHE_DIR``, ...) with this
    process's umask and owner: the parse gets a throwaway folder for them, removed afterwards, so the instance's own
    caches are made only by roles/server (with their owner, mode and marker) and nothing is left behind."""
    if not python or not os.access(python, os.X_OK):
        return _check("argv", False, "python %r is not executable: point python at the server venv's bin/python" % (python,)), None, None
    job = list(argv) if config is None else {"argv": list(argv), "config": config}
    scratch = tempfile.mkdtemp(prefix="llmserve-sglang-preflight-")
    environ = {k: str(v) for k, v in (env or {}).items()}
    environ.update(caches.under(scratch))
    try:
        rc, stdout, stderr = run([python, "-c", PARSE_SCRIPT], data=json.dumps(job),
                                 environ_update=environ, timeout=timeout)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if rc in (124, 127):
        return _check("argv", False, "could not run %s to parse the argv (%s): check the venv"
                      % (python, stderr.strip() or "rc %d" % rc)), None, None
    data = None
    for line in reversed(stdout.splitlines()):
        try:
            data = json.loads(line)
            break
        except ValueError:
            continue
    if not isinstance(data, dict):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        denied = denied_msg(python, tail)
        if denied:
            return _check("argv", False, denied), None, None
        return _check("argv", False, "SGLang's parser could not be loaded from %s: %s; reinstall sglang in the venv" % (python, tail)), None, None
    model = data.get("model") if isinstance(data.get("model"), dict) else None
    if data.get("ok"):
        return _check("argv", True, "SGLang %s accepts the argv" % data.get("version")), data.get("version"), model
    return _check("argv", False, "SGLang %s rejects the argv: %s" % (data.get("version"), data.get("error"))), data.get("version"), None


def model_config(path):
    """config.json of a local model directory through host/untrusted: (config, problem); (None, None) for a hub id."""
    if not path or not os.path.isdir(path) or not os.path.lexists(os.path.join(path, "config.json")):
        return None, None  # a hub id, or no config.json (check_checkpoint names it)
    try:
        with untrusted.Tree(path) as tree:
            config = tree.json("config.json", untrusted.CONFIG)
    except untrusted.Refused as e:
        return None, "model_path %s" % e
    if not isinstance(config, dict):
        return None, "model_path config.json: is %s, not an object: restore the publisher's config.json" % (
            untrusted.type_name(config))
    return config, None


def check_limits(model, problem, warnings=None):
    """The model_limits check from parse_and_limits' ``model`` (or the problem reading config.json)."""
    if problem:
        return _check("model_limits", False, problem)
    if warnings is not None:
        warnings.extend((model or {}).get("notes") or [])
    found = (model or {}).get("problems") or []
    if found:
        return _check("model_limits", False, "; ".join(str(p) for p in found))
    return _check("model_limits", True, "config.json's dtype and the context-length fit the installed torch and SGLang")


def check_checkpoint(name, path, env=None, warnings=None):
    """A local checkpoint directory, or an HF repo id when the host may download."""
    env = env if env is not None else os.environ
    denied = _denied(name, path)
    if denied:
        return denied
    if os.path.isdir(path):
        files = os.listdir(path)
        has_cfg = "config.json" in files
        has_w = any(f.endswith((".safetensors", ".bin", ".safetensors.index.json", ".bin.index.json", ".gguf")) for f in files)
        missing = [w for w, ok in (("config.json", has_cfg), ("*.safetensors/*.bin/index", has_w)) if not ok]
        if missing:
            return _check(name, False, "%s %s does not look like a checkpoint (missing %s): finish the download or fix the path"
                          % (name, path, ", ".join(missing)))
        return _check(name, True, "%s %s looks like a checkpoint" % (name, path))
    if os.path.exists(path):
        return _check(name, False, "%s %s is not a directory: point it at the checkpoint directory" % (name, path))
    offline = any(str(env.get(k, "")).lower() in _TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    if _HF_ID.match(path) and not path.startswith((".", "/")):
        if offline:
            return _check(name, False, "%s %s is a hub id but HF_HUB_OFFLINE is set: download it and give the local path" % (name, path))
        if warnings is not None:
            warnings.append("%s %s is not a local path; SGLang will download it from the hub at start" % (name, path))
        return _check(name, True, "%s %s is a hub id (downloaded at start)" % (name, path))
    return _check(name, False, "%s %s does not exist: download the checkpoint there or fix the path" % (name, path))


def _denied(name, path):
    """The refusal for a model path this (the server's) user cannot reach or list: os.path.isdir says False and the
    checkpoint would be called missing. None when it can, or when the path is simply not there."""
    try:
        st = os.stat(path)
        if not os.path.isdir(path) or os.access(path, os.R_OK | os.X_OK):
            return None
        where = "%s is %s" % (path, access.describe(path))
    except OSError as e:
        if e.errno not in (errno.EACCES, errno.EPERM):
            return None
        st = None
    if st is None:
        blocked = next((d for d in access.ancestors(path) if not os.access(d, os.X_OK)), path)
        where = "%s is %s" % (blocked, access.describe(blocked))
    return _check(name, False, "%s %s: the server user %s cannot read it (permission denied; %s): make it readable "
                  "for that user or set server_user to one that can" % (name, path, _user(), where))


def visible_gpus(gpu_count=None, env=None, runner=None):
    """GPUs the server can use: explicit count, else CUDA_VISIBLE_DEVICES, else nvidia-smi -L."""
    if gpu_count is not None:
        return int(gpu_count)
    env = env or {}
    cvd = env.get("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"))
    if cvd is not None:
        return len([d for d in str(cvd).split(",") if d.strip() and d.strip() != "-1"])
    out = runner(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader,nounits"])
    if out is None:
        return None
    try:
        return len(parse_query_gpu(out, ["index"]))
    except Unparseable:  # as without nvidia-smi: the count is not known
        return None


def check_tp(tp, nnodes, gpus):
    # tp divides over the nodes: the plan (_server_plan) refused it otherwise (the one home of that rule)
    tp, nnodes = int(tp or 1), int(nnodes or 1)
    if tp < 1 or nnodes < 1:
        return _check("tp", False, "tp=%d over %d node(s) cannot be laid out: give tp (all GPUs of the replica) "
                      "and nnodes of at least 1" % (tp, nnodes))
    if gpus is None:
        return _check("tp", False, "cannot count GPUs (no gpu_count, CUDA_VISIBLE_DEVICES or nvidia-smi): pass gpu_count")
    if tp // nnodes > gpus:
        return _check("tp", False, "tp=%d needs %d GPUs per node on %d node(s) but %d are visible: lower tp or add GPUs"
                      % (tp, tp // nnodes, nnodes, gpus))
    return _check("tp", True, "tp=%d fits %d visible GPU(s) x %d node(s)" % (tp, gpus, nnodes))


def stdout_of(run):
    """A runner (host/run.py) -> ``runner(argv)``: stdout when the command succeeded within 30 s, else None."""
    def runner(cmd):
        rc, out, _err = run(cmd, timeout=30)
        return out if rc == 0 else None
    return runner


def _comm(pid, proc_root="/proc"):
    try:
        with open(os.path.join(proc_root, str(pid), "comm")) as f:
            return f.read().strip()
    except OSError:
        return "?"


def owned_by(pid, owner_unit=None, owner_pid=None, proc_root="/proc"):
    """True when pid is in the owner's systemd unit, or is the owner pid or a descendant of it."""
    return (bool(owner_unit) and ownership.in_unit(ownership.identity(pid, proc_root), [owner_unit])) \
        or ownership.descends_from(pid, owner_pid, proc_root)


def check_port(host, port, owner_unit=None, owner_pid=None):
    host = host or "127.0.0.1"
    port = int(port or sglang_client.DEFAULT_PORT)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        return _check("port", True, "port %s:%d is free" % (host, port))
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            return _check("port", False, "cannot bind %s:%d (%s): use an address of this host" % (host, port, exc.strerror))
    finally:
        s.close()
    pids = sorted(net.socket_holders(set(net.listening_sockets(port) or {})))
    foreign = [p for p in pids if not owned_by(p, owner_unit, owner_pid)]
    if pids and not foreign:
        return _check("port", True, "port %d is held by this server (pid %s)" % (port, ",".join(map(str, pids))))
    who = ", ".join("%d (%s)" % (p, _comm(p)) for p in foreign) or "an unknown process"
    return _check("port", False, "port %d is in use by %s: stop it or choose another port" % (port, who))


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (IOError, OSError):
        return None


def check_port_window(argv, version, owner_unit=None, owner_pid=None, warnings=None, proc_root="/proc"):
    """SGLang's fixed ports besides --port (sglang/ports.py): free or ours, and outside the ephemeral range."""
    sysctl = proc_root + "/sys/net/ipv4/"
    problems, notes = sglang_ports.check(argv, version, sglang_ports.parse_range(_read(sysctl + "ip_local_port_range")),
                                         _read(sysctl + "ip_local_reserved_ports") or "")
    for port, what in sglang_ports.fixed_ports(argv, version)[1:]:
        c = check_port("127.0.0.1", port, owner_unit, owner_pid)
        if not c["ok"]:
            problems.append("%s, %s" % (what, c["msg"]))
    if warnings is not None:
        warnings.extend(notes)
    if problems:
        return _check("ports", False, "; ".join(problems))
    return _check("ports", True, "SGLang's fixed ports are free and outside the ephemeral range")


def _instance_gpus(cvd, runner):
    """The PCI bus keys of the GPUs ``CUDA_VISIBLE_DEVICES`` names (indexes in nvidia-smi's order, or GPU UUIDs), or
    None - every GPU counts - where it is not set or names one nvidia-smi does not list (a MIG device, a typo)."""
    wanted = [d.strip() for d in str(cvd).split(",") if d.strip()] if cvd is not None else []
    if not wanted:
        return None
    out = runner(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader,nounits"])
    if out is None:
        return None
    try:
        gpus = parse_query_gpu(out, ["index", "uuid", "pci.bus_id"])
    except Unparseable:
        return None
    keys = set()
    for d in wanted:
        gpu = [g for g in gpus if d in (str(g["index"]), g["uuid"])]
        key = xid.bus_key(gpu[0]["pci_bus_id"]) if len(gpu) == 1 else None
        if key is None:
            return None
        keys.add(key)
    return keys


def check_gpu_procs(owner_unit=None, owner_pid=None, runner=None, warnings=None, instance=None, cvd=None,
                    proc_root="/proc"):
    """No process but the instance's own holds memory on the instance's GPUs (those ``cvd``, its
    CUDA_VISIBLE_DEVICES, names; all of them when unset). A process of another instance of this collection (its
    environment carries orphans.MARKER with another name) is a deliberate neighbour: a warning, not a refusal."""
    mine = _instance_gpus(cvd, runner)
    fields = APP_FIELDS + ["gpu_bus_id"] if mine is not None else APP_FIELDS
    out = runner(["nvidia-smi", "--query-compute-apps=" + ",".join(fields), "--format=csv,noheader,nounits"])
    if out is None:
        msg = "nvidia-smi did not list the GPUs' compute processes: other processes on the GPUs not checked"
        if warnings is not None:
            warnings.append(msg)
        return _check("gpu_processes", True, msg)
    try:
        apps = [a for a in parse_compute_apps(out, fields) if a["pid"] is not None]
    except Unparseable as exc:  # fails closed: what runs on the GPUs is not known
        return _check("gpu_processes", False, str(exc))
    # on another GPU (known only by its bus id): none of this instance's business
    apps = [a for a in apps if mine is None or a["bus_key"] is None or a["bus_key"] in mine]
    foreign, neighbours = [], []
    for a in apps:
        if owned_by(a["pid"], owner_unit, owner_pid, proc_root):
            continue
        other = orphans.instance_of(a["pid"], proc_root)
        (neighbours if instance and other and other != instance else foreign).append(dict(a, instance=other))
    if neighbours and warnings is not None:
        warnings.append("the instance shares its GPUs with %s: their memory fractions (mem-fraction-static) must fit "
                        "together, or give each its own GPUs (server_cuda_visible_devices)" % ", ".join(
                            "instance %s (pid %d, %s MiB)" % (a["instance"], a["pid"], a["used_memory_mib"])
                            for a in neighbours))
    if foreign:
        who = ", ".join("%d %s (%s MiB)" % (a["pid"], a["name"], a["used_memory_mib"]) for a in foreign)
        return _check("gpu_processes", False, "other processes hold GPU memory: %s; stop them before starting the server" % who)
    return _check("gpu_processes", True, "no foreign processes on the GPUs")


def run_all(params, run):
    """Run every check; returns (checks, version, warnings). ``run``: the runner (host/run.py)."""
    runner = stdout_of(run)
    env = dict(params.get("env") or {})
    warnings = []
    checks = []
    if params.get("argv") is not None:
        config, problem = model_config(params.get("model_path"))
        c, version, model = parse_and_limits(params.get("python"), params["argv"], config, env, run=run)
        checks.append(c)
        if c["ok"] and (config is not None or problem):
            checks.append(check_limits(model, problem, warnings))
    else:
        version = None
    merged = dict(os.environ)
    merged.update(env)
    checks.append(check_checkpoint("model_path", params.get("model_path"), merged, warnings))
    if params.get("draft_model_path"):
        checks.append(check_checkpoint("draft_model_path", params["draft_model_path"], merged, warnings))
    gpus = visible_gpus(params.get("gpu_count"), env, runner)
    checks.append(check_tp(params.get("tp"), params.get("nnodes"), gpus))
    if params.get("port") is not None:
        checks.append(check_port(params.get("host"), params["port"], params.get("owner_unit"), params.get("owner_pid")))
    if params.get("argv") is not None:
        checks.append(check_port_window(params["argv"], version or params.get("sglang_version"),
                                        params.get("owner_unit"), params.get("owner_pid"), warnings))
    checks.append(check_gpu_procs(params.get("owner_unit"), params.get("owner_pid"), runner, warnings,
                                  instance=env.get(orphans.MARKER), cvd=env.get("CUDA_VISIBLE_DEVICES")))
    return checks, version, warnings
