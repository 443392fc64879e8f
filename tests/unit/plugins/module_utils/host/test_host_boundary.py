# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 42 item 4, the host boundary: hostile paths refused by name, nothing outside the tree changed, and the good
path accepted beside each - the one path rule, the dir-fd writer, the log reader, the report writer, owned_dir."""
import json
import os
import stat
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, strategies as st

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.host import boundary, owned_dirs, untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.read_log import LogSource
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import BadInput
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import log as sglang_log
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _bench_report as bench_report
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_view as server_view


# ---- one Refused, one printable, one walker

def test_the_three_rooms_share_one_refusal_and_one_printable():
    assert untrusted.Refused is contain.Refused is owned_dirs.Refused is boundary.Refused
    assert contain.printable is owned_dirs.printable is boundary.printable
    assert untrusted.printable("a\n" * 100) == boundary.printable("a\n" * 100, 120)  # untrusted's: cut at 120


def test_refused_takes_a_whole_message_or_its_parts():
    e = boundary.Refused("x is bad; fix it")
    assert (str(e), e.name, e.what) == ("x is bad; fix it", None, "x is bad; fix it")
    e = boundary.Refused("f.json", "not JSON", "fetch it again", field="a.b")
    assert (str(e), e.name, e.field, e.fix) == ("f.json a.b: not JSON: fetch it again", "f.json", "a.b",
                                                "fetch it again")


def test_the_walker_stops_at_a_link_and_names_the_parts_up_to_it(tmp_path):
    (tmp_path / "a").mkdir()
    os.symlink("/etc", str(tmp_path / "a" / "b"))
    root = os.open(str(tmp_path), os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError) as err:
            boundary.walk(root, ["a", "b", "c"])
        assert err.value.walked == "a/b"
        fd = boundary.walk(root, ["a", "new", "deep"], create=True)  # the good path beside it: made, no link
        os.close(fd)
    finally:
        os.close(root)
    assert (tmp_path / "a" / "new" / "deep").is_dir() and not os.path.exists("/etc/c")


# ---- the one path rule

LIVE = ["/sys/fs/cgroup/x", "/proc/self/x", "/dev/shm/x", "/run/x", "/var/run/x", "/run/user/0/sglang"]
GOOD = ["/var/lib/sglang", "/srv/bench/run1", "/etc/prometheus/rules.d", "/run/llmserve-sglang/kimi",
        "/opt/sglang/home"]


@pytest.mark.parametrize("path", LIVE)
def test_a_path_inside_a_live_tree_is_refused_by_name(path):
    problem = owned_dirs.system_problem(path, "server_log_dir")
    assert problem.startswith("server_log_dir %s " % path) and "a tree of the kernel or of the running system" in problem
    assert problem.endswith("; give a directory on a disk, e.g. /var/lib/sglang")


@pytest.mark.parametrize("path", GOOD)
def test_the_good_path_beside_it_is_accepted(path):
    assert owned_dirs.system_problem(path, "server_log_dir") is None


def test_the_collections_own_run_tree_is_the_one_below_run_and_its_defaults_pass():
    assert layout.RUN_ROOT == owned_dirs.RUN_ROOT
    paths = server_view.build({})["paths"]
    for key in ("run_dir", "pid_file", "lock", "instance_dir", "log", "helper_dir"):
        assert owned_dirs.refusal(paths[key]) is None, key
    assert owned_dirs.refusal("/run/llmserve-sglang-other/x")  # a neighbour of the name is not it
    assert owned_dirs.refusal("/var/run/llmserve-sglang/kimi") is None


@pytest.mark.parametrize("role, names", [
    ("monitoring", ["monitoring_config_dir", "monitoring_rules_dir", "monitoring_file_sd_dir"]),
    ("router", ["router_config_dir"]), ("server", ["server_home", "server_config_dir", "server_log_dir"])])
def test_every_roles_default_folder_passes_the_path_rule(role, names):
    with open(os.path.join(testpaths.REPO, "roles", role, "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    for name in names:
        assert defaults[name].startswith("/") and owned_dirs.system_problem(defaults[name], name) is None, name


@given(st.sampled_from(["/proc", "/sys", "/dev", "/run"]), st.lists(st.text("abc.-_", min_size=1).filter(lambda p: p not in (".", "..")), max_size=4))
def test_anything_below_a_live_tree_is_refused(tree, parts):
    path = owned_dirs.normalise("/".join([tree] + parts))
    assert owned_dirs.refusal(path) is not None


@pytest.mark.parametrize("path", ["/sys/fs/cgroup/x", "/proc/self/x", "/dev/shm/x", "/run/x"])
def test_decide_refuses_a_live_path_and_makes_nothing(path):
    before = os.path.lexists(path)
    e = pytest.raises(owned_dirs.Refused, owned_dirs.ensure_all, [{"path": path, "uid": 0, "gid": 0, "mode": 0o755}])
    assert path in str(e.value) and "tree of the kernel" in str(e.value)
    assert os.path.lexists(path) == before


def test_a_model_dest_inside_a_live_tree_is_refused():
    assert contain.check_dest("/dev/shm/models/kimi") == [
        "dest /dev/shm/models/kimi is inside a system tree; weights do not belong there"]
    assert contain.check_dest("/data/models/kimi") == []


# ---- owned_dir's follow: false (roles/monitoring's and roles/router's folders)

def test_a_linked_folder_is_refused_naming_both_and_its_target_is_untouched(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.chmod(str(target), 0o700)
    link = tmp_path / "rules.d"
    os.symlink(str(target), str(link))
    spec = {"path": str(link), "uid": 0, "gid": -1, "mode": 0o755, "follow": False}
    e = pytest.raises(owned_dirs.Refused, owned_dirs.ensure_all, [spec]).value
    assert str(e) == ("directory %s is reached through a symbolic link: what the role writes into it would land in "
                      "%s; give the real directory, or remove the link" % (link, target))
    assert stat.S_IMODE(os.stat(str(target)).st_mode) == 0o700 and os.listdir(str(target)) == []
    good = dict(spec, path=str(tmp_path / "real"))
    assert owned_dirs.ensure_all([good]) == ["created %s" % good["path"]]


def _owned_dir(args, check=False):
    env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
    proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", "owned_dir.py")],
                          input=json.dumps({"ANSIBLE_MODULE_ARGS": dict(args, _ansible_check_mode=check)}),
                          capture_output=True, text=True, env=env, check=False)
    return json.loads(proc.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="the module chowns: root")
@pytest.mark.parametrize("path", ["/sys/fs/cgroup/llmserve-test", "/proc/self/llmserve-test", "/dev/shm/llmserve-test",
                                  "/run/llmserve-test"])
def test_owned_dir_module_refuses_a_live_path_and_makes_nothing(path, tmp_path):
    res = _owned_dir({"path": path, "group": "", "follow": False})
    assert res["failed"] and res["msg"].startswith("directory %s " % path) and not os.path.lexists(path)
    assert " is inside /%s, a tree of the kernel" % path.split("/")[1] in res["msg"]
    good = _owned_dir({"path": str(tmp_path / "prometheus" / "rules.d"), "group": "", "follow": False})
    assert good["changed"] and os.path.isdir(str(tmp_path / "prometheus" / "rules.d"))


@pytest.mark.skipif(os.geteuid() != 0, reason="the module chowns: root")
def test_owned_dir_module_refuses_a_linked_rules_dir_and_keeps_an_existing_group(tmp_path):
    target = tmp_path / "cron.d"
    target.mkdir()
    os.chown(str(target), 0, 0)
    link = tmp_path / "rules.d"
    os.symlink(str(target), str(link))
    res = _owned_dir({"path": str(link), "group": "", "follow": False, "mode": "0755"})
    assert res["failed"] and "%s is reached through a symbolic link" % link in res["msg"]
    assert os.listdir(str(target)) == []  # no marker, nothing written through it
    theirs = tmp_path / "existing"
    theirs.mkdir()
    os.chmod(str(theirs), 0o755)
    os.chown(str(theirs), 0, 65534)
    assert not _owned_dir({"path": str(theirs), "group": "", "follow": False, "mode": "0755"})["changed"]
    assert os.stat(str(theirs)).st_gid == 65534


def test_the_check_mode_accepts_the_collections_run_tree():
    spec = {"path": "/run/llmserve-sglang/boundary-test", "uid": 0, "gid": 0, "mode": 0o755}
    if os.path.lexists("/run/llmserve-sglang/boundary-test"):
        pytest.skip("left over")
    assert owned_dirs.ensure_all([spec], check=True) == ["created /run/llmserve-sglang/boundary-test"]


# ---- writing without following a link

def test_write_file_refuses_a_planted_link_and_a_fifo_by_name(tmp_path):
    secret = tmp_path / "outside"
    secret.write_text("keep")
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(str(secret), str(run / "report.md"))
    os.mkfifo(str(run / "pipe"))
    fd = boundary.open_dir(str(run), follow=False)
    try:
        for name, kind in (("report.md", "a symbolic link"), ("pipe", "a FIFO (named pipe)")):
            e = pytest.raises(boundary.Refused, boundary.write_file, fd, name, b"x").value
            assert str(e) == ("%s: is %s, not a regular file: refused, nothing written through it: remove it (the "
                              "file is written again in its place)" % (name, kind))
        boundary.write_file(fd, "summary.json", b"{}\n")  # the good name beside them
        boundary.write_file(fd, "summary.json", b"[]\n")  # and again: replaced whole
    finally:
        os.close(fd)
    assert secret.read_text() == "keep" and (run / "summary.json").read_text() == "[]\n"
    assert sorted(os.listdir(str(run))) == ["pipe", "report.md", "summary.json"]  # no temporary file left


RAW = {"meta": {"max_new_tokens": 64}, "results": [
    {"mode": m, "concurrency": c, "repeat": 0, "median_per_request_tps": 100.0 / c * (2 if m == "eagle3" and c < 8
                                                                                      else 1),
     "output_throughput": 100.0, "completed": 8, "failed": 0} for m in ("baseline", "eagle3") for c in (1, 8, 64)]}


def test_bench_report_refuses_a_linked_run_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "raw.json").write_text(json.dumps(RAW))
    os.symlink(str(outside), str(tmp_path / "run"))
    for call in (lambda: bench_report.build(tmp_path / "run", with_plots=False),
                 lambda: bench_report.write_raw(tmp_path / "run", RAW)):
        e = pytest.raises(bench_report.Refused, call).value
        assert str(e) == ("run_dir %s is a symbolic link (to %s): nothing is written or read through it; give the "
                          "real folder" % (tmp_path / "run", outside))
    assert os.listdir(str(outside)) == ["raw.json"]
    good = tmp_path / "good"
    bench_report.write_raw(good, RAW)
    assert bench_report.build(good, with_plots=False)["report"] == "report.md" and (good / "report.md").is_file()


def test_bench_report_refuses_a_planted_report_link_and_writes_nothing_through_it(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:x:0:\n")
    run = tmp_path / "run"
    bench_report.write_raw(run, RAW)
    os.symlink(str(secret), str(run / "report.md"))
    e = pytest.raises(bench_report.Refused, bench_report.build, run, False).value
    assert str(e).startswith("%s: is a symbolic link, not a regular file: refused" % (run / "report.md"))
    assert secret.read_text() == "root:x:0:\n"


@pytest.mark.parametrize("raw_kind", ["fifo", "link"])
def test_bench_report_never_reads_a_fifo_or_a_link_as_raw_json(tmp_path, raw_kind):
    run = tmp_path / "run"
    run.mkdir()
    if raw_kind == "fifo":
        os.mkfifo(str(run / "raw.json"))  # would block a plain open() for ever
    else:
        os.symlink("/etc/shadow", str(run / "raw.json"))
    e = pytest.raises(bench_report.Refused, bench_report.build, run, False).value
    assert str(e).startswith("%s: is %s, not a regular file" % (
        run / "raw.json", "a FIFO (named pipe)" if raw_kind == "fifo" else "a symbolic link"))
    assert sorted(os.listdir(str(run))) == ["raw.json"]


@pytest.mark.parametrize("path", ["/sys/fs/cgroup/bench", "/proc/self/bench", "/dev/shm/bench", "/run/bench"])
def test_bench_report_refuses_a_run_folder_in_a_live_tree(path):
    e = pytest.raises(bench_report.Refused, bench_report.write_raw, path, RAW).value
    assert str(e).startswith("run_dir %s is inside " % path) and not os.path.lexists(path)


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_an_earlier_runs_analysis_is_read_as_a_regular_file_only(tmp_path, kind):
    run = tmp_path / "run"
    bench_report.write_raw(run, RAW)
    written = bench_report.build(run, with_plots=False)
    assert bench_report.read_report(run) == json.loads(json.dumps(written))  # the good file beside the bad one
    os.unlink(str(run / "analysis.json"))
    if kind == "fifo":
        os.mkfifo(str(run / "analysis.json"))  # a lookup('file') would block on it for ever
    else:
        os.symlink("/etc/shadow", str(run / "analysis.json"))
    e = pytest.raises(bench_report.Refused, bench_report.read_report, run).value
    assert str(e).startswith("%s: is %s, not a regular file" % (
        run / "analysis.json", "a FIFO (named pipe)" if kind == "fifo" else "a symbolic link"))


# ---- log tails: a regular file only

def _log_source(path):
    return LogSource({"log_path": str(path), "tail_lines": 5, "extra_patterns": None})


def test_a_log_linked_to_shadow_is_refused_by_name_and_never_shown(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000::::::\n")
    log = tmp_path / "server.log"
    os.symlink(str(secret), str(log))
    src = _log_source(log)
    e = pytest.raises(BadInput, src.check_readable).value
    assert str(e).startswith("log %s: is a symbolic link, not a regular file" % log)
    src.feed(0)
    assert src.report() == {"log_tail": [], "log_bytes_read": 0}
    assert sglang_log.read_tail(str(log), 4096) is None
    good = tmp_path / "good.log"
    good.write_text("Load weight begin\nThe server is fired up and ready to roll!\n")
    src = _log_source(good)
    src.check_readable()
    src.feed(0)
    assert src.report()["log_tail"][-1] == "The server is fired up and ready to roll!"
    assert sglang_log.read_tail(str(good), 9) == "to roll!\n"


def test_a_fifo_as_the_log_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "server.log"
    os.mkfifo(str(fifo))  # no writer: a plain open() would block for ever
    src = _log_source(fifo)
    e = pytest.raises(BadInput, src.check_readable).value
    assert str(e).startswith("log %s: is a FIFO (named pipe), not a regular file" % fifo)
    src.feed(0)
    assert src.report()["log_tail"] == [] and sglang_log.read_tail(str(fifo), 10) is None


def test_a_log_that_does_not_exist_yet_is_fine_and_a_directory_on_the_way_is_not_followed(tmp_path):
    assert _log_source(tmp_path / "later.log").check_readable() is None
    os.symlink("/etc", str(tmp_path / "logs"))  # the log's folder a link: the host's layout, followed
    assert untrusted.open_path(str(tmp_path / "logs" / "no-such.log"), untrusted.LOG) is None
