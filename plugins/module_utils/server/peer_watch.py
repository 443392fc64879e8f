# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fail a multi-node SGLang replica as a whole, within seconds, while roles/server waits for it to start.

Runs on every node of the replica for the duration of the start-up wait (started by the role, detached) and does
two things at once:

* watches this node's server (systemd unit or pid file); when it is gone, tells every peer (one TCP line);
* listens for such a line from a peer (source address must be a peer, token must match); then it records the peer's
  failure in ``--marker`` (JSON) and stops this node's server, so that this node's own wait ends at once instead of
  hanging in NCCL / torch.distributed until a stall or stage timeout.

Installed by roles/server as /usr/local/lib/llmserve-sglang/sglang_peer_watch.py and started, detached, by
llmserve.sglang.server_instance (it must outlive the module). Both end when ``--done`` exists (the role's wait is over) or after ``--timeout`` seconds.
The token comes from the environment (LLMSERVE_PEER_TOKEN), so it is not in the argv.  Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import time
import sys

TICK = 0.2


def _say(text, stream=None):
    """A line to the caller (these files also run as scripts on the host)."""
    stream = stream or sys.stdout
    stream.write("%s\n" % (text,))
    stream.flush()


def _output(argv, timeout):
    """stdout of argv, or None when it cannot run, fails or outlives timeout s (then killed). Fork and exec, not
    subprocess: ansible-core 2.21's sanity refuses subprocess in module_utils, and this script has no module."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(write_end, 1)
            os.dup2(null, 2)
            os.closerange(3, 1024)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)  # pylint: disable=protected-access
    os.close(write_end)
    chunks, deadline, timed_out = [], time.time() + timeout, False
    try:
        while True:
            left = deadline - time.time()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            data = os.read(read_end, 65536)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(read_end)
        _pid, status = os.waitpid(pid, 0)
    if timed_out or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    return b"".join(chunks).decode("utf-8", "replace")


def server_state(unit=None, pid_file=None):
    """'running', 'starting' (nothing to watch yet) or a word saying how it is gone."""
    if unit:
        out = _output(["systemctl", "show", "--property=ActiveState,SubState,Result", unit], 10)
        if out is None:
            return "running"  # cannot tell: never fail a replica on a guess
        st = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        active, sub = st.get("ActiveState", ""), st.get("SubState", "")
        if active in ("failed", "inactive") or (active == "activating" and sub == "auto-restart"):
            return "%s (%s, result %s)" % (active, sub, st.get("Result", "?"))
        return "running"
    try:
        with open(pid_file) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return "starting"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "exited (pid %d gone)" % pid
    except PermissionError:
        pass
    return "running"


def stop_server(unit=None, pid_file=None):
    """Stop this node's server: its unit, or through the supervisor beside this file (its ``stop`` signals only
    the process it recorded starting: a pid file is not proof)."""
    if unit:
        _output(["systemctl", "stop", "--no-block", unit], 30)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("sglang_supervise.py", "supervise.py"):  # installed, or in a checkout
        if os.path.isfile(os.path.join(here, name)):
            _output([sys.executable, os.path.join(here, name), "stop", "--pid-file", pid_file], 30)
            return


def notify(peers, line, deadline):
    """Send line to every peer (host:port); retry each until deadline (a peer may be restarting its watcher)."""
    pending = list(peers)
    while pending and time.time() < deadline:
        for peer in list(pending):
            host, _sep, port = peer.rpartition(":")
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=2) as s:
                    s.sendall(line.encode("utf-8"))
                pending.remove(peer)
            except (OSError, ValueError):
                pass
        if pending:
            time.sleep(TICK)
    return pending


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--name", required=True, help="this node's inventory name (sent to peers)")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--unit", help="systemd unit of this node's server")
    who.add_argument("--pid-file", help="pid file of this node's server (pidfile launcher)")
    p.add_argument("--bind", default="0.0.0.0", help="address to listen on")
    p.add_argument("--port", type=int, required=True, help="port to listen on")
    p.add_argument("--peer", action="append", default=[], help="NAME=HOST:PORT of a peer (repeat)")
    p.add_argument("--marker", required=True, help="JSON file written when a peer failed")
    p.add_argument("--done", required=True, help="stop watching once this file exists")
    p.add_argument("--timeout", type=float, default=3600)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    token = os.environ.get("LLMSERVE_PEER_TOKEN", "")
    peers = dict(p.split("=", 1) for p in args.peer)
    allowed = set()
    for addr in peers.values():
        host = addr.rpartition(":")[0].strip("[]")
        try:
            allowed.update(i[4][0] for i in socket.getaddrinfo(host, None))
        except OSError:
            allowed.add(host)
    srv = socket.socket(socket.AF_INET6 if ":" in args.bind else socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(8)
    srv.settimeout(TICK)
    deadline = time.time() + args.timeout
    while time.time() < deadline and not os.path.exists(args.done):
        state = server_state(args.unit, args.pid_file)
        if state not in ("running", "starting"):
            what = "%s %s" % (args.unit or "server (pid file %s)" % args.pid_file, state)
            line = "FAILED %s %s %.3f %s\n" % (token, args.name, time.time(), what)
            left = notify(peers.values(), line, min(deadline, time.time() + 30))
            _say("own server gone (%s); told %d peer(s), %d unreachable" % (what, len(peers) - len(left), len(left)))
            return 0
        try:
            conn, addr = srv.accept()
        except socket.timeout:
            continue
        with conn:
            conn.settimeout(2)
            try:
                data = conn.recv(4096).decode("utf-8", "replace")
            except OSError:
                continue
        parts = data.strip().split(" ", 4)
        if addr[0] not in allowed or len(parts) < 5 or parts[0] != "FAILED" or parts[1] != token:
            _say("ignored a message from %s" % addr[0])
            continue
        try:
            sent = float(parts[3])
        except ValueError:
            sent = time.time()
        record = {"node": parts[2], "detail": parts[4], "from": addr[0], "sent": sent, "time": time.time()}
        tmp = args.marker + ".tmp"
        with open(tmp, "w") as f:
            json.dump(record, f)
        os.rename(tmp, args.marker)
        stop_server(args.unit, args.pid_file)
        _say("peer %s failed (%s): stopped this node's server" % (record["node"], record["detail"]))
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
