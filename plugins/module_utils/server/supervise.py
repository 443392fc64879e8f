# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one SGLang server on a host without systemd (GPU containers): roles/server's pid-file launcher.

This file is both a module_utils (llmserve.sglang.server_info and server_instance import it to read and stop the
server) and the script roles/server installs as /usr/local/lib/llmserve-sglang/sglang_supervise.py (the detached
supervisor must outlive the module that starts it).

  sglang_supervise.py start --pid-file P --log L [--env-file E] [--user U] [--cwd D] -- PYTHON -m sglang.launch_server ARGS
  sglang_supervise.py start --spec SPEC.json
  sglang_supervise.py stop  --pid-file P [--timeout 120]
  sglang_supervise.py state --pid-file P

``start`` detaches (double fork, setsid) a supervisor that starts the server in its own process group as ``--user``
with the environment of ``--env-file`` (``NAME="json string"`` lines, as roles/server writes server.env), appends its
stdout and stderr to ``--log``, writes the server's pid to ``P`` and its own to ``P.supervisor``, and records how the
server ended in ``P.status`` (JSON: pid, started, ended, returncode; a negative returncode is the killing signal).
A pid file is not proof: before the pid files, ``P.status`` records the identities of the server and of the
supervisor (host/pidfile: pid, start time, executable), and ``stop``, ``state`` and the modules act only on a pid
that matches its record (a pid file naming pid 1, a bystander, a reused pid, a link or garbage: refused, by name).
``stop`` asks the supervisor to stop: SIGTERM to the server's process group, SIGKILL after ``--timeout`` seconds
(the caller kills the group itself at its own bound, which may be shorter: a start-up that never became ready).
A group with a stopped member (state T: SIGSTOP, a tracer) is killed at once: a stopped process cannot act on
SIGTERM, so no grace would end it.
``state`` prints that JSON, with ``running``, ``supervisor_pid`` and, while running, ``since`` (the server's start,
epoch seconds, from /proc) and ``uptime``.  ``--spec`` reads the options from a JSON file (roles/server's launch.json:
``pid_file``, ``log``, ``env_file``, ``user``, ``cwd``, ``timeout``, ``command``); options given on the command line win.
Standard library only, Python >= 3.8.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

try:
    from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile
