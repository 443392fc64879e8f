# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/pidfile: a pid file is believed only with the identity recorded when the collection started the process.

Real processes (a bystander ``sleep`` the test starts, PID 1, a pid after its process ended) and real files (a link, a
FIFO, garbage); the verdict is pure (``judge``) and tested on its own for what a host cannot be made to show (a
reused pid: the same pid with another start time, another boot, another executable)."""
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile


@pytest.fixture
def bystander():
    """A process the collection did not start: its own session, so its group is its pid."""
    p = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield p
    p.kill()
    p.wait()


def write(path, text):
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def test_pid_1_is_refused_whatever_the_record(tmp_path):
    path = write(tmp_path / "server.pid", "1\n")
    v = pidfile.verdict(path, pidfile.identity_of(1))  # even a record that matches init
    assert v["state"] == "refused" and "names pid 1, never a server's (1 is init" in v["msg"] and path in v["msg"]
    assert v["msg"].endswith("nothing signalled; remove the stale pid file %s (and stop that process yourself if "
                             "it is a server the collection lost)" % path)
    assert v["pid"] is None and v["group"] is False
    assert pidfile.verdict(write(tmp_path / "zero.pid", "0"), None)["state"] == "refused"
    # the good value next to it: pid 2 is a pid (whatever runs there, it is not ours without a record)
    assert pidfile.read(write(tmp_path / "two.pid", "2\n")) == (2, None)


def test_a_bystander_without_a_record_is_not_ours_and_says_how_to_fix_it(tmp_path, bystander):
    path = write(tmp_path / "server.pid", "%d\n" % bystander.pid)
    v = pidfile.verdict(path, None)
    assert v["state"] == "foreign" and v["pid"] == bystander.pid and not v["group"]
    assert ("pid file %s names pid %d, which is not the process started by the collection (no record of it): "
            "nothing signalled; remove the stale pid file %s" % (path, bystander.pid, path)) in v["msg"]
    assert pidfile.verdict(path, {"pid": bystander.pid + 1})["state"] == "foreign"
    assert "the record names pid %d" % (bystander.pid + 1) in pidfile.verdict(path, {"pid": bystander.pid + 1})["msg"]


def test_the_recorded_process_is_ours_and_its_own_group_may_be_signalled(tmp_path, bystander):
    path = write(tmp_path / "server.pid", "%d" % bystander.pid)
    record = pidfile.identity_of(bystander.pid, pidfile.binary("/bin/sleep") or pidfile.binary("/usr/bin/sleep"))
    v = pidfile.verdict(path, record)
    assert v == {"state": "ours", "pid": bystander.pid, "group": True, "msg": None}
    assert bystander.poll() is None  # a verdict signals nothing


def test_a_reused_pid_is_the_same_pid_with_another_start_time(tmp_path, bystander):
    path = write(tmp_path / "server.pid", "%d\n" % bystander.pid)
    record = pidfile.identity_of(bystander.pid)
    for key, delta in (("starttime", 1), ("starttime", -1), ("btime", 1)):
        v = pidfile.verdict(path, dict(record, **{key: record[key] + delta}))
        assert v["state"] == "foreign" and "start time differs" in v["msg"] and not v["group"]
    assert pidfile.verdict(path, record)["state"] == "ours"


def test_a_stale_pid_after_the_process_ended_is_gone(tmp_path):
    p = subprocess.Popen(["sleep", "600"], start_new_session=True)
    record = pidfile.identity_of(p.pid)
    p.kill()
    p.wait()
    path = write(tmp_path / "server.pid", "%d\n" % p.pid)
    v = pidfile.verdict(path, record)
    assert v["state"] == "gone" and v["pid"] == p.pid and not v["group"] and "has ended" in v["msg"]


def test_a_link_as_pid_file_is_refused_even_to_a_good_one(tmp_path, bystander):
    real = write(tmp_path / "real.pid", "%d\n" % bystander.pid)
    record = pidfile.identity_of(bystander.pid)
    assert pidfile.verdict(real, record)["state"] == "ours"
    link = tmp_path / "server.pid"
    link.symlink_to(real)
    v = pidfile.verdict(str(link), record)
    assert v["state"] == "refused" and "is a symbolic link" in v["msg"] and "remove the stale pid file" in v["msg"]
    dangling = tmp_path / "dangling.pid"
    dangling.symlink_to(tmp_path / "nowhere")
    assert pidfile.read(str(dangling))[1] and "symbolic link" in pidfile.read(str(dangling))[1]


@pytest.mark.parametrize("content, why", [
    ("nope", "does not hold a pid ('nope')"),
    ("-5\n", "does not hold a pid ('-5\\x0a')"),
    ("12 34\n", "does not hold a pid"),
    ("42\n\n", "does not hold a pid"),
    ("42\nrm -rf /", "does not hold a pid"),
    ("", "does not hold a pid ('')"),
    (" 42", "does not hold a pid"),
    ("0x2a", "does not hold a pid"),
    ("99999999", "beyond the kernel's pid range (4194304)"),
    ("123456789", "does not hold a pid"),
    ("4" * 65, "holds more than 64 bytes"),
    (b"4\x00", "does not hold a pid ('4\\x00')"),
])
def test_garbage_huge_and_negative_are_refused_by_name(tmp_path, content, why):
    path = write(tmp_path / "server.pid", content)
    pid, problem = pidfile.read(path)
    assert pid is None and path in problem and why in problem
    assert pidfile.verdict(path, {"pid": 42})["state"] == "refused"


def test_the_largest_pid_is_read_and_one_more_is_refused(tmp_path):
    assert pidfile.read(write(tmp_path / "a", "%d\n" % pidfile.PID_MAX)) == (pidfile.PID_MAX, None)
    assert pidfile.read(write(tmp_path / "b", "%d\n" % (pidfile.PID_MAX + 1)))[0] is None


def test_a_fifo_a_directory_and_a_missing_file(tmp_path):
    fifo = tmp_path / "fifo.pid"
    os.mkfifo(str(fifo))
    assert "not a regular file" in pidfile.read(str(fifo))[1]  # answered at once, nobody writes to it
    assert "not a regular file" in pidfile.read(str(tmp_path))[1]
    assert pidfile.read(str(tmp_path / "missing.pid")) == (None, None)
    assert pidfile.verdict(str(tmp_path / "missing.pid"), None)["state"] == "none"


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=80))
def test_any_content_is_a_pid_in_range_or_a_refusal_never_an_exception(tmp_path, raw):
    path = write(tmp_path / "h.pid", raw)
    pid, problem = pidfile.read(path)
    assert (pid is None) != (problem is None)
    if pid is not None:
        assert 2 <= pid <= pidfile.PID_MAX and raw.rstrip(b"\n").isdigit() and raw.count(b"\n") <= 1
    else:
        assert path in problem and "\n" not in problem


SEEN = {"state": "S", "ppid": 1, "pgid": 4242, "starttime": 1000, "btime": 17000, "exe": "/usr/bin/python3.12",
        "start": 17010.0}
RECORD = {"pid": 4242, "starttime": 1000, "btime": 17000, "exe": "/usr/bin/python3.12"}
_UNSET = object()  # judge's default (SEEN, RECORD): None is a value of its own there (nothing seen, no record)


def judge(seen=_UNSET, record=_UNSET, pid=4242, problem=None, caller_pgid=77):
    seen = SEEN if seen is _UNSET else seen
    record = RECORD if record is _UNSET else record
    return pidfile.judge("/run/x/server.pid", pid, problem, record, seen, caller_pgid)


def test_judge_ours_and_its_group_only_when_the_group_is_the_recorded_pid_and_not_the_callers():
    assert judge() == {"state": "ours", "pid": 4242, "group": True, "msg": None}
    assert judge(seen=dict(SEEN, pgid=77)) == dict(judge(), group=False)  # another group (the caller's, here)
    assert judge(seen=dict(SEEN, pgid=4000))["group"] is False
    assert judge(caller_pgid=4242)["group"] is False  # the caller's own group


def test_judge_executable_differs_but_an_upgraded_binary_is_the_same_and_an_unreadable_one_not_compared():
    v = judge(seen=dict(SEEN, exe="/usr/bin/sleep"))
    assert v["state"] == "foreign" and "executable differs: /usr/bin/sleep, not /usr/bin/python3.12" in v["msg"]
    assert judge(seen=dict(SEEN, exe="/usr/bin/python3.12 (deleted)"))["state"] == "ours"
    assert judge(seen=dict(SEEN, exe=None))["state"] == "ours"
    assert judge(record=dict(RECORD, exe=None), seen=dict(SEEN, exe="/bin/sh"))["state"] == "ours"


def test_judge_zombie_and_missing_are_gone_and_a_problem_wins():
    assert judge(seen=dict(SEEN, state="Z"))["state"] == "gone"
    assert judge(seen=None)["state"] == "gone"
    assert judge(pid=None, problem="pid file x is a symbolic link")["state"] == "refused"
    assert judge(pid=None, record=None, seen=None) == {"state": "none", "pid": None, "group": False, "msg": None}
    assert judge(record="garbage")["state"] == "foreign" and judge(record={})["state"] == "foreign"


def test_judge_a_record_of_an_earlier_release_by_its_spawn_epoch():
    """Before #42 the supervisor recorded only ``started`` (the epoch it spawned the server at)."""
    legacy = {"pid": 4242, "started": 17010.0 - pidfile.LEGACY_SLACK_S}
    assert judge(record=legacy)["state"] == "ours"
    assert judge(record=dict(legacy, started=17010.0 + pidfile.LEGACY_SLACK_S))["state"] == "ours"
    late = judge(record=dict(legacy, started=17010.0 + pidfile.LEGACY_SLACK_S + 0.5))
    assert late["state"] == "foreign" and "(start time differs)" in late["msg"]
    for started in (None, "17010", [17010]):
        assert "no start time recorded" in judge(record=dict(legacy, started=started))["msg"]
    assert "no start time recorded" in judge(record=legacy, seen=dict(SEEN, start=None))["msg"]


