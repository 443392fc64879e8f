# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/preflight.py held from both sides (issue 37): the port held by a process no socket table names, tp at,
below and above the visible GPUs, each checkpoint shape and each offline switch, and the exact words of each
refusal."""
import os
import socket
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight as pf

from localrun import local_run  # pylint: disable=import-error


def smi_answers(answer):
    """A runner that runs everything for real but nvidia-smi, which ``answer(argv)`` answers (None: not there)."""
    def run(argv, data=None, environ_update=None, timeout=None):
        if argv[0] == "nvidia-smi":
            out = answer(argv)
            return (127, "", "nvidia-smi: not found") if out is None else (0, out, "")
        return local_run(argv, data, environ_update, timeout)
    return run


def test_a_port_bound_but_not_listening_is_held_by_an_unknown_process():
    # bound without listen(): the bind fails (EADDRINUSE) but no LISTEN row names a holder
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    try:
        c = pf.check_port("127.0.0.1", port, owner_pid=os.getpid())
        assert c == {"name": "port", "ok": False,
                     "msg": "port %d is in use by an unknown process: stop it or choose another port" % port}
    finally:
        holder.close()


def test_a_foreign_listener_is_named_with_its_command():
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    comm = open("/proc/self/comm").read().strip()
    try:
        c = pf.check_port("127.0.0.1", port, owner_pid=1)
        assert c["msg"] == "port %d is in use by %d (%s): stop it or choose another port" % (port, os.getpid(), comm)
        ours = pf.check_port("127.0.0.1", port, owner_pid=os.getpid())
        assert ours == {"name": "port", "ok": True, "msg": "port %d is held by this server (pid %d)" % (port, os.getpid())}
    finally:
        holder.close()


def test_an_address_not_of_this_host_is_refused_with_its_reason():
    c = pf.check_port("192.0.2.1", 1)  # TEST-NET-1: never a local address
    assert not c["ok"] and c["msg"].startswith("cannot bind 192.0.2.1:1 (") and c["msg"].endswith(
        "): use an address of this host")


def test_a_free_port_and_the_defaults():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert pf.check_port(None, port) == {"name": "port", "ok": True, "msg": "port 127.0.0.1:%d is free" % port}
    if socket.has_ipv6 and os.path.exists("/proc/net/if_inet6"):
        assert pf.check_port("::1", port)["msg"] == "port ::1:%d is free" % port


def test_comm_of_a_missing_process_is_a_question_mark(tmp_path):
    assert pf._comm(123, str(tmp_path)) == "?"
    (tmp_path / "123").mkdir()
    (tmp_path / "123" / "comm").write_text("sglang\n")
    assert pf._comm(123, str(tmp_path)) == "sglang"


@pytest.mark.parametrize("tp, nnodes, gpus, ok", [
    (8, 1, 8, True), (8, 1, 7, False), (8, 1, 9, True),
    (16, 2, 8, True), (16, 2, 7, False), (16, 4, 4, True), (16, 4, 3, False),
    (None, None, 1, True), (None, None, 0, False)])
def test_tp_fits_the_visible_gpus_at_below_and_above(tp, nnodes, gpus, ok):
    c = pf.check_tp(tp, nnodes, gpus)
    assert c["ok"] is ok and c["name"] == "tp"
    t, n = int(tp or 1), int(nnodes or 1)
    if ok:
        assert c["msg"] == "tp=%d fits %d visible GPU(s) x %d node(s)" % (t, gpus, n)
    else:
        assert c["msg"] == "tp=%d needs %d GPUs per node on %d node(s) but %d are visible: lower tp or add GPUs" % (
            t, t // n, n, gpus)


def test_tp_without_a_gpu_count():
    assert pf.check_tp(1, 1, None) == {"name": "tp", "ok": False, "msg": (
        "cannot count GPUs (no gpu_count, CUDA_VISIBLE_DEVICES or nvidia-smi): pass gpu_count")}


@pytest.mark.parametrize("cvd, n", [("0", 1), ("0,1", 2), ("0, 1 ,2", 3), ("-1", 0), ("0,-1", 1), (",", 0), ("", 0)])
def test_visible_gpus_from_cuda_visible_devices(cvd, n):
    assert pf.visible_gpus(None, {"CUDA_VISIBLE_DEVICES": cvd}, runner=lambda c: "0\n1\n2\n3\n4\n5\n6\n7\n") == n


def test_visible_gpus_given_or_asked_of_nvidia_smi(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert pf.visible_gpus("3") == 3 and pf.visible_gpus(0) == 0
    asked = []
    assert pf.visible_gpus(None, {}, runner=lambda c: asked.append(c) or "0\n1\n2\n") == 3
    assert asked == [["nvidia-smi", "--query-gpu=index", "--format=csv,noheader,nounits"]]
    assert pf.visible_gpus(None, {}, runner=lambda c: None) is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert pf.visible_gpus(None, {}, runner=lambda c: None) == 2
    assert pf.visible_gpus(None, {"CUDA_VISIBLE_DEVICES": "5"}, runner=lambda c: None) == 1


@pytest.mark.parametrize("weights", ["model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                                     "pytorch_model.bin.index.json", "model.gguf"])
def test_each_weight_format_makes_a_checkpoint(tmp_path, weights):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / weights).write_text("")
    assert pf.check_checkpoint("model_path", str(tmp_path), {}) == {
        "name": "model_path", "ok": True, "msg": "model_path %s looks like a checkpoint" % tmp_path}


def test_a_checkpoint_missing_parts_names_them(tmp_path):
    c = pf.check_checkpoint("draft_model_path", str(tmp_path), {})
    assert c["msg"] == ("draft_model_path %s does not look like a checkpoint (missing config.json, *.safetensors/*.bin/"
                        "index): finish the download or fix the path" % tmp_path)
    (tmp_path / "model.safetensors").write_text("")
    assert "(missing config.json)" in pf.check_checkpoint("m", str(tmp_path), {})["msg"]
    (tmp_path / "notes.txt").write_text("")
    f = tmp_path / "notes.txt"
    assert pf.check_checkpoint("m", str(f), {})["msg"] == (
        "m %s is not a directory: point it at the checkpoint directory" % f)


@pytest.mark.parametrize("env, offline", [({}, False), ({"HF_HUB_OFFLINE": "0"}, False), ({"HF_HUB_OFFLINE": "1"}, True),
                                          ({"HF_HUB_OFFLINE": "TRUE"}, True), ({"HF_HUB_OFFLINE": "yes"}, True),
                                          ({"HF_HUB_OFFLINE": "on"}, True), ({"TRANSFORMERS_OFFLINE": "1"}, True)])
def test_a_hub_id_is_refused_offline_and_warned_online(env, offline):
    warnings = []
    c = pf.check_checkpoint("model_path", "org/Model-1.5", env, warnings)
    assert c["ok"] is not offline
    if offline:
        assert c["msg"] == ("model_path org/Model-1.5 is a hub id but HF_HUB_OFFLINE is set: download it and give the "
                            "local path") and warnings == []
    else:
        assert c["msg"] == "model_path org/Model-1.5 is a hub id (downloaded at start)"
        assert warnings == ["model_path org/Model-1.5 is not a local path; SGLang will download it from the hub at start"]


@pytest.mark.parametrize("path", ["./org/model", "/no/such/dir", "org", "org/model/extra", "-org/model"])
def test_a_path_that_is_no_hub_id_and_absent_is_refused(path):
    c = pf.check_checkpoint("model_path", path, {})
    assert c == {"name": "model_path", "ok": False,
                 "msg": "model_path %s does not exist: download the checkpoint there or fix the path" % path}


def test_parse_with_a_python_that_prints_no_answer(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho not json\necho 'No module named sglang' >&2\nexit 1\n")
    fake.chmod(0o755)
    c, version = pf.check_parse(str(fake), ["--model-path", "/m"], run=local_run)
    assert version is None and c == {"name": "argv", "ok": False, "msg": (
        "SGLang's parser could not be loaded from %s: No module named sglang; reinstall sglang in the venv" % fake)}
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\nexit 1\n")
    silent.chmod(0o755)
    assert pf.check_parse(str(silent), [], run=local_run)[0]["msg"].endswith(": no output; reinstall sglang in the venv")


def test_parse_reads_the_last_json_line(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho '{\"version\": \"0.1\", \"ok\": true}'\necho 'trailing words'\n")
    fake.chmod(0o755)
    c, version = pf.check_parse(str(fake), [], run=local_run)
    assert version == "0.1" and c == {"name": "argv", "ok": True, "msg": "SGLang 0.1 accepts the argv"}
    fake.write_text("#!/bin/sh\necho '{\"version\": \"0.2\", \"ok\": false, \"error\": \"bad flag\"}'\n")
    c, version = pf.check_parse(str(fake), [], run=local_run)
    assert version == "0.2" and c["msg"] == "SGLang 0.2 rejects the argv: bad flag" and not c["ok"]


def test_parse_that_runs_too_long_is_refused(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexec sleep 5\n")
    fake.chmod(0o755)
    c, version = pf.check_parse(str(fake), [], timeout=0.2, run=local_run)
    assert version is None and not c["ok"] and c["msg"].startswith("could not run %s to parse the argv (" % fake)
    assert c["msg"].endswith("): check the venv")


def test_parse_passes_env_to_the_venv_python(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho \"{\\\"version\\\": \\\"$MYVER\\\", \\\"ok\\\": true}\"\n")
    fake.chmod(0o755)
    assert pf.check_parse(str(fake), [], env={"MYVER": 7}, run=local_run)[1] == "7"
    assert pf.check_parse(None, [], run=local_run)[0]["msg"] == "python None is not executable: point python at the server venv's bin/python"


def test_gpu_processes_owned_ones_are_not_foreign():
    out = "%d, %s, 100\n, python, 5\n" % (os.getpid(), sys.executable)
    assert pf.check_gpu_procs(owner_pid=os.getpid(), runner=lambda cmd: out) == {
        "name": "gpu_processes", "ok": True, "msg": "no foreign processes on the GPUs"}
    assert pf.check_gpu_procs(runner=lambda cmd: None)["msg"] == (
        "nvidia-smi did not list the GPUs' compute processes: other processes on the GPUs not checked")
    c = pf.check_gpu_procs(owner_pid=1, runner=lambda cmd: out)
    assert c["msg"] == "other processes hold GPU memory: %d %s (100 MiB); stop them before starting the server" % (
        os.getpid(), sys.executable)


def test_run_all_runs_each_check_it_has_inputs_for(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_text("")
    params = {"model_path": str(tmp_path), "gpu_count": 1, "tp": 1}
    checks, version, warnings = pf.run_all(params, run=smi_answers(lambda cmd: ""))
    assert [c["name"] for c in checks] == ["model_path", "tp", "gpu_processes"] and version is None and warnings == []
    params.update(draft_model_path="org/draft", port=None)
    checks, _v, warnings = pf.run_all(params, run=smi_answers(lambda cmd: ""))
    assert [c["name"] for c in checks] == ["model_path", "draft_model_path", "tp", "gpu_processes"]
    assert warnings == ["draft_model_path org/draft is not a local path; SGLang will download it from the hub at start"]


def fake_python(tmp_path, version="0.5.23", ok=True):
    """A venv python that answers the parse probe as SGLang's would, echoing the env it was given."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho \"{\\\"version\\\": \\\"%s\\\", \\\"ok\\\": %s, \\\"error\\\": \\\"$MARK\\\"}\"\n"
                    % (version, "true" if ok else "false"))
    fake.chmod(0o755)
    return str(fake)


