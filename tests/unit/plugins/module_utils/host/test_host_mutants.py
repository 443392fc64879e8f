# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/access, host/mounts, host/ownership (issue 37): the mode-bit judgement as another effective user, the
kernel's answer through the dropped child (its failure, its output past one pipe read), the ancestors of a path,
mountinfo's field counts at and below their bounds, the cgroup parser; on real files and processes: the mutants of
tools/mutation's host room that the other tests let through."""
import json
import os
import pwd
import socket
import stat
import subprocess
import time
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import access, lock, mounts, net, ownership, proc_watch

ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody").pw_uid


def _file(root, name, mode, owner=(0, 0)):
    path = os.path.join(root, name)
    with open(path, "w") as f:
        f.write("x")
    os.chown(path, *owner)
    os.chmod(path, mode)
    return path


# ---- access

def test_identity_without_getgrouplist_reads_the_group_file(monkeypatch):
    with_list = access.identity("root")
    monkeypatch.delattr(os, "getgrouplist")
    assert access.identity("root") == with_list == access.identity("0")
    assert access.identity("daemon")[:2] == (1, 1)


def test_group_bits_deny_as_well_as_allow():
    assert access.mode_allows(stat.S_IFREG | 0o700, 0, 50, 1000, [50], access.READ) is False
    assert access.mode_allows(stat.S_IFREG | 0o040, 0, 50, 1000, [50], access.READ) is True
    assert access.mode_allows(stat.S_IFREG | 0o004, 0, 50, 1000, [50], access.READ) is False   # group bits, not other


def test_try_each_want(open_dir):
    f = _file(open_dir, "f", 0o644)
    assert access._try(f, access.READ) is None                                  # pylint: disable=protected-access
    assert access._try(open_dir, access.LIST) is None                             # pylint: disable=protected-access
    assert access._try(open_dir, access.ENTER) is None                            # pylint: disable=protected-access
    assert access._try(f, access.LIST) == "Not a directory"                     # pylint: disable=protected-access
    assert access._try(f, access.ENTER) == "permission denied"                  # pylint: disable=protected-access
    assert access._try(os.path.join(open_dir, "none"), access.READ) == "No such file or directory"  # pylint: disable=protected-access


@pytest.mark.skipif(not ROOT, reason="seteuid needs root")
def test_denied_by_mode_bits_when_neither_root_nor_the_user(open_dir):
    closed = _file(open_dir, "closed", 0o640)
    world = _file(open_dir, "world", 0o644)
    sub = os.path.join(open_dir, "sub")
    os.mkdir(sub)
    os.chmod(sub, 0o711)
    missing = os.path.join(open_dir, "none")
    checks = [(missing, access.READ), (closed, access.READ), (world, access.READ), (sub, access.ENTER),
              (sub, access.LIST)]
    os.seteuid(NOBODY)
    try:
        out, method = access.denied("daemon", checks)
    finally:
        os.seteuid(0)
    assert method == "mode"
    assert out == [(missing, access.READ, "No such file or directory"), (closed, access.READ, "mode 0o640"),
                   (sub, access.LIST, "mode 0o711")]


@pytest.mark.skipif(not ROOT, reason="the child drops from root")
def test_the_dropped_child_failing_is_an_error_naming_the_uid(open_dir):
    with pytest.raises(OSError, match=r"^the check as uid 1 failed in its child process$"):
        access._denied_as(1, 1, [-5], [(open_dir, access.LIST)])                  # pylint: disable=protected-access


@pytest.mark.skipif(not ROOT, reason="the child drops from root")
def test_the_dropped_childs_answer_past_one_pipe_read_is_whole(open_dir):
    checks = [(os.path.join(open_dir, "missing-%05d-%s" % (i, "y" * 60)), access.READ) for i in range(1500)]
    out, method = access.denied("nobody", checks)
    assert method == "kernel"
    assert out == [(path, access.READ, "No such file or directory") for path, _want in checks]   # every byte, in order