def test_observe_start_is_boot_time_plus_ticks(bystander):
    seen = pidfile.observe(bystander.pid)
    assert seen["start"] == seen["btime"] + seen["starttime"] / float(os.sysconf("SC_CLK_TCK"))
    assert seen["pgid"] == bystander.pid and seen["ppid"] == os.getpid() and seen["state"] in ("S", "R")


# -- the exact words, and the readers on a /proc the test writes -----------------------------------------------------
def fix(path):
    return ("nothing signalled; remove the stale pid file %s (and stop that process yourself if it is a server the "
            "collection lost)" % path)


def test_every_refusal_says_the_file_what_is_wrong_and_the_fix_in_these_words(tmp_path, bystander):
    p = str(tmp_path / "p")
    cases = [("1", "pid file %s names pid 1, never a server's (1 is init, 0 the caller's group): %s"),
             ("abc", "pid file %s does not hold a pid ('abc'): %s"),
             ("9999999", "pid file %s names pid 9999999, beyond the kernel's pid range (4194304): %s"),
             ("9" * 65, "pid file %s holds more than 64 bytes, not a pid: %s")]
    for content, words in cases:
        write(tmp_path / "p", content)
        assert pidfile.read(p) == (None, words % (p, fix(p)))
    write(tmp_path / "p", "%d\n" % bystander.pid)
    assert pidfile.verdict(p, None)["msg"] == ("pid file %s names pid %d, which is not the process started by the "
                                               "collection (no record of it): %s" % (p, bystander.pid, fix(p)))
    record = pidfile.identity_of(bystander.pid)
    assert pidfile.verdict(p, dict(record, pid=7))["msg"] == (
        "pid file %s names pid %d, which is not the process started by the collection (the record names pid 7): %s"
        % (p, bystander.pid, fix(p)))
    gone = pidfile.judge(p, 5, None, None, None, 0)
    assert gone["msg"] == "pid file %s names pid 5, which has ended: a stale file" % p
    link = tmp_path / "l"
    link.symlink_to(p)
    assert pidfile.read(str(link))[1] == ("pid file %s is a symbolic link (a pid file is a plain file the collection "
                                          "writes): %s" % (link, fix(link)))
    assert pidfile.read(str(tmp_path))[1] == "pid file %s is not a regular file: %s" % (tmp_path, fix(tmp_path))
    under_a_file = p + "/x"  # ENOTDIR: neither missing nor a link
    assert pidfile.read(under_a_file) == (None, "pid file %s cannot be read (Not a directory): %s"
                                          % (under_a_file, fix(under_a_file)))


