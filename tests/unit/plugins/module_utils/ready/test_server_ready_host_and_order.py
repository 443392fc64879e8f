# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_ready (issue 29): a stall's remedy fits the host (TP 1 on one GPU gets no NCCL remedy, a stopped process
is named), the host option is checked, and a log pasted newest-first gets the verdict of the ordered one."""
import testpaths
import os
import signal
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import BadInput, Waiter
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import order_of

FIX = os.path.join(testpaths.REPO, "tests", "fixtures", "sglang_logs")
DIST_INIT = ("[2026-01-01 00:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=%d, nnodes=1)\n"
             "[2026-01-01 00:00:30 TP0] Init torch distributed begin.\n")
ONE_GPU = {"tp_size": 1, "nnodes": 1, "gpu_count": 1, "compute_caps": ["9.0"], "gpu_names": ["NVIDIA H200"]}
PCIE = {"tp_size": 2, "nnodes": 1, "gpu_count": 8, "compute_caps": ["12.0"], "pcie_only": True, "all_nvlink": False,
        "gpu_names": ["NVIDIA RTX PRO 6000 Blackwell Server Edition"]}


def params(log, pid, **kw):
    p = {"log_path": str(log), "pid": pid, "url": "http://127.0.0.1:9", "timeout": 60, "stall_timeout": 1.0,
         "interval": 0.1, "tick": 0.02, "verify_generation": False}
    p.update(kw)
    return p


@pytest.mark.parametrize("host", [ONE_GPU, {}])
def test_frozen_at_dist_init_on_tp1_gets_no_nccl_remedy(tmp_path, sleeper, host):
    # the log's own server_args says TP 1 even when the host option is not given
    log = tmp_path / "server.log"
    log.write_text(DIST_INIT % 1)
    r = Waiter(params(log, sleeper.pid, host=host)).run()
    assert r["reason"] == "stalled" and r["stage"] == "dist_init", r["msg"]
    assert r["category"] != "nccl" and "NCCL_P2P_DISABLE" not in r["remedy"] and "no peer" in r["remedy"], r["msg"]


def test_frozen_at_dist_init_with_peers_on_pcie_gets_the_fabric_remedies(tmp_path, sleeper):
    log = tmp_path / "server.log"
    log.write_text(DIST_INIT % 2)
    r = Waiter(params(log, sleeper.pid, host=PCIE)).run()
    assert r["reason"] == "stalled" and r["category"] == "nccl", r["msg"]
    assert "NCCL_P2P_DISABLE=1" in r["remedy"] and "ACS" in r["remedy"], r["remedy"]


def test_a_stopped_server_process_is_named(tmp_path, sleeper):
    log = tmp_path / "server.log"
    log.write_text(DIST_INIT % 1)
    os.kill(sleeper.pid, signal.SIGSTOP)
    try:
        r = Waiter(params(log, sleeper.pid, host=ONE_GPU)).run()
    finally:
        os.kill(sleeper.pid, signal.SIGCONT)
    assert r["reason"] == "stalled" and str(sleeper.pid) in r["remedy"] and "stopped" in r["remedy"], r["msg"]


def test_a_stopped_child_is_a_stall_while_its_parent_spins(tmp_path):
    # Real 0.5.15.post1 on the H200 (docs/evidence/real-sglang-h200/failure-classes/): the scheduler SIGSTOPped at
    # dist_init, the top process kept burning CPU waiting for it, and the waiter saw "progress" for 90 s.
    spin = ("import subprocess, sys; c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
            "print(c.pid, flush=True)\nwhile True: pass")
    parent = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    log = tmp_path / "server.log"
    log.write_text(DIST_INIT % 1)
    os.kill(child, signal.SIGSTOP)
    try:
        r = Waiter(params(log, parent.pid, host=ONE_GPU, stall_timeout=2.0, timeout=30)).run()
    finally:
        os.kill(child, signal.SIGKILL)
        parent.kill()
        parent.wait()
    assert r["reason"] == "stalled" and "stopped (state T)" in r["msg"], r["msg"]
    assert str(child) in r["remedy"] and "NCCL" not in r["remedy"], r["remedy"]


@pytest.mark.parametrize("host, words", [
    ("x", "host must be a dict"),
    ({"tp": 2}, "unknown key 'tp'"),
    ({"tp_size": 0}, "host.tp_size must be a whole number"),
    ({"compute_caps": "12.0"}, "host.compute_caps must be a list"),
    ({"pcie_only": "yes"}, "host.pcie_only must be true or false"),
])
def test_bad_host_option(host, words):
    with pytest.raises(BadInput, match=words.replace(".", r"\.").replace("(", r"\(")):
        Waiter({"url": "http://127.0.0.1:9", "host": host})


def replay_text(tmp_path, text, name):
    log = tmp_path / (name + ".log")
    log.write_text("")
    code = "import sys\nopen(sys.argv[1], 'a').write(sys.stdin.read())\nsys.exit(1)"
    p = subprocess.Popen([sys.executable, "-c", code, str(log)], stdin=subprocess.PIPE, text=True)
    p.communicate(text)
    return Waiter(params(log, p.pid, stall_timeout=30)).run()


@pytest.mark.parametrize("fixture", ["public/oom_cuda_graph_deepep_5285.log", "h200/oom_context.log",
                                     "public/arch_capture_failed_no_kernel_image_sm75_748.log"])
def test_a_newest_first_paste_gets_the_ordered_verdict(tmp_path, fixture):
    with open(os.path.join(FIX, fixture), encoding="utf-8") as f:
        lines = [x for x in f.read().replace("\r", "\n").split("\n") if x.strip()]
    assert order_of(lines[::-1]) == "reversed"
    ordered = replay_text(tmp_path, "\n".join(lines) + "\n", "ordered")
    newest_first = replay_text(tmp_path, "\n".join(reversed(lines)) + "\n", "reversed")
    assert ordered["reason"] == newest_first["reason"] == "crashed"
    assert (newest_first["category"], newest_first["key_line"]) == (ordered["category"], ordered["key_line"])


def test_real_h200_start_up_frozen_at_dist_init(tmp_path, sleeper):
    # The real H200 capture (SGLang 0.5.15.post1, TP 1, one GPU) up to "Init torch distributed begin.": all a frozen
    # scheduler leaves in the log. The H200 run reported this stall as nccl with an NCCL/PCIe remedy.
    with open(os.path.join(FIX, "h200", "base.log"), encoding="utf-8") as f:
        text = f.read()
    cut = text.index("Init torch distributed begin.")
    log = tmp_path / "server.log"
    log.write_text(text[:text.index("\n", cut) + 1])
    r = Waiter(params(log, sleeper.pid, stall_timeout=1.5)).run()
    assert r["reason"] == "stalled" and r["stage"] == "dist_init", r["msg"]
    assert r["category"] != "nccl" and "NCCL_P2P_DISABLE" not in r["remedy"] and "no peer" in r["remedy"], r["msg"]