def test_ancestors():
    assert access.ancestors("/nonexistent-a/Xb/c") == ["/", "/nonexistent-a", "/nonexistent-a/Xb"]
    assert access.ancestors("/Xnonexistent/y") == ["/", "/Xnonexistent"]
    assert access.ancestors("/nonexistent-a") == ["/"]
    assert access.ancestors("/") == []


def test_describe_names_owner_and_group_or_their_numbers(open_dir):
    assert access.describe(_file(open_dir, "a", 0o640)) == "mode 0640 root:root"
    assert access.describe(_file(open_dir, "b", 0o604, (4242, 4243))) == "mode 0604 4242:4243"
    assert access.describe(os.path.join(open_dir, "none")) == "No such file or directory"


# ---- mounts

_LINE = "36 35 98:0 / %s rw,noatime master:1 - %s %s rw"


def test_mountinfo_field_counts_at_and_below_their_bounds():
    text = "\n".join([
        "1 2 3:4 / - ext4 /dev/a",             # 4 fields before the separator: skipped
        "1 2 3:4 / /five - ext4 /dev/five",    # 5: read
        "1 2 3:4 / /short - ext4",             # one field after it: skipped
        "1 2 3:4 / /two - xfs /dev/two",       # two: read
        "no separator here at all",
        _LINE % ("/mnt/a\\040b", "nfs4", "srv:/x\\040y"),
    ])
    assert mounts.parse_mountinfo(text) == [("/five", "ext4", "/dev/five"), ("/two", "xfs", "/dev/two"),
                                            ("/mnt/a b", "nfs4", "srv:/x y")]


def test_the_longest_mount_point_holding_the_path_wins_and_a_later_one_hides_an_earlier():
    text = "\n".join([_LINE % ("/", "ext4", "/dev/root"), _LINE % ("/mntX", "nfs", "srv:/x"),
                      _LINE % ("/data", "ext4", "/dev/a"), _LINE % ("/data", "lustre", "mds:/fs")])
    assert mounts.filesystem("/mnt/nonexistent", text)["mount"] == "/"
    assert mounts.filesystem("/mntX/nonexistent", text)["fstype"] == "nfs"
    wanted = {"mount": "/data", "fstype": "lustre", "source": "mds:/fs", "network": True}
    assert mounts.filesystem("/data/nonexistent", text) == wanted


# ---- ownership

def test_cgroup_units_read_the_path_after_the_second_colon():
    assert ownership.cgroup_units("0::/system.slice/a:b.service\n") == ["a:b.service"]
    assert ownership.cgroup_units("0::/system.slice/my unit.service\n") == ["my unit.service"]
    assert ownership.cgroup_units("1:name=systemd:/user.slice/x.scope\n0::/system.slice/x.scope") == ["x.scope"]
    assert ownership.cgroup_units(None) == [] and ownership.cgroup_units("") == []


def test_a_glob_ending_in_a_star_keeps_any_suffix():
    ident = {"cmdline": "", "cgroup": "0::/system.slice/llm-a.scope\n"}
    assert ownership.in_unit(ident, ["llm-*"]) is True
    assert ownership.in_unit(ident, ["llm-a"]) is False                          # no suffix: its .service only
    assert ownership.in_unit(ident, ["llm-a.scope"]) is True


# ---- net

def test_split_listen_address_both_sides():
    assert net.split_listen_address("[::1]:9090") == ("::1", 9090)
    assert net.split_listen_address("[::1:9090") == ("[::1", 9090)               # a bracket on one side is kept
    assert net.split_listen_address("::1]:9090") == ("::1]", 9090)
    with pytest.raises(ValueError, match=r"^'9090' is not HOST:PORT$"):
        net.split_listen_address("9090")


def _fake_proc(root, pid, links, junk=20):
    fd_dir = os.path.join(root, str(pid), "fd")
    os.makedirs(fd_dir)
    for i in range(junk):                                                        # entries readlink refuses
        open(os.path.join(fd_dir, "%d" % (100 + i)), "w").close()
    for i, target in enumerate(links):
        os.symlink(target, os.path.join(fd_dir, str(i)))