def test_the_cap_is_64_bytes_and_the_message_shows_40_of_them(tmp_path):
    p = write(tmp_path / "p", "x" * 64)  # at the cap: read, and refused as not a pid
    assert pidfile.read(p)[1].startswith("pid file %s does not hold a pid ('%s'): " % (p, "x" * 40))
    p = write(tmp_path / "p", b"\xe9\x7f~ \x1f")
    assert "('\\xe9\\x7f~ \\x1f')" in pidfile.read(p)[1]


def test_only_reason_differs_one_at_a_time():
    """The executable is compared only when the start time matched (one reason, never two)."""
    v = judge(seen=dict(SEEN, starttime=999, exe="/bin/sh"))
    assert "(start time differs)" in v["msg"]
    assert "(executable differs: /bin/sh, not /usr/bin/python3.12)" in judge(seen=dict(SEEN, exe="/bin/sh"))["msg"]
    assert "(no start time recorded)" in judge(record={"pid": 4242})["msg"]
    assert judge(seen=dict(SEEN, state="X"))["state"] == "gone"


def fake_proc(root, pid, stat, exe=None, btime="btime 17000\n"):
    d = root / str(pid)
    d.mkdir(parents=True)
    (d / "stat").write_bytes(stat)
    if exe:
        (d / "exe").symlink_to(exe)
    if btime is not None:
        (root / "stat").write_text("cpu  1 2 3\n" + btime + "processes 9\n")
    return str(root)


