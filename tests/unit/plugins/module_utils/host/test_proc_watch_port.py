# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""proc_watch.port_owner on real processes and sockets: only a holder that is seen may make a port 'other'."""
import socket
import subprocess
import sys

from ansible_collections.llmserve.sglang.plugins.module_utils.host import net, proc_watch

LISTEN = ("import socket,sys,time; s=socket.socket(); s.bind(('0.0.0.0', 0)); s.listen(1); "
          "print(s.getsockname()[1], flush=True); time.sleep(60)")


def _listener():
    p = subprocess.Popen([sys.executable, "-c", LISTEN], stdout=subprocess.PIPE)
    return p, int(p.stdout.readline())


def test_ours_other_and_unknown():
    p, port = _listener()
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert proc_watch.port_owner(port, p.pid) == "ours"        # the watched tree holds it (0.0.0.0 too)
        assert proc_watch.port_owner(port, idle.pid) == "other"    # someone else is seen holding it
        idle.kill()
        idle.wait()
        assert proc_watch.port_owner(port, idle.pid) is None       # our process is gone: no judgement
    finally:
        p.kill()
        p.wait()
        if idle.poll() is None:
            idle.kill()


def test_nobody_listening_is_unknown():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert proc_watch.port_owner(port, 1) is None


def test_without_ptrace_rights_the_socket_owner_decides(monkeypatch):
    # A container without CAP_SYS_PTRACE: root cannot read the fd tables of another user's processes. The
    # listener's uid in /proc/net/tcp still says it is not ours.
    import os
    import pytest
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs root and /usr/bin/python3 to start a listener as another user")
    p = subprocess.Popen(["/usr/bin/python3", "-c", LISTEN], stdout=subprocess.PIPE, user=65534, group=65534,
                         extra_groups=[], cwd="/")
    port = int(p.stdout.readline())
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert net.listening_sockets(port) and set(net.listening_sockets(port).values()) == {65534}
        assert proc_watch.uid_of(idle.pid) == 0
        monkeypatch.setattr(proc_watch, "socket_inodes", lambda pids: (set(), False))  # every fd table unreadable
        monkeypatch.setattr(net, "socket_holders", lambda inodes, proc_root="/proc": set())  # no holder seen either
        assert proc_watch.port_owner(port, idle.pid) == "other"
        # the same uid on both sides and no fd table: nothing can be told
        assert proc_watch.port_owner(port, p.pid) is None
    finally:
        p.kill()
        idle.kill()
        p.wait()
        idle.wait()
