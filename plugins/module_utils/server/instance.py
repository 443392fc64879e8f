# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One controller for an SGLang instance under systemd or under the pid-file supervisor (target side, stdlib only).

Reading (llmserve.sglang.server_info): ``read_state``, ``hash_files``. Acting (llmserve.sglang.server_instance):
``Instance`` writes the files, keeps and restores the previous configuration, rotates the log, starts, stops and
restarts, clears start limits, and starts and ends the multi-node peer watch - the same steps for both managers, so
systemd and pid-file hosts behave alike. Commands run through an injected ``run(argv) -> (rc, out, err)``.
"""

from __future__ import annotations

import glob
import grp
import hashlib
import json
import os
import pwd
import shutil
import tempfile
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout as server_layout
from ansible_collections.llmserve.sglang.plugins.module_utils.host import spawn
from ansible_collections.llmserve.sglang.plugins.module_utils.server import orphans as server_orphans
from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise as server_supervise

UNIT_PROPS = ("ActiveState", "SubState", "MainPID", "LoadState", "Result", "UnitFileState", "ActiveEnterTimestamp",
              "NRestarts")
# What "previous/" keeps (and restores): every file that decides what the server runs.
KEPT = ("unit", "env", "api_key", "argv", "fingerprint", "launch_spec", "adaptive")


def service_mgr(root="/"):
    """'systemd' when systemd is PID 1 (as ansible's service_mgr fact decides it), else 'other'."""
    if os.path.isdir(os.path.join(root, "run/systemd/system")):
        return "systemd"
    try:
        with open(os.path.join(root, "proc/1/comm")) as f:
            if f.read().strip() == "systemd":
                return "systemd"
    except (IOError, OSError):
        pass
    return "other"


def sha256_file(path):
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(65536), b""):
                h.update(chunk)
        return h.hexdigest()
    except (IOError, OSError):
        return None


def hash_files(paths, dirs=()):
    """sha256 of each path (None when missing), and of every regular file directly in each of dirs."""
    out = dict((p, sha256_file(p)) for p in paths)
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "*"))):
            if os.path.isfile(p):
                out[p] = sha256_file(p)
    return out


def _parse_show(text):
    return dict(line.split("=", 1) for line in (text or "").splitlines() if "=" in line)


def read_state(manager, unit_name, pid_file, run):
    """The instance now: active_state, sub_state, pid, load_state, enabled, since, restarts, result."""
    if manager == "systemd":
        rc, out, _err = run(["systemctl", "show", "--property=" + ",".join(UNIT_PROPS), unit_name])
        props = _parse_show(out) if rc == 0 else {}
        pid = int(props.get("MainPID") or 0)
        return {
            "manager": "systemd", "active_state": props.get("ActiveState", "inactive"),
            "sub_state": props.get("SubState", ""), "pid": pid, "load_state": props.get("LoadState", ""),
            "result": props.get("Result", ""), "enabled": props.get("UnitFileState") == "enabled",
            "since": props.get("ActiveEnterTimestamp", ""), "restarts": props.get("NRestarts", "0"),
        }
    st = server_supervise.state_of(pid_file)
    running = bool(st.get("running"))
    if st.get("problem"):  # a pid file naming a process the collection did not start: not reported as the server
        sub = "pid file refused: %s" % st["problem"]
    elif running:
        sub = "running"
    elif st.get("returncode") is not None:
        sub = "exited %s" % st["returncode"]
    else:
        sub = "never started" if not st.get("started") else "dead"
    since = ""
    if st.get("since"):
        since = "%s (up %d s)" % (time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(st["since"])), int(st.get("uptime") or 0))
    return {
        "manager": "pidfile", "active_state": "active" if running else "inactive", "sub_state": sub,
        "pid": int(st.get("pid") or 0) if running else 0, "load_state": "loaded", "result": str(st.get("returncode", "")),
        "enabled": running, "since": since, "restarts": "n/a (no automatic restart without systemd)",
        "returncode": st.get("returncode"), "problem": st.get("problem"),
    }


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def group_exists(name):
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def default_ipv4():
    """The address of the default route (no packet is sent), or None."""
    import socket  # pylint: disable=import-outside-toplevel

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))
        return s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()


def _ids(owner, group):
    uid = pwd.getpwnam(owner).pw_uid if owner and user_exists(owner) else -1
    gid = grp.getgrnam(group).gr_gid if group and group_exists(group) else -1
    return uid, gid