def test_run_all_passes_each_input_to_its_check(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_text("")
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    asked = []
    apps = "%d, python, 10\n" % os.getpid()
    try:
        params = {"python": fake_python(tmp_path, ok=False), "argv": ["--port", str(port), "--nccl-port", "1"],
                  "env": {"MARK": "from-env", "HF_HUB_OFFLINE": "1"}, "model_path": str(model),
                  "draft_model_path": "org/draft", "gpu_count": None, "tp": 4, "nnodes": 2, "port": port,
                  "host": "127.0.0.1", "owner_pid": os.getpid(), "owner_unit": None, "sglang_version": "0.5.9"}
        checks, version, warnings = pf.run_all(params, run=smi_answers(lambda cmd: asked.append(cmd[1]) or (
            "0\n1\n" if cmd[1].startswith("--query-gpu") else apps)))
    finally:
        holder.close()
    by = dict((c["name"], c) for c in checks)
    assert [c["name"] for c in checks] == ["argv", "model_path", "draft_model_path", "tp", "port", "ports",
                                           "gpu_processes"]
    assert version == "0.5.23" and by["argv"]["msg"] == "SGLang 0.5.23 rejects the argv: from-env"
    # the env reaches the checkpoint check too: offline, a hub id is refused
    assert not by["draft_model_path"]["ok"] and "HF_HUB_OFFLINE is set" in by["draft_model_path"]["msg"]
    assert by["model_path"]["ok"]
    # no gpu_count, CUDA_VISIBLE_DEVICES unset in env: nvidia-smi's two GPUs, tp 4 over 2 nodes fits
    assert by["tp"]["msg"] == "tp=4 fits 2 visible GPU(s) x 2 node(s)"
    # the port is held by the owner: ours; the window check gets the argv and the parsed version
    assert by["port"]["ok"] and "held by this server" in by["port"]["msg"]
    assert by["gpu_processes"]["ok"] and asked[-1].startswith("--query-compute-apps=")
    # a port bind(0) gave is inside the ephemeral range: the window check names it, with the argv it was given
    assert not by["ports"]["ok"] and "%d (the HTTP port (--port))" % port in by["ports"]["msg"]
    assert warnings == []  # --nccl-port given: nothing to warn about


def test_run_all_falls_back_to_the_given_version_when_the_parse_has_none(tmp_path):
    silent = tmp_path / "python"
    silent.write_text("#!/bin/sh\nexit 1\n")
    silent.chmod(0o755)
    _checks, version, warnings = pf.run_all({"python": str(silent), "argv": ["--port", "1000"], "model_path": "/nope",
                                            "gpu_count": 1, "sglang_version": "0.5.9"}, run=smi_answers(lambda cmd: ""))
    assert version is None
    # 0.5.9 picks its nccl port among the ephemeral ports: the window check warns with that version's words
    assert any(w.startswith("no --nccl-port: SGLang 0.5.9 picks it") for w in warnings), warnings


def test_the_stdout_runner_gives_stdout_of_a_success_and_none_otherwise(tmp_path):
    out = pf.stdout_of(local_run)
    assert out(["echo", "hi"]) == "hi\n"
    assert out(["sh", "-c", "echo out; echo err >&2"]) == "out\n"
    assert out(["sh", "-c", "echo partial; exit 1"]) is None
    assert out([str(tmp_path / "no-such-tool")]) is None


def test_check_gpu_procs_asks_nvidia_smi_for_the_apps():
    asked = []
    assert pf.check_gpu_procs(runner=lambda cmd: asked.append(cmd) or "")["ok"] and asked == [
        ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"]]