def test_socket_holders_read_past_what_they_cannot_read(tmp_path):
    root = str(tmp_path)
    for name in ["self", "net", "sys", "acpi", "bus", "fs", "irq", "tty", "driver", "dma"] + ["x%d" % i for i in range(10)]:
        os.mkdir(os.path.join(root, name))                                       # names that are no pid
    _fake_proc(root, 123, ["socket:[555]", "pipe:[9]"])
    _fake_proc(root, 456, ["socket:[556]"])
    os.mkdir(os.path.join(root, "789"))                                          # a pid whose fd table is unreadable
    assert net.socket_holders({"555", "556"}, proc_root=root) == {123, 456}
    assert net.socket_holders({"9"}, proc_root=root) == set()
    assert net.socket_holders(set(), proc_root=root) == set()


# ---- lock

def test_describe_a_holder():
    since = 365 * 86400 + 3661
    text = lock.describe({"user": "u", "controller": "c", "pid": 7, "since": since})
    assert text.startswith("u@c (ansible-playbook pid 7) since 1971-01-01 01:01:01 UTC (") and text.endswith(" s ago)")
    assert int(text.rsplit("(", 1)[1].split()[0]) > 1000000                      # now less 1971: years of seconds
    assert lock.describe({}).startswith("None@None (ansible-playbook pid None) since 1970-01-01 00:00:00 UTC (")
    future = lock.describe({"user": "u", "controller": "c", "pid": 7, "since": 4102444800})   # 2100: not yet
    assert future == "u@c (ansible-playbook pid 7) since 2100-01-01 00:00:00 UTC (0 s ago)"


# ---- proc_watch: the process and systemd readers on real processes and real programs

def _local_runner(calls):
    def run(argv, data=None, environ_update=None, timeout=None):
        calls.append((list(argv), timeout))
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    return run