def fields(n, state=b"S", ppid=b"1", pgid=b"42", start=b"1000"):
    rest = [state, ppid, pgid] + [b"0"] * (n - 3)
    if n > 19:
        rest[19] = start
    return b" ".join(rest) + b"\n"


def test_observe_reads_a_hostile_comm_and_needs_twenty_fields(tmp_path):
    proc = fake_proc(tmp_path / "proc", 42, b"42 (x) Z 1 \xff) " + fields(20), exe="/usr/bin/python3.12")
    seen = pidfile.observe(42, proc)
    tck = float(os.sysconf("SC_CLK_TCK"))
    assert seen == {"state": "S", "ppid": 1, "pgid": 42, "starttime": 1000, "btime": 17000,
                    "exe": "/usr/bin/python3.12", "start": 17000 + 1000 / tck}
    assert pidfile.boot_time(proc) == 17000
    assert pidfile.identity_of(42, "/e", proc) == {"pid": 42, "starttime": 1000, "btime": 17000, "exe": "/e"}
    short = fake_proc(tmp_path / "short", 43, b"43 (y) " + fields(19))
    assert pidfile.observe(43, short) is None and pidfile.identity_of(43, None, short) is None
    nobtime = fake_proc(tmp_path / "nob", 44, b"44 (z) " + fields(20), btime=None)
    seen = pidfile.observe(44, nobtime)
    assert seen["exe"] is None and seen["btime"] is None and seen["start"] is None
    p = write(tmp_path / "p", "42\n")
    assert pidfile.verdict(p, {"pid": 42, "starttime": 1000, "btime": 17000}, proc) == {
        "state": "ours", "pid": 42, "group": True, "msg": None}


def test_the_real_boot_time_and_a_real_process_with_a_hostile_name(tmp_path):
    with open("/proc/stat") as f:
        btime = int([line.split()[1] for line in f if line.startswith("btime ")][0])
    assert pidfile.boot_time() == btime
    # a comm that looks like a state, with a byte that is not UTF-8
    sleep = os.path.realpath(subprocess.check_output(["sh", "-c", "command -v sleep"], universal_newlines=True).strip())
    os.symlink(sleep, os.fsencode(str(tmp_path)) + b"/s) Z 1 \xff")
    p = subprocess.Popen([os.fsencode(str(tmp_path)) + b"/s) Z 1 \xff", b"600"], start_new_session=True)
    try:
        seen = pidfile.observe(p.pid)
        assert seen["state"] in ("S", "R") and seen["pgid"] == p.pid and seen["ppid"] == os.getpid()
        assert seen["exe"] == sleep
    finally:
        p.kill()
        p.wait()


def test_binary_is_the_resolved_elf_and_none_for_a_script_or_nothing(tmp_path):
    python = os.path.realpath(sys.executable)
    link = tmp_path / "py"
    link.symlink_to(python)
    assert pidfile.binary(str(link)) == python and pidfile.binary(python) == python
    script = write(tmp_path / "s", "#!/bin/sh\nexit 0\n")
    assert pidfile.binary(script) is None
    assert pidfile.binary(write(tmp_path / "e", b"\x7fELF")) == str(tmp_path / "e")  # the magic alone decides
    assert pidfile.binary(write(tmp_path / "f", b"\x7fEL")) is None
    assert pidfile.binary(str(tmp_path / "missing")) is None


def test_the_callers_own_group_is_never_signalled(tmp_path):
    """The process group this test runs in: its leader is recorded and ours, its group is not to be signalled."""
    leader = os.getpgrp()
    if pidfile.observe(leader) is None:
        pytest.skip("this test's process group leader has exited")
    p = write(tmp_path / "p", "%d\n" % leader)
    v = pidfile.verdict(p, pidfile.identity_of(leader))
    assert v == {"state": "ours", "pid": leader, "group": False, "msg": None}


def test_a_caller_that_leads_its_own_group_never_signals_it(tmp_path):
    """verdict() asks the caller's process group itself: a process that leads its own session (as the supervisor and
    a stop run from a fresh session do) judges its own pid file - ours, but its group is not to be signalled - while
    the same record judged from another group may signal it."""
    code = ("import json, os, sys\n"
            "from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile\n"
            "p = sys.argv[1]\n"
            "open(p, 'w').write('%d\\n' % os.getpid())\n"
            "print(json.dumps(pidfile.verdict(p, pidfile.identity_of(os.getpid()))))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "server.pid")], env=env, start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=True, timeout=60)
    v = json.loads(out.stdout)
    assert v["state"] == "ours" and v["group"] is False, v
    # the other side (a group leader that is not the caller may have its group signalled): the bystander test above;
    # once that process ended, its pid file is no longer ours (asked here too, so a mutation run knows this test
    # reaches verdict())
    assert pidfile.verdict(str(tmp_path / "server.pid"), {"pid": v["pid"]})["state"] != "ours"