except ImportError:  # run as the installed script: sglang_pidfile.py beside it (or host/pidfile.py in a checkout)
    def _sibling():
        import importlib.util  # pylint: disable=import-outside-toplevel

        here = os.path.dirname(os.path.abspath(__file__))
        for path in (os.path.join(here, "sglang_pidfile.py"), os.path.join(here, "..", "host", "pidfile.py")):
            if os.path.isfile(path):
                spec = importlib.util.spec_from_file_location("sglang_pidfile", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                return mod
        raise SystemExit("sglang_supervise.py: sglang_pidfile.py is missing beside %s" % here)

    pidfile = _sibling()


def _say(text, stream=None):
    """A line to the caller (these files also run as scripts on the host)."""
    stream = stream or sys.stdout
    stream.write("%s\n" % (text,))
    stream.flush()


def read_env(path):
    env = {}
    if not path:
        return env
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, value = line.split("=", 1)
            try:
                value = json.loads(value)
            except ValueError:
                pass
            env[key] = str(value)
    return env


def read_record(pid_file):
    """The supervisor's record (``P.status``: pid, started, ended, returncode, and the identities it recorded at
    start: ``identity`` of the server, ``supervisor`` of itself); {} when missing, a link or unreadable."""
    try:
        fd = os.open(pid_file + ".status", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as f:
            data = json.loads(f.read(1 << 16).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def verdicts(pid_file):
    """host/pidfile's verdict on the server's pid file and on the supervisor's, against the record.

    A record of an earlier release (no ``identity``) names the server by pid and the epoch it was spawned at, and
    its supervisor by nothing: that supervisor is believed only as the parent of the server so identified."""
    rec = read_record(pid_file)
    ident, sup_rec = rec.get("identity"), rec.get("supervisor")
    legacy = "identity" not in rec and rec.get("pid") and rec.get("ended") is None
    if legacy:
        ident = {"pid": rec.get("pid"), "started": rec.get("started")}
    server = pidfile.verdict(pid_file, ident)
    if legacy and server["state"] == "ours":
        sup_pid = pidfile.read(pid_file + ".supervisor")[0]
        seen = pidfile.observe(server["pid"])
        if sup_pid and seen and seen["ppid"] == sup_pid:
            sup_rec = pidfile.identity_of(sup_pid)
    return server, pidfile.verdict(pid_file + ".supervisor", sup_rec)


def read_pid(path):
    """The pid in ``path`` when it is the running process the supervisor recorded (``path`` is ``P`` or
    ``P.supervisor``), else None."""
    base = path[: -len(".supervisor")] if path.endswith(".supervisor") else path
    server, sup = verdicts(base)
    v = sup if path.endswith(".supervisor") else server
    return v["pid"] if v["state"] == "ours" else None


class NotOurs(RuntimeError):
    """A pid file names a process the collection did not start, or is no pid file: nothing was signalled."""


def _refusals(server, sup):
    return [v["msg"] for v in (server, sup) if v["state"] in ("refused", "foreign")]


def _write(path, text):
    """Replace ``path`` atomically, never writing through a link planted at its temporary name."""
    tmp = path + ".tmp"
    try:
        os.unlink(tmp)
    except OSError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def write_json(path, data):
    _write(path, json.dumps(data))


def write_pid(path, pid):
    _write(path, "%d\n" % pid)


def _demote(user):
    if not user:
        return None
    import grp  # pylint: disable=import-outside-toplevel
    import pwd  # pylint: disable=import-outside-toplevel

    pw = pwd.getpwnam(user)
    groups = [g.gr_gid for g in grp.getgrall() if user in g.gr_mem]

    def run():
        os.setgroups(sorted(set(groups + [pw.pw_gid])))
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)

    return run


def _spawn(cmd, env, cwd, stdin, out, setup):
    """Fork and exec the server; returns its pid. Not subprocess: ansible-core 2.21's sanity refuses it in
    module_utils (this file is one), and run_command cannot leave a server running under a pid file. The child runs
    os calls only (setup: its process group and user), then execs; any failure ends it with status 127."""
    try:
        max_fd = os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        max_fd = 4096
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(stdin, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.chdir(cwd)
            setup()
            os.closerange(3, max_fd)
            os.execvpe(cmd[0], list(cmd), env)
        finally:
            os._exit(127)  # pylint: disable=protected-access
    return pid


def _reap(pid):
    """The server's return code once it has ended (negative: the signal that ended it), else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -1
    if not done:
        return None
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def supervise(opts, cmd):
    """The detached supervisor: start the server, wait, record, clean up."""
    pid_file = opts["pid_file"]
    stop_timeout = float(opts.get("timeout") or 120)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    if opts.get("user"):
        import pwd  # pylint: disable=import-outside-toplevel

        pw = pwd.getpwnam(opts["user"])
        env.update(HOME=pw.pw_dir, USER=pw.pw_name, LOGNAME=pw.pw_name)
    env.update(read_env(opts.get("env_file")))
    log = os.open(opts["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    devnull = os.open(os.devnull, os.O_RDONLY)
    demote = _demote(opts.get("user"))

    def preexec():
        os.setpgid(0, 0)  # own process group: stop reaches every child the server forks
        if demote:
            demote()

    started = time.time()
    exe = pidfile.binary(_which(cmd[0], env["PATH"]))
    pid = _spawn(cmd, env, opts.get("cwd") or "/", devnull, log, preexec)
    os.close(log)
    os.close(devnull)
    try:
        os.setpgid(pid, pid)  # as the child does: its group exists before anyone reads the record
    except OSError:
        pass
    # the identities first, then the pid files: a pid file is only believed with its record (host/pidfile)
    state = {"pid": pid, "started": started, "ended": None, "returncode": None, "stopped": False,
             "identity": pidfile.identity_of(pid, exe), "supervisor": pidfile.identity_of(os.getpid(), _own_exe())}
    write_json(pid_file + ".status", state)
    write_pid(pid_file, pid)
    write_pid(pid_file + ".supervisor", os.getpid())
    stopping = []

    def on_term(signum, frame):  # pylint: disable=unused-argument
        stopping.append(time.time())
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    while True:
        rc = _reap(pid)
        if rc is not None:
            break
        time.sleep(0.1)
        if stopping and time.time() - stopping[0] > stop_timeout:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        os.killpg(pid, signal.SIGKILL)  # leftovers of the group (KillMode=control-group)
    except OSError:
        pass
    state.update(ended=time.time(), returncode=rc, stopped=bool(stopping))
    write_json(pid_file + ".status", state)
    for path in (pid_file, pid_file + ".supervisor"):
        try:
            os.unlink(path)
        except OSError:
            pass


def _which(name, path):
    if os.sep in name:
        return name
    for folder in path.split(os.pathsep):
        if os.access(os.path.join(folder, name), os.X_OK):
            return os.path.join(folder, name)
    return name


def _own_exe():
    try:
        return os.readlink("/proc/self/exe")
    except OSError:
        return None


def start(opts, cmd):
    running = read_pid(opts["pid_file"])
    if running:
        _say("already running: pid %d" % running)
        return 0
    status_file = opts["pid_file"] + ".status"
    try:
        os.unlink(status_file)
    except OSError:
        pass
    if os.fork():  # the caller's child; wait until the pid file says the server started
        deadline = time.time() + 30
        while time.time() < deadline:
            pid = read_pid(opts["pid_file"])
            if pid:
                _say("started: pid %d" % pid)
                return 0
            try:
                with open(status_file) as f:
                    ended = json.load(f)
            except (OSError, ValueError):
                ended = {}
            if ended.get("returncode") is not None:
                _say("the server exited at once (status %s): see %s" % (ended["returncode"], opts["log"]),
                     sys.stderr)
                return 1
            time.sleep(0.05)
        _say("the supervisor did not start the server within 30 s: see %s" % opts["log"], sys.stderr)
        return 1
    os.setsid()
    if os.fork():
        os._exit(0)  # pylint: disable=protected-access
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        supervise(opts, cmd)
    finally:
        os._exit(0)  # pylint: disable=protected-access
    return 0


def proc_state(pid, proc="/proc"):
    """(state letter, process group) of ``pid`` from /proc, or None when gone."""
    seen = pidfile.observe(pid, proc)
    return (seen["state"], seen["pgid"]) if seen else None


def stopped_in_group(pgid, proc="/proc"):
    """Pids of the process group ``pgid`` that are stopped (state T or t): they cannot act on SIGTERM."""
    out = []
    for name in os.listdir(proc):
        if name.isdigit():
            st = proc_state(int(name), proc)
            if st and st[1] == pgid and st[0] in ("T", "t"):
                out.append(int(name))
    return sorted(out)


def _signal(verdict, sig, group=True):
    """``sig`` to the process of an ``ours`` verdict: to its group only when host/pidfile allows it (the group the
    supervisor created, not the caller's), else to the process alone. Nothing to anything else."""
    if verdict["state"] != "ours":
        return
    try:
        if group and verdict["group"]:
            os.killpg(verdict["pid"], sig)
        else:
            os.kill(verdict["pid"], sig)
    except OSError:
        pass


def stop_server(pid_file, timeout=120):
    """Ask the supervisor to stop the server (SIGTERM to its group, SIGKILL after timeout); says what happened.

    Only processes whose identity matches the supervisor's record are signalled (host/pidfile); a pid file naming
    anything else raises NotOurs before any signal. A group with a stopped member is killed at once (SIGKILL, and
    SIGCONT so that the kill is delivered to a traced one too): the grace is for a process that can act on
    SIGTERM, and a stopped one cannot."""
    server, sup = verdicts(pid_file)
    refused = _refusals(server, sup)
    if refused:
        raise NotOurs("; ".join(refused))
    if "ours" not in (server["state"], sup["state"]):
        return "not running"
    frozen = stopped_in_group(server["pid"]) if server["state"] == "ours" and server["group"] else []

    def running():
        return "ours" in [v["state"] for v in verdicts(pid_file)]

    if frozen:
        for sig in (signal.SIGKILL, signal.SIGCONT):
            _signal(server, sig)
        st = proc_state(sup["pid"]) if sup["state"] == "ours" else None
        if st and st[0] in ("T", "t"):
            _signal(sup, signal.SIGCONT, group=False)  # the supervisor records the end and removes the pid files
        deadline = time.time() + 10
        while time.time() < deadline and running():
            time.sleep(0.05)
        return "stopped (killed at once: %d stopped process%s)" % (len(frozen), "es" if len(frozen) > 1 else "")
    if sup["state"] == "ours":
        _signal(sup, signal.SIGTERM, group=False)
    else:  # supervisor gone (killed): stop the server's group directly
        _signal(server, signal.SIGTERM)

    def gone(seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if not running():
                return True
            time.sleep(0.1)
        return False

    # the caller's bound, not the supervisor's: a start-up that never became ready is stopped with a short grace
    if gone(float(timeout if timeout is not None else 120)):
        return "stopped"
    _signal(server, signal.SIGKILL)
    gone(10)  # the supervisor records how the server ended and removes the pid files
    return "stopped (killed)"


def stop(opts):
    try:
        _say(stop_server(opts["pid_file"], opts.get("timeout")))
    except NotOurs as exc:
        _say(str(exc), sys.stderr)
        return 1
    return 0


def proc_start(pid, proc="/proc"):
    """Epoch seconds at which pid started (from /proc/PID/stat and btime), or None."""
    seen = pidfile.observe(pid, proc)
    if not seen or seen["btime"] is None:
        return None
    return seen["btime"] + seen["starttime"] / float(os.sysconf("SC_CLK_TCK"))


def state_of(pid_file):
    """How the supervised server stands: the .status JSON plus running, supervisor_pid, since and uptime; and
    ``problem`` when a pid file names a process the supervisor did not start (then not running: nothing of it is
    reported as the server)."""
    state = read_record(pid_file)
    server, sup = verdicts(pid_file)
    pid = server["pid"] if server["state"] == "ours" else None
    state["running"] = bool(pid)
    state["supervisor_pid"] = sup["pid"] if sup["state"] == "ours" else None
    state["problem"] = "; ".join(_refusals(server, sup)) or None
    since = proc_start(pid) if pid else None
    state["since"] = since
    state["uptime"] = round(time.time() - since, 1) if since else None
    if pid:
        state["pid"] = pid
    return state


def show(opts):
    _say(json.dumps(state_of(opts["pid_file"]), sort_keys=True))
    return 0


def parse(argv):
    if not argv or argv[0] not in ("start", "stop", "state"):
        raise SystemExit("usage: sglang_supervise.py start|stop|state --pid-file P ... (see the file's docstring)")
    action, rest, cmd = argv[0], argv[1:], []
    if "--" in rest:
        cmd = rest[rest.index("--") + 1:]
        rest = rest[: rest.index("--")]
    opts = {}
    names = {"--pid-file": "pid_file", "--log": "log", "--env-file": "env_file", "--user": "user", "--cwd": "cwd",
             "--timeout": "timeout", "--spec": "spec"}
    while rest:
        flag = rest.pop(0)
        if flag not in names or not rest:
            raise SystemExit("sglang_supervise.py: unknown option or missing value: %s" % flag)
        opts[names[flag]] = rest.pop(0)
    if opts.get("spec"):
        try:
            with open(opts["spec"]) as f:
                spec = json.load(f)
        except (OSError, ValueError) as e:
            raise SystemExit("sglang_supervise.py: cannot read --spec %s: %s" % (opts["spec"], e))
        cmd = cmd or [str(a) for a in spec.get("command") or []]
        for key in names.values():
            if key != "spec" and spec.get(key) not in (None, "") and key not in opts:
                opts[key] = str(spec[key])
    if "pid_file" not in opts:
        raise SystemExit("sglang_supervise.py: --pid-file is required")
    if action == "start" and (not cmd or "log" not in opts):
        raise SystemExit("sglang_supervise.py start: needs --log and the command after -- (or both in --spec)")
    return action, opts, cmd


def main(argv=None):
    action, opts, cmd = parse(sys.argv[1:] if argv is None else argv)
    if action == "start":
        return start(opts, cmd)
    if action == "stop":
        return stop(opts)
    return show(opts)


if __name__ == "__main__":
    raise SystemExit(main())