def _program(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    os.chmod(str(path), 0o755)
    return str(path)


def test_unit_show_asks_systemctl_for_the_unit_properties(tmp_path):
    calls = []
    systemctl = _program(tmp_path, "systemctl", "printf 'ActiveState=active\\nSubState=running\\nExecMainStatus=0=x\\n'")
    props = proc_watch.unit_show("sglang.service", systemctl, _local_runner(calls))
    assert props == {"ActiveState": "active", "SubState": "running", "ExecMainStatus": "0=x"}
    assert calls == [([systemctl, "show", "sglang.service", "--no-pager", "-p", ",".join(proc_watch.UNIT_PROPS)], 10)]
    assert proc_watch.unit_show("u") == {"error": "no command runner given"}
    failing = _program(tmp_path, "failing", "echo '  no such unit  ' >&2; exit 4")
    assert proc_watch.unit_show("u", failing, _local_runner([])) == {"error": "no such unit"}
    silent = _program(tmp_path, "silent", "exit 3")
    assert proc_watch.unit_show("u", silent, _local_runner([])) == {"error": "rc 3"}


@pytest.mark.parametrize("props, running", [
    ({"ActiveState": "active", "SubState": "running"}, True), ({"ActiveState": "reloading"}, True),
    ({"ActiveState": "activating", "SubState": "start"}, True),
    ({"ActiveState": "activating", "SubState": "auto-restart"}, False),
    ({"ActiveState": "inactive", "SubState": "dead"}, False), ({"ActiveState": "failed"}, False), ({}, False),
])
def test_unit_running(props, running):
    assert proc_watch.unit_running(props) is running


def test_journal_tail_keeps_the_last_lines(tmp_path):
    calls = []
    journalctl = _program(tmp_path, "journalctl", "i=0; while [ $i -lt 50 ]; do echo line$i; i=$((i+1)); done")
    assert proc_watch.journal_tail("u", 40, journalctl, _local_runner(calls)) == ["line%d" % i for i in range(10, 50)]
    assert calls == [([journalctl, "-u", "u", "-n", "40", "--no-pager", "-o", "cat"], 15)]
    assert proc_watch.journal_tail("u", 3, journalctl, _local_runner([])) == ["line47", "line48", "line49"]
    assert len(proc_watch.journal_tail("u", journalctl=journalctl, run=_local_runner([]))) == 40   # 40 by default
    assert proc_watch.journal_tail("u", 3, journalctl) == []                     # no runner
    assert proc_watch.journal_tail("u", 3, str(tmp_path / "none"), _local_runner([])) == []
    for rc in (124, 127):
        struck = _program(tmp_path, "struck%d" % rc, "echo partial; exit %d" % rc)
        assert proc_watch.journal_tail("u", 3, struck, _local_runner([])) == []
    other = _program(tmp_path, "other", "echo kept; exit 1")
    assert proc_watch.journal_tail("u", 3, other, _local_runner([])) == ["kept"]


def _zombie(code):
    child = subprocess.Popen(["/bin/sh", "-c", "exit %d" % code])
    while proc_watch.proc_stat(child.pid)[0] != "Z":
        os.sched_yield()
    return child


def test_exit_status_of_child_reaps_only_what_ended():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert proc_watch.exit_status_of_child(sleeper.pid) is None             # still running
        sleeper.kill()
        while proc_watch.proc_stat(sleeper.pid)[0] != "Z":
            os.sched_yield()
        assert proc_watch.exit_status_of_child(sleeper.pid) == -9
    finally:
        sleeper.kill()
    assert proc_watch.exit_status_of_child(_zombie(3).pid) == 3
    assert proc_watch.exit_status_of_child(_zombie(0).pid) == 0
    assert proc_watch.exit_status_of_child(1) is None                            # not our child


def test_age_io_and_tree_usage_of_a_sleeping_child(tmp_path):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        # a child just forked still execs and loads: wait until its counters stop moving (asleep), so two reads agree
        for _attempt in range(200):
            before = (proc_watch.proc_stat(sleeper.pid), proc_watch.io_bytes(sleeper.pid))
            time.sleep(0.02)
            if (proc_watch.proc_stat(sleeper.pid), proc_watch.io_bytes(sleeper.pid)) == before:
                break
        assert proc_watch.age(sleeper.pid) >= 0.0
        assert proc_watch.age(os.getpid()) >= proc_watch.age(sleeper.pid)        # started before its child
        assert proc_watch.age(2 ** 22 + 1) is None                               # no such pid
        io = proc_watch.io_bytes(sleeper.pid)
        assert isinstance(io, int) and io >= 0
        assert proc_watch.io_bytes(2 ** 22 + 1) is None
        ticks = proc_watch.proc_stat(sleeper.pid)[2]
        usage = proc_watch.tree_usage(sleeper.pid, pids=[sleeper.pid, 2 ** 22 + 1])
        assert usage == {"cpu_s": round(ticks / float(proc_watch.CLK_TCK), 2), "io_bytes": io, "procs": 1}
        assert proc_watch.tree_usage(sleeper.pid)["procs"] == 1                  # found by its tree
    finally:
        sleeper.kill()
        sleeper.wait()
    before = proc_watch.io_bytes(os.getpid())
    with open(str(tmp_path / "f"), "wb") as f:
        f.write(b"\0" * (1 << 20))
    with open(str(tmp_path / "f"), "rb") as f:
        f.read()
    assert proc_watch.io_bytes(os.getpid()) - before >= 2 << 20                  # written and read: rchar + wchar


def _independent_stat(pid):
    with open("/proc/%d/stat" % pid, "rb") as f:
        raw = f.read()
    rest = raw[raw.rindex(b")") + 2:].split()
    return rest[0].decode(), int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[19]), int(rest[11]), int(rest[12])


