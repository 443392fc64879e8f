# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for module_utils/server/preflight.py, using the SGLang double as the installed parser."""
import testpaths
from localrun import local_run
import json
import os
import pathlib
import socket
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight as pf

REPO = testpaths.REPO
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
needs_double = pytest.mark.skipif(not os.path.isdir(os.path.join(DOUBLE, "sglang")),
                                  reason="tools/sglang_double not present")


def double_env(version):
    return {"PYTHONPATH": DOUBLE, "SGLANG_DOUBLE_VERSION": version}


@needs_double
@pytest.mark.parametrize("version,ok", [("0.5.9", True), ("0.5.23", False)])
def test_parse_with_installed_parser(version, ok):
    check, ver = pf.check_parse(sys.executable, ["--model-path", "/m", "--tp-size", "8", "--cuda-graph-max-bs", "128"],
                                double_env(version), run=local_run)
    assert ver == version and check["ok"] is ok
    if not ok:
        assert "ambiguous option: --cuda-graph-max-bs could match" in check["msg"]


@needs_double
def test_parse_unknown_flag_verbatim():
    check, _detail = pf.check_parse(sys.executable, ["--model-path", "/m", "--no-such-flag"], double_env("0.5.23"), run=local_run)
    assert not check["ok"] and "unrecognized arguments: --no-such-flag" in check["msg"]


def test_parse_bad_python(tmp_path):
    check, ver = pf.check_parse(str(tmp_path / "nope"), ["--model-path", "/m"], run=local_run)
    assert not check["ok"] and ver is None and "venv" in check["msg"]


def test_checkpoint(tmp_path):
    ck = tmp_path / "ck"
    ck.mkdir()
    assert not pf.check_checkpoint("model_path", str(ck), {})["ok"]
    (ck / "config.json").write_text("{}")
    c = pf.check_checkpoint("model_path", str(ck), {})
    assert not c["ok"] and "safetensors" in c["msg"]
    (ck / "model.safetensors.index.json").write_text("{}")
    assert pf.check_checkpoint("model_path", str(ck), {})["ok"]
    assert not pf.check_checkpoint("model_path", str(tmp_path / "missing"), {})["ok"]
    warnings = []
    assert pf.check_checkpoint("model_path", "moonshotai/Kimi-K2.5", {}, warnings)["ok"] and warnings
    assert not pf.check_checkpoint("model_path", "moonshotai/Kimi-K2.5", {"HF_HUB_OFFLINE": "1"})["ok"]


def test_tp_and_gpu_count():
    assert pf.visible_gpus(None, {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}) == 4
    assert pf.visible_gpus(None, {"CUDA_VISIBLE_DEVICES": ""}) == 0
    assert pf.visible_gpus(None, {}, runner=lambda c: "0\n1\n") == 2
    assert pf.check_tp(8, 1, 8)["ok"]
    assert pf.check_tp(16, 2, 8)["ok"]
    assert not pf.check_tp(8, 1, 4)["ok"]
    assert not pf.check_tp(8, 1, None)["ok"]


def test_port_free_held_by_owner_and_foreign():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert pf.check_port("127.0.0.1", port)["ok"]
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        c = pf.check_port("127.0.0.1", port)
        assert not c["ok"] and str(os.getpid()) in c["msg"]
        assert pf.check_port("127.0.0.1", port, owner_pid=os.getpid())["ok"]
    finally:
        holder.close()


def test_owner_includes_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert pf.owned_by(child.pid, owner_pid=os.getpid())
        assert not pf.owned_by(os.getpid(), owner_pid=child.pid)
    finally:
        child.kill()
        child.wait()


def test_gpu_processes():
    out = "4242, /usr/bin/python3, 81000\n"
    c = pf.check_gpu_procs(runner=lambda cmd: out)
    assert not c["ok"] and "4242 /usr/bin/python3 (81000 MiB)" in c["msg"]
    assert pf.check_gpu_procs(runner=lambda cmd: "")["ok"]
    assert pf.check_gpu_procs(runner=lambda cmd: None)["ok"]


@needs_double
def test_module_collects_every_failure(tmp_path):
    """Run the real module file end to end (AnsibleModule with args on stdin)."""
    module = os.path.join(REPO, "plugins", "modules", "server_preflight.py")
    args = {"ANSIBLE_MODULE_ARGS": {
        "python": sys.executable, "argv": ["--model-path", str(tmp_path), "--cuda-graph-max-bs", "8"],
        "model_path": str(tmp_path), "tp": 8, "gpu_count": 2, "port": 1, "host": "127.0.0.1",
        "env": double_env("0.5.23")}}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "collections")] + sys.path))
    proc = subprocess.run([sys.executable, module], input=json.dumps(args), stdout=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=120, check=False)
    res = json.loads(proc.stdout)
    assert res["failed"] and res["version"] == "0.5.23"
    failed = {c["name"] for c in res["checks"] if not c["ok"]}
    assert {"argv", "model_path", "tp"} <= failed
    assert "ambiguous option" in res["msg"]


