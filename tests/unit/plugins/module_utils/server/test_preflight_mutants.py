# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/preflight.py word for word (issue 37): each check's name, verdict and words in each branch; ownership by
unit and by process tree read from a /proc tree written here; a port two processes hold; the port window read from
the sysctl files of a given proc root; run_all handing each input to its check."""
import os
import socket
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight as pf
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import ports as sglang_ports

from localrun import local_run  # pylint: disable=import-error

WINDOW_OK = {"name": "ports", "ok": True, "msg": "SGLang's fixed ports are free and outside the ephemeral range"}


def listener(port=0):
    holder = socket.socket()
    holder.bind(("127.0.0.1", port))
    holder.listen(1)
    return holder


def comm(pid):
    with open("/proc/%d/comm" % pid) as handle:
        return handle.read().strip()


def bindable(port):
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def free_low_port(offsets=(0,)):
    """A port below the kernel's ephemeral range (32768 here and by default) such that nothing holds it nor any
    port at the given offsets from it: no outgoing connection borrows these, so only a listener could."""
    for port in range(21000, 22000):
        if all(bindable(port + o) for o in offsets):
            return port
    raise AssertionError("no free port in 21000-21999 with %s free beside it" % (offsets,))


def fake_proc(tmp_path, ephemeral=None, reserved=None):
    root = tmp_path / "proc"
    sysctl = root / "sys" / "net" / "ipv4"
    sysctl.mkdir(parents=True)
    if ephemeral is not None:
        (sysctl / "ip_local_port_range").write_text(ephemeral)
    if reserved is not None:
        (sysctl / "ip_local_reserved_ports").write_text(reserved)
    return str(root)


def test_parse_refusal_of_a_python_that_cannot_run_word_for_word(tmp_path):
    assert pf.check_parse(None, [], run=local_run) == ({"name": "argv", "ok": False, "msg": (
        "python None is not executable: point python at the server venv's bin/python")}, None)
    assert pf.check_parse(str(tmp_path / "python"), [], run=local_run)[0]["name"] == "argv"


def test_parse_runs_the_probe_with_a_300_s_deadline(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"version\": \"0.5.23\", \"ok\": true}'\n")
    fake.chmod(0o755)
    deadlines = []

    def run(argv, data=None, environ_update=None, timeout=None):
        deadlines.append(timeout)
        return local_run(argv, data, environ_update, timeout)
    assert pf.check_parse(str(fake), ["--port", "1"], run=run) == (
        {"name": "argv", "ok": True, "msg": "SGLang 0.5.23 accepts the argv"}, "0.5.23")
    assert deadlines == [300]
    pf.check_parse(str(fake), [], timeout=7, run=run)
    assert deadlines == [300, 7]


def test_checkpoint_refusals_word_for_word(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert pf.check_checkpoint("model_path", str(empty)) == {"name": "model_path", "ok": False, "msg": (
        "model_path %s does not look like a checkpoint (missing config.json, *.safetensors/*.bin/index): finish the "
        "download or fix the path" % empty)}
    a_file = tmp_path / "model.safetensors"
    a_file.write_text("")
    assert pf.check_checkpoint("draft_model_path", str(a_file)) == {"name": "draft_model_path", "ok": False, "msg": (
        "draft_model_path %s is not a directory: point it at the checkpoint directory" % a_file)}
    # no env given: the process environment is read (offline there: a hub id is refused)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not pf.check_checkpoint("model_path", "org/model")["ok"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert pf.check_checkpoint("model_path", "org/model")["ok"]
    assert pf.check_checkpoint("model_path", str(tmp_path / "absent")) == {"name": "model_path", "ok": False, "msg": (
        "model_path %s does not exist: download the checkpoint there or fix the path" % (tmp_path / "absent"))}


def test_tp_per_node_is_the_floor_of_tp_over_nodes():
    # 3 over 2 nodes: 1 GPU per node (floor); at, below and above the visible GPUs
    assert pf.check_tp(3, 2, 1) == {"name": "tp", "ok": True, "msg": "tp=3 fits 1 visible GPU(s) x 2 node(s)"}
    assert pf.check_tp(3, 2, 0) == {"name": "tp", "ok": False, "msg": (
        "tp=3 needs 1 GPUs per node on 2 node(s) but 0 are visible: lower tp or add GPUs")}
    assert pf.check_tp(3, 2, 2)["ok"]


@pytest.mark.parametrize("tp, nnodes, ok", [
    (1, 1, True), (-1, 1, False), (2, 1, True),     # tp at, below and above 1 (0 and None mean the default, 1)
    (2, 2, True), (2, -1, False), (-8, 2, False),   # nnodes at and below 1 (0 is the default), tp below with nnodes above
])
def test_a_tp_or_node_count_below_one_is_refused_whatever_the_gpus(tp, nnodes, ok):
    # the module run by itself (the plan refuses server_tp < 1 first): tp=-8 did "fit" any GPU count before
    c = pf.check_tp(tp, nnodes, 8)
    assert c["ok"] is ok
    if not ok:
        assert c == {"name": "tp", "ok": False, "msg": (
            "tp=%d over %d node(s) cannot be laid out: give tp (all GPUs of the replica) and nnodes of at least 1"
            % (tp, nnodes))}


def test_owned_by_unit_and_by_process_tree_from_the_given_proc(tmp_path):
    # pids above this kernel's pid_max (32768): never real ones, so only the proc tree written here answers
    root = tmp_path / "proc"
    for pid, ppid, cgroup in ((40001, 1, "0::/system.slice/sglang-a.service\n"), (40002, 40001, "0::/user.slice\n")):
        (root / str(pid)).mkdir(parents=True)
        (root / str(pid) / "cmdline").write_bytes(b"python3\0-m\0sglang.launch_server\0")
        (root / str(pid) / "cgroup").write_text(cgroup)
        (root / str(pid) / "stat").write_text("%d (python3) S %d 1 1 0 -1\n" % (pid, ppid))
    proc = str(root)
    assert pf.owned_by(40001, "sglang-a", None, proc)
    assert pf.owned_by(40001, "sglang-a.service", None, proc)
    assert not pf.owned_by(40001, "sglang-b", None, proc)
    assert not pf.owned_by(40001, None, None, proc)
    assert not pf.owned_by(40002, "sglang-a", None, proc)
    assert not pf.owned_by(40003, "sglang-a", None, proc)  # not visible: not ours
    # by tree: the child of the owner pid, the owner itself; not the parent of the owner
    assert pf.owned_by(40002, None, 40001, proc)
    assert pf.owned_by(40001, None, 40001, proc)
    assert not pf.owned_by(40001, None, 40002, proc)
    assert pf.owned_by(40002, "sglang-b", 40001, proc)


def test_a_port_two_processes_hold_names_both():
    holder = listener()
    port = holder.getsockname()[1]
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE,
                             pass_fds=[holder.fileno()])
    try:
        pids = sorted([os.getpid(), child.pid])
        ours = pf.check_port("127.0.0.1", port, owner_pid=os.getpid())
        assert ours == {"name": "port", "ok": True, "msg": "port %d is held by this server (pid %d,%d)" % (port, pids[0], pids[1])}
        theirs = pf.check_port("127.0.0.1", port, owner_pid=child.pid)  # the child's parent (us) is foreign to it
        assert theirs["ok"] is False and theirs["msg"] == "port %d is in use by %d (%s): stop it or choose another port" % (
            port, os.getpid(), comm(os.getpid()))
        foreign = pf.check_port("127.0.0.1", port)
        assert foreign == {"name": "port", "ok": False, "msg": "port %d is in use by %s: stop it or choose another port" % (
            port, ", ".join("%d (%s)" % (p, comm(p)) for p in pids))}
    finally:
        child.stdin.close()
        child.wait()
        holder.close()


def test_a_port_that_cannot_be_bound_is_refused_by_name():
    c = pf.check_port("192.0.2.1", 1)
    assert c["name"] == "port" and c["ok"] is False


def test_port_window_reads_the_sysctls_of_the_given_proc_root(tmp_path):
    port = free_low_port()
    nccl = port + 1
    argv = ["--port", str(port), "--nccl-port", str(nccl)]
    warnings = []
    # the nccl port inside the given range but reserved there: nothing to say
    proc = fake_proc(tmp_path, "%d %d" % (nccl, nccl + 5), "%d\n" % nccl)
    assert pf.check_port_window(argv, "0.5.23", warnings=warnings, proc_root=proc) == WINDOW_OK and warnings == []
    assert pf.check_port_window(argv, "0.5.23", proc_root=proc) == WINDOW_OK  # no warnings list: none kept
    # not reserved: refused with the given range and the reservation the fix names
    (tmp_path / "proc" / "sys" / "net" / "ipv4" / "ip_local_reserved_ports").write_text("%d\n" % (nccl + 2))
    c = pf.check_port_window(argv, "0.5.23", proc_root=proc)
    assert c["name"] == "ports" and c["ok"] is False
    assert "inside the host's ephemeral port range %d-%d" % (nccl, nccl + 5) in c["msg"]
    assert "net.ipv4.ip_local_reserved_ports=%d,%d " % (nccl, nccl + 2) in c["msg"]
    # no sysctl files: the range is unreadable, said as a warning
    warnings = []
    assert pf.check_port_window(argv, "0.5.23", warnings=warnings, proc_root=fake_proc(tmp_path / "none")) == WINDOW_OK
    assert warnings == ["net.ipv4.ip_local_port_range unreadable: SGLang's ports not checked against it"]


def test_port_window_checks_each_fixed_port_but_the_http_one_with_the_owner(tmp_path):
    proc = fake_proc(tmp_path, "61000 61100", "")
    http, nccl = listener(), listener()
    ports = (http.getsockname()[1], nccl.getsockname()[1])
    argv = ["--port", str(ports[0]), "--nccl-port", str(ports[1])]
    try:
        # ours: free to use; the HTTP port is check_port's, not the window's
        assert pf.check_port_window(argv, "0.5.23", owner_pid=os.getpid(), proc_root=proc) == WINDOW_OK
        held = "the torch.distributed store (--nccl-port), port %d is in use by %d (%s): stop it or choose another port" % (
            ports[1], os.getpid(), comm(os.getpid()))
        assert pf.check_port_window(argv, "0.5.23", owner_pid=1, proc_root=proc) == {"name": "ports", "ok": False, "msg": held}
        # inside the range too: both problems, the window's first, joined by "; "
        inside = fake_proc(tmp_path / "inside", "%d %d" % (ports[1], ports[1]), "")
        window = sglang_ports.check(argv, "0.5.23", (ports[1], ports[1]), "")[0]
        assert pf.check_port_window(argv, "0.5.23", proc_root=inside)["msg"] == "; ".join(window + [held])
    finally:
        http.close()
        nccl.close()


def test_port_window_takes_the_version_s_dp_attention_ports(tmp_path):
    # 0.5.9 binds 5 ports after the rendezvous (--port + 233); an unknown version 6: the 6th is held, not 0.5.9's
    # below the ephemeral range, so an outgoing connection of some other process cannot hold one of 0.5.9's ports
    port = free_low_port((0, 1) + tuple(233 + i for i in range(7)))
    sixth = listener(port + 233 + 6)
    argv = ["--port", str(port), "--nccl-port", str(port + 1), "--enable-dp-attention"]
    try:
        assert [p for p, _w in sglang_ports.fixed_ports(argv, "0.5.9")][-2] == port + 233 + 5
        assert pf.check_port_window(argv, "0.5.9", proc_root=fake_proc(tmp_path, "61000 61100", "")) == WINDOW_OK
        assert not pf.check_port_window(argv, "", proc_root=fake_proc(tmp_path / "x", "61000 61100", ""))["ok"]
    finally:
        sixth.close()


def test_gpu_processes_word_for_word():
    warnings = []
    assert pf.check_gpu_procs(runner=lambda cmd: None, warnings=warnings) == {
        "name": "gpu_processes", "ok": True, "msg": "nvidia-smi did not list the GPUs' compute processes: other processes on the GPUs not checked"}
    # not checked, and said in a warning line (issue 43)
    assert warnings == ["nvidia-smi did not list the GPUs' compute processes: other processes on the GPUs not checked"]
    assert pf.check_gpu_procs(owner_pid=1, runner=lambda cmd: "%d, python3, 100\n" % os.getpid()) == {
        "name": "gpu_processes", "ok": False,
        "msg": "other processes hold GPU memory: %d python3 (100 MiB); stop them before starting the server" % os.getpid()}


def run_all(params):
    def run(argv, data=None, environ_update=None, timeout=None):
        if argv[0] == "nvidia-smi":
            return 0, "", ""
        return local_run(argv, data, environ_update, timeout)
    return pf.run_all(params, run)


def test_run_all_hands_warnings_host_and_owner_to_their_checks(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"version\": \"0.5.23\", \"ok\": true}'\n")
    fake.chmod(0o755)
    checks, _v, warnings = run_all({"model_path": "org/model", "gpu_count": 1, "port": 1, "host": "192.0.2.1"})
    by = dict((c["name"], c) for c in checks)
    assert warnings == ["model_path org/model is not a local path; SGLang will download it from the hub at start"]
    assert by["port"]["msg"].startswith("cannot bind 192.0.2.1:1 (")
    # the owner pid reaches the window check: a fixed port below the ephemeral range held by the owner is ours
    port = free_low_port()
    nccl = listener(port + 1)
    try:
        params = {"python": str(fake), "argv": ["--port", str(port), "--nccl-port", str(port + 1)], "model_path": "org/model",
                  "gpu_count": 1, "owner_pid": os.getpid()}
        by = dict((c["name"], c) for c in run_all(params)[0])
        assert by["ports"] == WINDOW_OK
        by = dict((c["name"], c) for c in run_all(dict(params, owner_pid=1))[0])
        assert not by["ports"]["ok"]
    finally:
        nccl.close()


def test_parse_that_cannot_start_the_python_is_refused_by_its_reason(tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!%s\n" % (tmp_path / "no-interpreter"))
    broken.chmod(0o755)
    check, version = pf.check_parse(str(broken), [], run=local_run)
    assert version is None and check["name"] == "argv" and check["ok"] is False
    assert check["msg"].startswith("could not run %s to parse the argv (cannot run %s: " % (broken, broken))
    assert check["msg"].endswith("): check the venv")
    # a runner that says nothing but its rc: the rc is named
    for rc in (124, 127):
        assert pf.check_parse(str(broken), [], run=lambda *a, code=rc, **kw: (code, "", " \n")) == (
            {"name": "argv", "ok": False, "msg": "could not run %s to parse the argv (rc %d): check the venv" % (broken, rc)}, None)


def test_the_stdout_runner_gives_each_command_30_s():
    deadlines = []

    def run(argv, data=None, environ_update=None, timeout=None):
        deadlines.append(timeout)
        return local_run(argv, data, environ_update, timeout)
    assert pf.stdout_of(run)(["echo", "x"]) == "x\n" and deadlines == [30]


def test_gpu_processes_name_every_foreign_one():
    out = "%d, python3, 100\n1, init, 5\n" % os.getpid()
    assert pf.check_gpu_procs(runner=lambda cmd: out)["msg"] == (
        "other processes hold GPU memory: %d python3 (100 MiB), 1 init (5 MiB); stop them before starting the server" % os.getpid())


def test_run_all_hands_env_and_gpu_count_to_their_checks(monkeypatch):
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    # nvidia-smi lists no GPU here: the count comes from gpu_count, else from the env's CUDA_VISIBLE_DEVICES
    by = dict((c["name"], c) for c in run_all({"model_path": "org/model", "gpu_count": 4, "tp": 4})[0])
    assert by["tp"] == {"name": "tp", "ok": True, "msg": "tp=4 fits 4 visible GPU(s) x 1 node(s)"}
    assert by["model_path"]["ok"]
    by = dict((c["name"], c) for c in run_all({"model_path": "org/model", "tp": 2, "env": {
        "CUDA_VISIBLE_DEVICES": "0,1", "HF_HUB_OFFLINE": "1"}})[0])
    assert by["tp"] == {"name": "tp", "ok": True, "msg": "tp=2 fits 2 visible GPU(s) x 1 node(s)"}
    # the env's offline switch reaches the model's checkpoint check
    assert not by["model_path"]["ok"] and "HF_HUB_OFFLINE is set" in by["model_path"]["msg"]
    assert not dict((c["name"], c) for c in run_all({"model_path": "org/model", "tp": 2})[0])["tp"]["ok"]


def test_the_owner_unit_reaches_every_ownership_check(tmp_path, monkeypatch):
    # this process is in no systemd unit here: its identity is read from a proc tree that puts it in sglang-t.service
    root = tmp_path / "units"
    (root / str(os.getpid())).mkdir(parents=True)
    (root / str(os.getpid()) / "cmdline").write_bytes(b"python3\0")
    (root / str(os.getpid()) / "cgroup").write_text("0::/system.slice/sglang-t.service\n")
    real = pf.ownership.identity
    monkeypatch.setattr(pf.ownership, "identity", lambda pid, proc_root="/proc": real(pid, str(root)))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"version\": \"0.5.23\", \"ok\": true}'\n")
    fake.chmod(0o755)
    apps = "%d, python3, 100\n" % os.getpid()

    def run(argv, data=None, environ_update=None, timeout=None):
        if argv[0] == "nvidia-smi":
            return 0, apps if argv[1].startswith("--query-compute-apps") else "", ""
        return local_run(argv, data, environ_update, timeout)
    port = free_low_port()
    http, nccl = listener(port), listener(port + 1)
    argv = ["--port", str(port), "--nccl-port", str(port + 1)]
    try:
        assert pf.check_port("127.0.0.1", port, owner_unit="sglang-t")["ok"]
        assert not pf.check_port("127.0.0.1", port, owner_unit="sglang-u")["ok"]
        window = fake_proc(tmp_path, "61000 61100", "")
        assert pf.check_port_window(argv, "0.5.23", owner_unit="sglang-t", proc_root=window) == WINDOW_OK
        assert not pf.check_port_window(argv, "0.5.23", owner_unit="sglang-u", proc_root=window)["ok"]
        assert pf.check_gpu_procs(owner_unit="sglang-t", runner=lambda cmd: apps)["ok"]
        assert not pf.check_gpu_procs(owner_unit="sglang-u", runner=lambda cmd: apps)["ok"]
        params = {"python": str(fake), "argv": argv, "model_path": "org/model", "gpu_count": 1, "port": port,
                  "owner_unit": "sglang-t"}
        by = dict((c["name"], c) for c in pf.run_all(params, run)[0])
        assert by["port"]["ok"] and by["ports"] == WINDOW_OK and by["gpu_processes"]["ok"], by
        by = dict((c["name"], c) for c in pf.run_all(dict(params, owner_unit="sglang-u"), run)[0])
        assert not (by["port"]["ok"] or by["ports"]["ok"] or by["gpu_processes"]["ok"]), by
    finally:
        http.close()
        nccl.close()