def test_proc_stat_of_a_program_whose_name_holds_parentheses_and_bad_utf8(tmp_path):
    name = os.path.join(str(tmp_path).encode(), b"x) y (\xff")
    with open(sys.executable, "rb") as src, open(name, "wb") as dst:
        dst.write(src.read())
    os.chmod(name, 0o755)
    burner = subprocess.Popen([name, "-c", "import time\nx = 0\nfor i in range(3000000): x += i\ntime.sleep(30)"])
    try:
        while _independent_stat(burner.pid)[4] < 3:                              # some user time, before it sleeps
            os.sched_yield()
        while _independent_stat(burner.pid)[0] != "S":
            os.sched_yield()
        state, ppid, ticks, start, utime, stime = _independent_stat(burner.pid)
        assert proc_watch.proc_stat(burner.pid) == (state, ppid, ticks, start) == ("S", os.getpid(), utime + stime, start)
        assert utime != stime
        assert proc_watch.alive(burner.pid) and proc_watch.alive(burner.pid, start)
        assert not proc_watch.alive(burner.pid, start + 1)                       # the pid reused by another process
        assert burner.pid in proc_watch.tree(os.getpid()) and proc_watch.tree(burner.pid) == [burner.pid]
        assert burner.pid in proc_watch.children_map()[os.getpid()]
    finally:
        burner.kill()
        burner.wait()
    zombie = _zombie(0)
    try:
        assert proc_watch.proc_stat(zombie.pid)[0] == "Z" and not proc_watch.alive(zombie.pid)
    finally:
        zombie.wait()
    assert not proc_watch.alive(2 ** 22 + 1)


@pytest.mark.skipif(not ROOT, reason="setresuid needs root")
def test_uid_of_is_the_real_uid():
    child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setresuid(%d, 0, 0); print('set', flush=True); "
                              "time.sleep(30)" % NOBODY], stdout=subprocess.PIPE, universal_newlines=True)
    try:
        assert child.stdout.readline() == "set\n"   # its uids are set: no loop that only a broken uid_of never ends
        assert proc_watch.uid_of(child.pid) == NOBODY                            # real nobody, effective root
        assert proc_watch.uid_of(2 ** 22 + 1) is None
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


@pytest.mark.skipif(not ROOT, reason="seteuid needs root")
def test_socket_inodes_read_past_a_gone_pid_and_a_closed_descriptor_and_say_when_a_table_was_unreadable():
    low = os.open("/dev/null", os.O_RDONLY)
    sock = socket.socket()
    os.close(low)                                  # the lowest free descriptor: the one listdir of /proc/self/fd takes
    try:
        inode = str(os.fstat(sock.fileno()).st_ino)
        found, complete = proc_watch.socket_inodes([2 ** 22 + 1, os.getpid()])
        assert inode in found and complete is True                               # a pid gone is no doubt
        os.seteuid(NOBODY)
        try:
            found, complete = proc_watch.socket_inodes([1])                      # EACCES: a table not read
        finally:
            os.seteuid(0)
        assert (found, complete) == (set(), False)
    finally:
        sock.close()


def _proc_net(root, tcp=None, tcp6=None):
    os.makedirs(os.path.join(root, "net"))
    for name, text in (("tcp", tcp), ("tcp6", tcp6)):
        if text is not None:
            with open(os.path.join(root, "net", name), "wb") as f:
                f.write(b"  sl  local_address rem_address   st ...\n" + text)


def test_listening_sockets_read_each_table_and_lines_of_at_least_ten_fields(tmp_path):
    line10 = b"0: 00000000:1F90 00000000:0000 0A 0:0 0:0 0 1001 0 4242\n"            # 10 fields: read
    line9 = b"1: 00000000:1F90 00000000:0000 0A 0:0 0:0 0 1002 0\n"                 # 9: skipped
    junk = b"\xff\xfe not utf-8\n"
    six = str(tmp_path / "six")
    _proc_net(six, tcp6=junk + line10 + line9)
    assert net.listening_sockets(8080, proc_root=six) == {"4242": 1001}
    assert net.listening_sockets(8081, proc_root=six) == {}
    four = str(tmp_path / "four")
    _proc_net(four, tcp=line10)
    assert net.listening_sockets("8080", proc_root=four) == {"4242": 1001}
    none = str(tmp_path / "none")
    _proc_net(none)
    assert net.listening_sockets(8080, proc_root=none) is None