def _copy_atomic(src, dst):
    """A copy that is whole or absent: a controller killed mid-deploy never leaves half a file."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dst), prefix="." + os.path.basename(dst) + ".")
    os.close(fd)
    try:
        shutil.copy2(src, tmp)
        os.rename(tmp, dst)
    except Exception:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Instance(object):
    """The acting half. ``check_mode``: report what would change, change nothing."""

    def __init__(self, params, run, check_mode=False, python=None):
        self.p = params
        self.paths = params["paths"]
        self.run = run
        self.check = check_mode
        self.python = python
        self.changes = []
        self.diff = []
        self.stopped = None
        self.orphans = []
        # the server's pid before it is stopped: its process group and session are the instance's
        self.server_pid = None

    # ---- files
    def ensure_dirs(self):
        """The instance's directories, through the one rule for what the collection owns (host/owned_dirs): every
        one judged on this host first (links resolved, the system-path rule, made by the collection or adopted by
        server_adopt_dirs, the compile caches never trusted with another owner or a looser mode), all refused at
        once before anything is made or changed."""
        dirs = self.p.get("dirs") or []
        cache_root = server_layout.compile_cache_root(dirs, self.paths)
        names = dict((owned_dirs.quiet_normalise(k), v) for k, v in server_layout.dir_names(dirs, self.paths).items())
        specs = []
        for d in dirs:
            uid, gid = _ids(d["owner"], d["group"])
            clean = owned_dirs.quiet_normalise(d["path"])
            cache = bool(cache_root and clean) and owned_dirs.under(clean, cache_root)
            specs.append({"path": d["path"], "uid": uid, "gid": gid, "mode": int(d["mode"], 8), "cache": cache,
                          "what": names.get(clean) or ("the compile cache" if cache else "directory")})
        try:
            self.changes.extend(owned_dirs.ensure_all(specs, self.p.get("adopt_dirs") or (), "server_adopt_dirs",
                                                      check=self.check))
        except owned_dirs.Refused as e:
            raise RuntimeError("%s. Nothing was changed and the running server was not touched" % e)

    def backup(self):
        """Keep the configuration that runs now in previous/ (server_on_failure: rollback puts it back)."""
        prev = self.paths["previous_dir"]
        kept = []
        for key in KEPT:
            src = self.paths[key]
            if os.path.isfile(src):
                kept.append(key)
                if not self.check:
                    _copy_atomic(src, os.path.join(prev, os.path.basename(src)))
        if kept:
            self.changes.append("kept the running configuration in %s" % prev)
        return kept

    def write(self, files, remove=()):
        written = []
        for f in files:
            before = None
            if os.path.isfile(f["path"]):
                with open(f["path"], "rb") as h:
                    before = h.read().decode("utf-8", "replace")
            if before == f["content"]:
                continue
            written.append(f["path"])
            if not f.get("secret"):
                self.diff.append({"before_header": f["path"], "after_header": f["path"],
                                  "before": before or "", "after": f["content"]})
            if self.check:
                continue
            d = os.path.dirname(f["path"])
            fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(f["path"]) + ".")
            try:
                os.write(fd, f["content"].encode("utf-8"))
                os.close(fd)
                os.chmod(tmp, int(f["mode"], 8))
                uid, gid = _ids(f.get("owner"), f.get("group"))
                os.chown(tmp, uid, gid)
                os.rename(tmp, f["path"])
            except Exception:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
        for path in remove:
            if os.path.lexists(path):
                written.append(path)
                if not self.check:
                    os.unlink(path)
        if written:
            self.changes.append("wrote %s" % ", ".join(written))
        return written

    def restore(self):
        """Put previous/ back in place; returns False when nothing was kept."""
        prev = self.paths["previous_dir"]
        main = self.paths["unit"] if self.p["manager"] == "systemd" else self.paths["launch_spec"]
        if not os.path.isfile(os.path.join(prev, os.path.basename(main))):
            return False
        for key in KEPT:
            src = os.path.join(prev, os.path.basename(self.paths[key]))
            if os.path.isfile(src):
                if not self.check:
                    _copy_atomic(src, self.paths[key])
            elif key == "api_key" and os.path.isfile(self.paths[key]) and not self.check:
                os.unlink(self.paths[key])  # the previous configuration ran without a key
        self.changes.append("restored the previous configuration from %s" % prev)
        return True

    def rotate_log(self):
        log, keep = self.paths["log"], int(self.p.get("log_keep", 5))
        if os.path.isfile(log) and os.path.getsize(log) > 0:
            self.changes.append("rotated %s" % log)
            if not self.check:
                os.rename(log, "%s.%s" % (log, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())))
        old = sorted(glob.glob(log + ".*"), key=os.path.getmtime, reverse=True)
        for path in old[keep:]:
            if not self.check:
                os.unlink(path)

    # ---- the process
    def _systemctl(self, *args):
        rc, out, err = self.run(["systemctl"] + list(args))
        if rc != 0:
            raise RuntimeError("systemctl %s failed: %s" % (" ".join(args), (err or out).strip()))
        return out

    def state(self):
        return read_state(self.p["manager"], self.paths["unit_name"], self.paths["pid_file"], self.run)

    def stop(self, disable=False, grace=None):
        """Stop the server: SIGTERM, SIGKILL after ``grace`` seconds (None: the manager's own bound, TimeoutStopSec or
        the supervisor's timeout - the drain of a serving server). Then end what the instance left on the GPUs.
        Returns whether something was running; ``self.stopped`` says how it went."""
        started = time.time()
        killed = at_once = False
        if self.p["manager"] == "systemd":
            unit = self.paths["unit_name"]
            st = self.state()
            if st["load_state"] in ("not-found", ""):
                return False
            was = st["active_state"] not in ("inactive", "failed")
            if not self.check:
                if was and grace is None:
                    self._systemctl("stop", unit)
                elif was:
                    # A stop job in progress keeps Restart= from starting it again; SIGKILL ends the job early.
                    # A stopped member (state T) cannot act on SIGTERM: then there is no grace to wait.
                    at_once = bool(self._stopped_members(st.get("pid")))
                    self._systemctl("stop", "--no-block", unit)
                    if at_once or not self._wait_inactive(grace):
                        killed = True
                        self.run(["systemctl", "kill", "--signal=SIGKILL", unit])
                    self._systemctl("stop", unit)
                if disable and st["enabled"]:
                    self._systemctl("disable", unit)
            if was:
                self.changes.append("stopped %s%s" % (unit, " (SIGKILL at once: members stopped)" if at_once
                                                      else " (SIGKILL after %s s)" % grace if killed else ""))
        else:
            was = bool(server_supervise.state_of(self.paths["pid_file"]).get("running"))
            timeout = grace if grace is not None else self.p.get("stop_timeout")
            if not self.check:
                how = server_supervise.stop_server(self.paths["pid_file"], timeout)
                was = how != "not running"
                killed = how.startswith("stopped (killed")
                at_once = "at once" in how
            if was:
                self.changes.append("stopped the supervised server (%s)%s" % (
                    self.paths["pid_file"], " (SIGKILL at once: members stopped)" if at_once
                    else " (SIGKILL after %s s)" % timeout if killed else ""))
        self.stopped = {"seconds": round(time.time() - started, 1), "grace": grace, "killed": killed, "at_once": at_once}
        self.sweep(grace if grace is not None else self.p.get("stop_grace_unready", 10))
        return was

    @staticmethod
    def _stopped_members(main_pid):
        """Pids of the server's process tree (from its main pid) that are stopped (state T)."""
        if not main_pid:
            return []
        pgid = (server_supervise.proc_state(int(main_pid)) or (None, None))[1]
        return server_supervise.stopped_in_group(pgid) if pgid else []

    def _wait_inactive(self, seconds):
        deadline = time.time() + float(seconds)
        while time.time() < deadline:
            if self.state()["active_state"] in ("inactive", "failed"):
                return True
            time.sleep(0.2)
        return False

    def sweep(self, grace):
        """End what the instance left on the GPUs (a scheduler that outlived its launcher)."""
        pids = [p for p in (self.server_pid,) if p]
        res = server_orphans.sweep(self.paths["instance"], self.paths["unit_name"] if self.p["manager"] == "systemd"
                                   else None, pids, grace=grace, run=self.run, check=self.check)
        self.orphans.append(res)
        for o in res["ended"]:
            self.changes.append("ended pid %d left on the GPU (%s MiB, %s; SIG%s): %s" % (
                o["pid"], o["used_memory_mib"], o["why"], o["signal"], o["cmdline"]))
        return res

    def start(self, daemon_reload=False):
        """Start from a clean slate: start limits reset, a unit waiting for its auto-restart restarted now."""
        if self.p["manager"] == "systemd":
            unit = self.paths["unit_name"]
            self.changes.append("started %s" % unit)
            if self.check:
                return None
            if daemon_reload:
                self._systemctl("daemon-reload")
            st = self.state()
            if st["active_state"] == "failed" or st["result"] == "start-limit-hit":
                self.run(["systemctl", "reset-failed", unit])
            self._systemctl("enable", unit)
            self._systemctl("restart" if st["active_state"] == "activating" else "start", unit)
            return None
        self.changes.append("started the supervised server (%s)" % self.paths["pid_file"])
        if self.check:
            return None
        rc, out, err = self.run([self.python, self.paths["supervisor"], "start", "--spec", self.paths["launch_spec"]])
        # A server that exits at once is diagnosed by the wait that follows, from its log.
        return None if rc == 0 else (err or out).strip()

    def record(self, fingerprint):
        if self.check:
            return
        with open(self.paths["fingerprint"], "w") as f:
            f.write(fingerprint + "\n")

    # ---- multi-node peer watch (both managers)
    def peer_watch_start(self, watch):
        for path in (self.paths["peer_marker"], self.paths["peer_done"]):
            if os.path.exists(path) and not self.check:
                os.unlink(path)
        if self.check:
            return
        bind = watch["endpoint"].rpartition(":")[0].strip("[]")
        argv = [self.python, self.paths["peer_watch"], "--name", watch["name"], "--bind", bind,
                "--port", str(watch["port"]), "--marker", self.paths["peer_marker"], "--done", self.paths["peer_done"],
                "--timeout", str(watch["timeout"])]
        if self.p["manager"] == "systemd":
            argv += ["--unit", self.paths["unit_name"]]
        else:
            argv += ["--pid-file", self.paths["pid_file"]]
        argv += ["--peer=%s" % peer for peer in watch.get("peers") or []]
        env = dict(os.environ, LLMSERVE_PEER_TOKEN=watch.get("token") or "")
        log = open(os.path.join(self.paths["run_dir"], "peer-watch.log"), "ab")
        try:
            # its own session: it outlives this module and the SSH connection that ran it (host/spawn: not run_command)
            spawn.start(argv, env=env, stdout=log.fileno(), stderr=log.fileno(), new_session=True)
        finally:
            log.close()

    def peer_watch_end(self):
        """End the watch; returns the peer's failure record, or None."""
        if not self.check:
            with open(self.paths["peer_done"], "a"):
                pass
        try:
            with open(self.paths["peer_marker"]) as f:
                return json.load(f)
        except (IOError, OSError, ValueError):
            return None


ACTIONS = ("write", "none", "start", "restart", "stop", "end_watch", "recover")


def act(inst, params):
    """Carry out one action of the plan. Returns the module result (without 'changed').

    write      the directories and files (and previous/ kept first with ``backup``)
    none       nothing, or reload systemd for a unit file that waits for the next restart
    start, restart, stop   what the plan decided (stop also disables)
    end_watch  the wait succeeded: end the multi-node peer watch
    recover    the wait failed: end the watch, stop what failed with the short grace of a server that never became
               ready, then ``on_failure`` - rollback (put previous/ back and start it) or stop (keep it stopped)
    """
    action = params["action"]
    res = {"action": action}
    inst.server_pid = inst.state().get("pid") or None if action in ("restart", "stop", "recover") else None
    if action == "write":
        inst.ensure_dirs()
        if params.get("backup"):
            res["kept"] = inst.backup()
        res["written"] = inst.write(params.get("files") or [], params.get("remove") or [])
    elif action in ("start", "restart", "stop"):
        if action in ("restart", "stop"):
            res["was_running"] = inst.stop(disable=action == "stop")
        if action != "stop":
            inst.rotate_log()
            err = inst.start(daemon_reload=params.get("daemon_reload", False))
            if err:
                res["start_error"] = err
            inst.record(params["fingerprint"])
            if params.get("peer_watch"):
                inst.peer_watch_start(params["peer_watch"])
    elif action == "none" and params.get("daemon_reload") and not inst.check:
        inst._systemctl("daemon-reload")  # pylint: disable=protected-access
        inst.changes.append("reloaded systemd: the new unit waits for the next restart")
    elif action == "end_watch":
        if params.get("peer_watch"):
            res["peer_failure"] = inst.peer_watch_end()
    elif action == "recover":
        if params.get("peer_watch"):
            res["peer_failure"] = inst.peer_watch_end()
        # it never became ready: there is no request to drain, and a frozen start-up ignores SIGTERM
        inst.stop(grace=params.get("stop_grace_unready", 10))
        res["on_failure"] = params.get("on_failure", "rollback")
        if res["on_failure"] == "rollback":
            res["rolled_back"] = inst.restore()
            if res["rolled_back"]:
                inst.rotate_log()
                err = inst.start(daemon_reload=inst.p["manager"] == "systemd")
                if err:
                    res["start_error"] = err
    if inst.stopped is not None:
        res["stopped"] = inst.stopped
    if inst.orphans:
        res["orphans"] = inst.orphans[-1]
    res["state"] = inst.state() if not inst.check or action != "write" else None
    res["changes"] = list(inst.changes)
    return res