# ---- issue 43: the parse makes nothing where the instance's caches go, and a permission problem is named

@needs_double
def test_importing_the_double_makes_its_cache_folders_with_the_umask(tmp_path):
    cache = tmp_path / "home" / "compile-cache" / "inst" / "0.5.9"
    env = dict(os.environ, SGLANG_CACHE_DIR=str(cache), TRITON_CACHE_DIR=str(cache / "triton"), **double_env("0.5.9"))
    subprocess.run([sys.executable, "-c", "import os; os.umask(0o022); import sglang"], env=env, check=True)
    assert (cache / "triton").is_dir() and oct(os.stat(str(cache)).st_mode & 0o777) == oct(0o755)


@needs_double
def test_the_parse_points_the_caches_at_a_throwaway_folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    env = dict(double_env("0.5.9"), SGLANG_CACHE_DIR=str(home / "compile-cache" / "inst" / "0.5.9"),
               TRITON_CACHE_DIR=str(home / "compile-cache" / "inst" / "0.5.9" / "triton"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    check, ver = pf.check_parse(sys.executable, ["--model-path", "/m"], env, run=local_run)
    assert check["ok"] and ver == "0.5.9"
    assert not home.exists()                      # the instance's caches: made by roles/server only
    assert os.listdir(str(tmp_path / "tmp")) == []   # the throwaway folder is gone


def test_a_permission_error_names_the_path_and_its_owner_not_a_reinstall(tmp_path):
    fake = tmp_path / "python"
    home = tmp_path / "lib"
    home.mkdir()
    os.chmod(str(home), 0o755)
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho 'Traceback ...' >&2\n"
                    "echo \"PermissionError: [Errno 13] Permission denied: '%s/sglang'\" >&2\nexit 1\n" % home)
    fake.chmod(0o755)
    check, ver = pf.check_parse(str(fake), [], run=local_run)
    assert not check["ok"] and ver is None
    assert "permission denied on %s/sglang" % home in check["msg"] and "reinstall" not in check["msg"]
    assert "%s/sglang does not exist and %s, where it would be made, is mode 0755 root:root" % (home, home) \
        in check["msg"]
    (home / "sglang").mkdir()
    os.chmod(str(home / "sglang"), 0o700)
    assert "%s/sglang is mode 0700 root:root" % home in pf.check_parse(str(fake), [], run=local_run)[0]["msg"]
    # any other failure to load keeps its remedy
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho 'ModuleNotFoundError: No module named sglang' >&2\nexit 1\n")
    assert pf.check_parse(str(fake), [], run=local_run)[0]["msg"].endswith("; reinstall sglang in the venv")


def _as_nobody(fn):
    """``fn()``'s result as the user nobody (a forked child drops to uid 65534): what the preflight sees as the
    server user."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(w, json.dumps(fn()).encode())
        finally:
            os._exit(0)  # pylint: disable=protected-access
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")
def test_a_model_the_server_user_cannot_reach_is_named_not_called_missing(open_dir):
    tmp_path = pathlib.Path(open_dir)
    top = tmp_path / "models"
    model = top / "m"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_text("")
    os.chmod(str(top), 0o755)
    os.chmod(str(model), 0o755)
    assert _as_nobody(lambda: pf.check_checkpoint("model_path", str(model)))["ok"]
    os.chmod(str(model), 0o700)   # cannot list it
    c = _as_nobody(lambda: pf.check_checkpoint("model_path", str(model)))
    assert not c["ok"] and "the server user nobody cannot read it (permission denied; %s is mode 0700 root:root)" \
        % model in c["msg"] and "does not exist" not in c["msg"]
    os.chmod(str(model), 0o755)
    os.chmod(str(top), 0o700)     # cannot reach it
    c = _as_nobody(lambda: pf.check_checkpoint("model_path", str(model)))
    assert not c["ok"] and "permission denied; %s is mode 0700 root:root" % top in c["msg"]
    # a path that is really not there keeps its own words
    c = _as_nobody(lambda: pf.check_checkpoint("model_path", str(tmp_path / "none")))
    assert c["msg"].endswith("does not exist: download the checkpoint there or fix the path")