def test_update_merges_only_for_the_holder(tmp_path):
    path = str(tmp_path / "locks" / "x.lock")
    os.makedirs(os.path.dirname(path))
    assert lock.update(path, "t1", {"phase": "a"}) is None                       # no lock: nothing merged
    assert stat.S_IMODE(os.stat(path + ".guard").st_mode) == 0o600
    holder = {"token": "t1", "user": "u", "since": 1}
    assert lock.take(path, holder, 60)["message"] == "took the lock"
    assert lock.update(path, "t1", {"phase": "a"}) == dict(holder, phase="a")
    assert lock.read(path) == dict(holder, phase="a")
    assert lock.update(path, "t2", {"phase": "b"}) == dict(holder, phase="a")   # another's: the holder, unchanged
    assert lock.read(path) == dict(holder, phase="a")
    assert not os.path.exists("%s.%d" % (path, os.getpid()))                     # the temporary file renamed away


# ---- lock: what a taker is told, word for word (an operator reads who holds the lock and since when), on a clock
# the test sets: epoch 1000 is 1970-01-01 00:16:40 UTC

class _Clock(object):
    """lock's ``time`` with ``time()`` fixed; strftime and gmtime are the real ones."""

    def __init__(self, now):
        self.now = now
        self.strftime = time.strftime
        self.gmtime = time.gmtime

    def time(self):
        return self.now


def _holder(token, since):
    return {"controller": "ctl", "user": "ops", "pid": 4242, "since": since, "token": token}


@pytest.fixture
def clock(monkeypatch):
    fixed = _Clock(1000.0)
    monkeypatch.setattr(lock, "time", fixed)
    return fixed


def test_a_free_lock_is_taken_and_its_guard_is_the_only_other_file(tmp_path, clock):
    path = str(tmp_path / "x.lock")
    me = _holder("a", 990)
    old = os.umask(0)
    try:
        got = lock.take(path, me, 600)
    finally:
        os.umask(old)
    assert got == {"taken": True, "held_by": me, "took_over": None, "message": "took the lock"}
    assert sorted(os.listdir(str(tmp_path))) == ["x.lock", "x.lock.guard"]
    assert stat.S_IMODE(os.stat(path + ".guard").st_mode) == 0o600              # under umask 0: the mode asked for
    assert lock.read(path) == me
    assert lock.take(path, dict(me, pid=1), 600) == {"taken": True, "held_by": me, "took_over": None,
                                                     "message": "holds the lock already"}


def test_a_missing_directory_is_made_0755_or_only_named_in_check_mode(tmp_path, clock):
    path = str(tmp_path / "run" / "x.lock")
    me = _holder("a", 990)
    assert lock.take(path, me, 600, check=True) == {"taken": True, "held_by": me, "took_over": None,
                                                    "message": "would take the lock"}
    assert os.listdir(str(tmp_path)) == []
    old = os.umask(0)
    try:
        assert lock.take(path, me, 600)["message"] == "took the lock"
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(str(tmp_path / "run")).st_mode) == 0o755


@pytest.mark.parametrize("since, stale", [(400, False), (401, False), (399.5, True), (0, True)])
def test_a_lock_is_stale_only_past_stale_after(tmp_path, clock, since, stale):
    """age 600 against stale_after 600: held (at the bound), 599: held, 600.5: taken over."""
    path = str(tmp_path / "x.lock")
    lock.take(path, _holder("old", since), 600)
    me = _holder("new", 1000)
    got = lock.take(path, me, 600)
    shown = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(since))
    who = "ops@ctl (ansible-playbook pid 4242) since %s UTC (%d s ago)" % (shown, 1000 - since)
    if stale:
        assert got == {"taken": True, "held_by": me, "took_over": _holder("old", since),
                       "message": "took over a stale lock of %s: it is older than 600 s" % who}
        assert lock.read(path) == me
    else:
        assert got == {"taken": False, "held_by": _holder("old", since), "took_over": None, "message": "held by " + who}
        assert lock.read(path) == _holder("old", since)


def test_the_held_by_message_word_for_word(tmp_path, clock):
    path = str(tmp_path / "x.lock")
    lock.take(path, _holder("old", 700), 600)
    got = lock.take(path, _holder("new", 1000), 600)
    assert got["message"] == "held by ops@ctl (ansible-playbook pid 4242) since 1970-01-01 00:11:40 UTC (300 s ago)"


