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
``stop`` asks the supervisor to stop: SIGTERM to the server's process group, SIGKILL after ``--timeout`` seconds
(the caller kills the group itself at its own bound, which may be shorter: a start-up that never became ready).
A group with a stopped member (state T: SIGSTOP, a tracer) is killed at once: a stopped process cannot act on
SIGTERM, so no grace would end it.
``state`` prints that JSON, with ``running``, ``supervisor_pid`` and, while running, ``since`` (the server's start,
epoch seconds, from /proc) and ``uptime``.  ``--spec`` reads the options from a JSON file (roles/server's launch.json:
``pid_file``, ``log``, ``env_file``, ``user``, ``cwd``, ``timeout``, ``command``); options given on the command line win.
Standard library only, Python >= 3.8.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # pylint: disable=invalid-name

import json
import os
import signal
import sys
import time


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


def read_pid(path):
    try:
        with open(path) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return pid


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.rename(tmp, path)


def write_pid(path, pid):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % pid)
    os.rename(tmp, path)


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
    pid = _spawn(cmd, env, opts.get("cwd") or "/", devnull, log, preexec)
    os.close(log)
    os.close(devnull)
    write_pid(pid_file, pid)
    state = {"pid": pid, "started": started, "ended": None, "returncode": None, "stopped": False}
    write_json(pid_file + ".status", state)
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
    write_pid(opts["pid_file"] + ".supervisor", os.getpid())
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
    try:
        with open("%s/%d/stat" % (proc, pid), "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except (OSError, IOError):
        return None
    rest = raw[raw.rfind(")") + 2:].split()  # comm may hold spaces and parentheses
    return rest[0], int(rest[2])


def stopped_in_group(pgid, proc="/proc"):
    """Pids of the process group ``pgid`` that are stopped (state T or t): they cannot act on SIGTERM."""
    out = []
    for name in os.listdir(proc):
        if name.isdigit():
            st = proc_state(int(name), proc)
            if st and st[1] == pgid and st[0] in ("T", "t"):
                out.append(int(name))
    return sorted(out)


def stop_server(pid_file, timeout=120):
    """Ask the supervisor to stop the server (SIGTERM to its group, SIGKILL after timeout); says what happened.

    A group with a stopped member is killed at once (SIGKILL, and SIGCONT so that the kill is delivered to a traced
    one too): the grace is for a process that can act on SIGTERM, and a stopped one cannot."""
    sup = read_pid(pid_file + ".supervisor")
    server = read_pid(pid_file)
    if not sup and not server:
        return "not running"
    frozen = stopped_in_group(server) if server else []
    if frozen:
        for sig in (signal.SIGKILL, signal.SIGCONT):
            try:
                os.killpg(server, sig)
            except OSError:
                pass
        st = proc_state(sup) if sup else None
        if st and st[0] in ("T", "t"):
            os.kill(sup, signal.SIGCONT)  # the supervisor records the end and removes the pid files
        deadline = time.time() + 10
        while time.time() < deadline and (read_pid(pid_file + ".supervisor") or read_pid(pid_file)):
            time.sleep(0.05)
        return "stopped (killed at once: %d stopped process%s)" % (len(frozen), "es" if len(frozen) > 1 else "")
    if sup:
        os.kill(sup, signal.SIGTERM)
    else:  # supervisor gone (killed): stop the server's group directly
        os.killpg(server, signal.SIGTERM)

    def gone(seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if not read_pid(pid_file + ".supervisor") and not read_pid(pid_file):
                return True
            time.sleep(0.1)
        return False

    # the caller's bound, not the supervisor's: a start-up that never became ready is stopped with a short grace
    if gone(float(timeout if timeout is not None else 120)):
        return "stopped"
    if server:
        try:
            os.killpg(server, signal.SIGKILL)
        except OSError:
            pass
    gone(10)  # the supervisor records how the server ended and removes the pid files
    return "stopped (killed)"


def stop(opts):
    _say(stop_server(opts["pid_file"], opts.get("timeout")))
    return 0


def proc_start(pid, proc="/proc"):
    """Epoch seconds at which pid started (from /proc/PID/stat and btime), or None."""
    try:
        with open("%s/%d/stat" % (proc, pid)) as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("%s/stat" % proc) as f:
            btime = int([line.split()[1] for line in f if line.startswith("btime ")][0])
    except (OSError, ValueError, IndexError):
        return None
    return btime + ticks / float(os.sysconf("SC_CLK_TCK"))


def state_of(pid_file):
    """How the supervised server stands: the .status JSON plus running, supervisor_pid, since and uptime."""
    try:
        with open(pid_file + ".status") as f:
            state = json.load(f)
    except (OSError, ValueError):
        state = {}
    pid = read_pid(pid_file)
    state["running"] = bool(pid)
    state["supervisor_pid"] = read_pid(pid_file + ".supervisor")
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
