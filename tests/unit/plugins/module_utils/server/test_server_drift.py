# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift (module_utils/server/drift.py): the recorded argv against SGLang's launch_command or the process argv.
The launch_command format and startup_time keys are read from the real 0.5.23 wheel; the running side comes from
the SGLang double (tools/sglang_double, which answers /server_info as 0.5.23 does) started for real."""
import testpaths
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import zipfile

import pytest
from netutil import free_port

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.server import drift  # noqa: E402

CONFIGURED = ["--model-path", "/models/m", "--tp-size", "8", "--port", "30000", "--config", "/etc/sglang/x/api-key.yaml",
              "--enable-metrics"]


@pytest.mark.parametrize("version", ["0.5.15.post1", "0.5.20", "0.5.23"])
def test_the_real_launch_command_is_the_space_joined_argv_and_startup_time_has_the_phases(version):
    with zipfile.ZipFile(W.wheel_path(version)) as z:
        src = dict((n, z.read(n).decode("utf-8", "replace")) for n in z.namelist()
                   if n in ("sglang/srt/server_args.py", "sglang/srt/entrypoints/http_server.py",
                            "sglang/srt/utils/common.py", "sglang/srt/observability/startup_time.py"))
    args, http = src["sglang/srt/server_args.py"], src["sglang/srt/entrypoints/http_server.py"]
    served = ('"launch_command": server_args.launch_command' in http
              or ('result["launch_command"] = server_args.launch_command' in src.get("sglang/srt/utils/common.py", "")
                  and "build_server_info(server_args" in http))
    assert served == (version != "0.5.15.post1")
    if not served:
        return
    assert '"startup_time": _global_state.tokenizer_manager.startup_time' in http
    # the argv after the --config merge, space-joined (watermark secrets redacted)
    m = re.search(r"_launch_command = (.*)", args)
    assert m and ('" ".join(argv)' in m.group(1) or "redact_watermark_command_line(" in m.group(1))
    assert args.index("merge_config_with_args(argv)") < m.start()
    st = src["sglang/srt/observability/startup_time.py"]
    for key in ("load_weight", "kv_cache_allocation", "scheduler_e2e", "cuda_graph", "tokenizer_e2e"):
        assert '"%s"' % key in st


def test_same_when_only_order_config_and_secrets_differ():
    running = "--enable-metrics --port 30000 --model-path /models/m --tp-size 8 --api-key s3cret".split()
    r = drift.report(CONFIGURED, {"launch_command": " ".join(running)})
    assert r["source"] == "launch_command" and r["drift"]["same"]
    assert r["msg"].startswith("drift: none")
    assert "s3cret" not in json.dumps(r)


def test_a_changed_a_missing_and_an_extra_flag_are_named():
    running = "--model-path /models/m --tp-size 4 --port 30000 --mem-fraction-static 0.8 --api-key k".split()
    r = drift.report(CONFIGURED, {"launch_command": " ".join(running), "startup_time": {
        "load_weight": 61.5, "kv_cache_allocation": 2.0, "scheduler_e2e": 120.25,
        "cuda_graph": {"decode": 30.5, "draft_decode": 9.0}, "tokenizer_e2e": 3.5}})
    d = r["drift"]
    assert d["changed"] == [{"flag": "--tp-size", "configured": "8", "running": "4"}]
    assert d["missing"] == ["--enable-metrics"] and d["extra"] == ["--mem-fraction-static"]
    assert "DRIFT (launch_command): --tp-size 8 -> 4" in r["msg"] and "restart to apply" in r["msg"]
    assert r["phases"] == [("load_weight", 61.5), ("kv_cache_allocation", 2.0), ("cuda_graph.decode", 30.5),
                           ("cuda_graph.draft_decode", 9.0), ("scheduler_e2e", 120.25), ("tokenizer_e2e", 3.5)]
    assert "load_weight 61.5 s" in r["msg"]


def test_process_argv_before_0520_and_equals_form():
    cmdline = b"/opt/sglang/venv/bin/python\0-m\0sglang.launch_server\0--model-path=/models/m\0--tp-size\0008\0" \
              b"--port\00030000\0--enable-metrics\0"
    argv = drift.parse_cmdline(cmdline)
    r = drift.report(CONFIGURED, {"version": "0.5.15.post1"}, argv)
    assert r["source"] == "process argv" and r["drift"]["same"], r
    assert "not reported (SGLang < 0.5.20)" in r["msg"]


def test_unknown_sides():
    assert drift.report(CONFIGURED, None, None)["drift"] is None
    assert "no recorded configuration" in drift.report(None, {"launch_command": "--port 1"})["msg"]


@pytest.fixture(scope="module")
def double_venv(tmp_path_factory):
    venv = str(tmp_path_factory.mktemp("dbl") / "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([sys.executable, os.path.join(testpaths.REPO, "tools", "sglang_double", "install.py"), "--venv",
                    venv, "--version", "0.5.23"], check=True, stdout=subprocess.DEVNULL)
    return venv


def test_against_the_double_started_for_real(double_venv):
    port = free_port()
    argv = ["--model-path", "/models/m", "--host", "127.0.0.1", "--port", str(port), "--tp-size", "2"]
    proc = subprocess.Popen([os.path.join(double_venv, "bin", "python"), "-m", "sglang.launch_server"] + argv,
                            env=dict(os.environ, SGLANG_DOUBLE_PACE="0.1"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        info = None
        for _attempt in range(300):  # polled until it answers; the test asserts on content, not on time
            try:
                info = json.load(urllib.request.urlopen("http://127.0.0.1:%d/server_info" % port, timeout=5))
                break
            except OSError:
                time.sleep(0.1)
        assert info is not None
        with open("/proc/%d/cmdline" % proc.pid, "rb") as f:
            process_argv = drift.parse_cmdline(f.read())
        same = drift.report(argv, info, process_argv)
        assert same["source"] == "launch_command" and same["drift"]["same"], same
        assert [p for p, _s in same["phases"]][:2] == ["load_weight", "kv_cache_allocation"]
        changed = drift.report(argv[:-1] + ["4"], info, process_argv)
        assert changed["drift"]["changed"] == [{"flag": "--tp-size", "configured": "4", "running": "2"}]
        # without launch_command (SGLang < 0.5.20) the process argv says the same
        older = drift.report(argv[:-1] + ["4"], dict(info, launch_command=None), process_argv)
        assert older["source"] == "process argv" and older["drift"] == changed["drift"]
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()