@pytest.mark.parametrize("stale_after, stale", [(999, True), (1000, False)])
def test_a_holder_without_since_is_as_old_as_the_epoch(tmp_path, clock, stale_after, stale):
    path = str(tmp_path / "x.lock")
    old = {"controller": "ctl", "user": "ops", "pid": 4242, "token": "old"}
    with open(path, "w") as f:
        json.dump(old, f)
    got = lock.take(path, _holder("new", 1000), stale_after)
    who = "ops@ctl (ansible-playbook pid 4242) since 1970-01-01 00:00:00 UTC (1000 s ago)"
    if stale:
        assert got["message"] == "took over a stale lock of %s: it is older than 999 s" % who
    else:
        assert got["message"] == "held by " + who and not got["taken"]


def test_a_dead_holder_is_judged_by_the_callable_on_the_holder_in_the_lock(tmp_path, clock):
    path = str(tmp_path / "x.lock")
    old = _holder("old", 990)
    lock.take(path, old, 600)
    asked = []

    def alive(current):
        asked.append(current)
        return False

    got = lock.take(path, _holder("new", 1000), 600, holder_dead=alive)
    assert got == {"taken": False, "held_by": old, "took_over": None,
                   "message": "held by ops@ctl (ansible-playbook pid 4242) since 1970-01-01 00:16:30 UTC (10 s ago)"}
    assert asked == [old]
    me = _holder("new", 1000)
    got = lock.take(path, me, 600, holder_dead=lambda current: current == old)
    assert got == {"taken": True, "held_by": me, "took_over": old,
                   "message": "took over a stale lock of ops@ctl (ansible-playbook pid 4242) since 1970-01-01 00:16:30 UTC"
                              " (10 s ago): its controller process is gone"}
    assert lock.read(path) == me


def test_release_lost_to_another_releaser_says_so(tmp_path, monkeypatch):
    path = str(tmp_path / "x.lock")
    lock.take(path, _holder("a", time.time()), 600)
    real_unlink = os.unlink

    def raced(target):
        real_unlink(target)                      # another releaser removes it between our read and our unlink
        real_unlink(target)

    monkeypatch.setattr(os, "unlink", raced)
    assert lock.release(path, "a") is False
    monkeypatch.setattr(os, "unlink", real_unlink)
    lock.take(path, _holder("a", time.time()), 600)
    assert lock.release(path, "a") is True and not os.path.exists(path)


# ---- access: the mode-bit judgement for another user, by owner and by group; a child slow to end is waited for

@pytest.mark.skipif(not ROOT, reason="seteuid needs root")
def test_mode_bits_as_another_user_read_the_owner_and_the_group_of_each_file(open_dir):
    daemon = pwd.getpwnam("daemon")
    mine = _file(open_dir, "mine", 0o600, (daemon.pw_uid, 0))                     # owner bits only
    ours = _file(open_dir, "ours", 0o040, (0, daemon.pw_gid))                     # group bits only
    theirs = _file(open_dir, "theirs", 0o600, (0, daemon.pw_gid))                 # neither owner nor other
    checks = [(mine, access.READ), (ours, access.READ), (theirs, access.READ)]
    os.seteuid(NOBODY)
    try:
        out, method = access.denied("daemon", checks)
    finally:
        os.seteuid(0)
    assert (out, method) == ([(theirs, access.READ, "mode 0o600")], "mode")


class _SlowToEnd(object):
    """access's ``os``: the real module, but a child that ends closes its end of the pipe first and only exits 0.3 s
    later, so the parent sees the end of its answer before the child has ended."""

    def __init__(self):
        self.write_end = None

    def __getattr__(self, attr):
        return getattr(os, attr)

    def pipe(self):
        rfd, self.write_end = os.pipe()
        return rfd, self.write_end

    def _exit(self, code):
        os.close(self.write_end)
        time.sleep(0.3)
        os._exit(code)                                                           # pylint: disable=protected-access


@pytest.mark.skipif(not ROOT, reason="the child drops from root")
def test_the_dropped_child_is_waited_for_even_when_it_ends_after_its_answer(open_dir, monkeypatch):
    monkeypatch.setattr(access, "os", _SlowToEnd())
    with pytest.raises(OSError, match=r"^the check as uid 1 failed in its child process$"):
        access._denied_as(1, 1, [-5], [(open_dir, access.LIST)])                  # pylint: disable=protected-access
    assert access._denied_as(1, 1, [1], [(open_dir, access.LIST)]) == []          # pylint: disable=protected-access


# ---- proc_watch: the readers of /proc on texts the test writes (a fake /proc under tmp_path, read by _read)

STAT_7 = "7 (a) b (c) S 1 7 7 0 -1 4194560 100 0 0 0 30 12 0 0 20 0 1 0 5000 1000 50 18446744073709551615"


@pytest.fixture
def fake_proc(tmp_path, monkeypatch):
    def write(rel, text):
        path = tmp_path / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    real_read = proc_watch._read                                                 # pylint: disable=protected-access
    monkeypatch.setattr(proc_watch, "_read", lambda path: real_read(str(tmp_path) + path))
    monkeypatch.setattr(proc_watch, "CLK_TCK", 100)
    return write


def test_proc_stat_sums_user_and_system_ticks_and_age_counts_from_uptime(fake_proc):
    fake_proc("/proc/7/stat", STAT_7)
    fake_proc("/proc/uptime", "350.50 1200.00\n")
    assert proc_watch.proc_stat(7) == ("S", 1, 42, 5000)
    assert proc_watch.age(7) == 300.5                                           # 350.5 s up, started at tick 5000
    fake_proc("/proc/uptime", "49.00 1200.00\n")
    assert proc_watch.age(7) == 0.0                                             # started "after" boot's uptime: 0


def test_io_bytes_add_rchar_and_wchar_only(fake_proc):
    fake_proc("/proc/7/io", "rchar: 100\nwchar: 23\nsyscr: 5\nsyscw: 6\nread_bytes: 4096\n")
    assert proc_watch.io_bytes(7) == 123
    fake_proc("/proc/8/io", "syscr: 5\n")
    assert proc_watch.io_bytes(8) == 0


def test_tree_usage_adds_every_live_member_past_a_gone_one(fake_proc):
    fake_proc("/proc/7/stat", STAT_7)
    fake_proc("/proc/7/io", "rchar: 100\nwchar: 23\n")
    fake_proc("/proc/8/stat", STAT_7.replace(" 30 12 ", " 3 4 ").replace("7 (a", "8 (a", 1))
    fake_proc("/proc/8/io", "rchar: 1000\nwchar: 0\n")
    fake_proc("/proc/9/stat", STAT_7.replace("7 (a", "9 (a", 1))                 # /proc/9/io unreadable: no bytes
    assert proc_watch.tree_usage(7, pids=[99, 7, 8, 9]) == {"cpu_s": 0.91, "io_bytes": 1123, "procs": 3}
    assert proc_watch.tree_usage(7, pids=[7]) == {"cpu_s": 0.42, "io_bytes": 123, "procs": 1}
    assert proc_watch.tree_usage(7, pids=[9]) == {"cpu_s": 0.42, "io_bytes": 0, "procs": 1}
    assert proc_watch.tree_usage(7, pids=[99]) == {"cpu_s": 0.0, "io_bytes": 0, "procs": 0}


def test_unit_show_and_journal_tail_ask_the_programs_on_path_by_default(tmp_path, monkeypatch):
    calls = []

    def runner(argv, data=None, environ_update=None, timeout=None):
        calls.append(argv[0])
        return 0, "ActiveState=active\n", ""

    _program(tmp_path, "journalctl", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert proc_watch.unit_show("u", run=runner) == {"ActiveState": "active"}
    assert proc_watch.journal_tail("u", run=runner) == ["ActiveState=active"]
    assert calls == ["systemctl", "journalctl"]
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    assert proc_watch.journal_tail("u", run=runner) == [] and calls == ["systemctl", "journalctl"]
