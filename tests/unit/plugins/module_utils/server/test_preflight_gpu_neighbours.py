# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's GPU-process check counts only the instance's own GPUs (CUDA_VISIBLE_DEVICES), and a process of
another instance of this collection on them is a neighbour (a warning), not a stranger (a refusal). Found on the
lent H100: a second instance beside the first was refused for the first's scheduler; on an 8-GPU box, an instance
on GPUs 4-7 was refused for one on GPUs 0-3. Real processes with real environments stand in for SGLang's."""
import os
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import orphans
from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight as pf

GPUS = "0, GPU-aaaa, 00000000:3B:00.0\n1, GPU-bbbb, 00000000:86:00.0\n"


@pytest.fixture
def process():
    """A real process, its environment marked as an instance's (or not)."""
    started = []

    def start(instance=None):
        env = dict(os.environ)
        env.pop(orphans.MARKER, None)
        if instance is not None:
            env[orphans.MARKER] = instance
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], env=env)
        started.append(p)
        return p.pid
    yield start
    for p in started:
        p.kill()
        p.wait()


def smi(apps, gpus=GPUS, asked=None):
    def runner(cmd):
        if asked is not None:
            asked.append(cmd)
        return gpus if cmd[1].startswith("--query-gpu=") else apps
    return runner


def test_another_instance_on_the_gpus_is_a_warning_a_stranger_a_refusal(process):
    pid = process("smoke-a")
    warnings = []
    c = pf.check_gpu_procs(runner=smi("%d, sglang::scheduler, 9082\n" % pid), warnings=warnings, instance="smoke-b")
    assert c == {"name": "gpu_processes", "ok": True, "msg": "no foreign processes on the GPUs"}
    assert warnings == ["the instance shares its GPUs with instance smoke-a (pid %d, 9082 MiB): their memory fractions "
                        "(mem-fraction-static) must fit together, or give each its own GPUs "
                        "(server_cuda_visible_devices)" % pid]
    # the same process, where the caller names no instance: counted as before
    assert pf.check_gpu_procs(runner=smi("%d, sglang::scheduler, 9082\n" % pid))["msg"] == (
        "other processes hold GPU memory: %d sglang::scheduler (9082 MiB); stop them before starting the server" % pid)


def test_a_process_left_by_this_instance_or_unmarked_is_refused(process):
    left, stranger = process("smoke-b"), process()
    for pid in (left, stranger):
        warnings = []
        c = pf.check_gpu_procs(runner=smi("%d, python3, 500\n" % pid), warnings=warnings, instance="smoke-b")
        assert c["ok"] is False and c["msg"] == ("other processes hold GPU memory: %d python3 (500 MiB); stop them "
                                                 "before starting the server" % pid)
        assert warnings == []
    assert orphans.instance_of(left) == "smoke-b" and orphans.instance_of(stranger) is None


@pytest.mark.parametrize("cvd", ["1", "GPU-bbbb", " 1 ,", "GPU-bbbb,1"])
def test_only_the_instances_gpus_count(process, cvd):
    pid = process()
    asked = []
    on_gpu0 = "%d, python3, 500, 00000000:3B:00.0\n" % pid
    on_gpu1 = "%d, python3, 500, 00000000:86:00.0\n" % pid
    assert pf.check_gpu_procs(runner=smi(on_gpu0, asked=asked), cvd=cvd)["ok"] is True
    assert asked == [["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader,nounits"],
                     ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory,gpu_bus_id",
                      "--format=csv,noheader,nounits"]]
    assert pf.check_gpu_procs(runner=smi(on_gpu1), cvd=cvd)["ok"] is False
    # a process whose GPU nvidia-smi does not name is counted (fails closed)
    assert pf.check_gpu_procs(runner=smi("%d, python3, 500, [N/A]\n" % pid), cvd=cvd)["ok"] is False


@pytest.mark.parametrize("cvd, gpus", [
    (None, GPUS), ("", GPUS), (",", GPUS),      # not set, or naming nothing: every GPU
    ("7", GPUS), ("MIG-1234", GPUS), ("1,7", GPUS),   # a GPU nvidia-smi does not list: every GPU
    ("1", None), ("1", "x, y\n"), ("1", "0, GPU-aaaa, 00000000:3B:00.0\n0, GPU-bbbb, 00000000:86:00.0\n"),
    ("1", "0, GPU-aaaa, 00000000:3B:00.0\n1, GPU-bbbb, [N/A]\n"),   # no bus id to tell the GPUs apart
])
def test_where_the_instances_gpus_are_not_known_every_gpu_counts(process, cvd, gpus):
    pid = process()
    apps = "%d, python3, 500, 00000000:3B:00.0\n" % pid
    plain = "%d, python3, 500\n" % pid
    runner = smi(apps, gpus)
    assert pf._instance_gpus(cvd, runner) is None
    assert pf.check_gpu_procs(runner=smi(plain, gpus), cvd=cvd)["ok"] is False


def test_instance_gpus_maps_indexes_and_uuids_to_bus_keys():
    assert pf._instance_gpus("0,GPU-bbbb", smi("", GPUS)) == {"0000:3b:00", "0000:86:00"}
    assert pf._instance_gpus("1", smi("", GPUS)) == {"0000:86:00"}


def test_run_all_hands_the_instance_and_its_gpus_to_the_check(process, tmp_path):
    pid = process("smoke-a")
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")

    def run(argv, data=None, environ_update=None, timeout=None):
        if argv[1].startswith("--query-gpu="):
            return 0, GPUS, ""
        return 0, "%d, sglang::scheduler, 9082, 00000000:3B:00.0\n" % pid, ""
    params = {"model_path": str(model), "gpu_count": 1,
              "env": {orphans.MARKER: "smoke-b", "CUDA_VISIBLE_DEVICES": "0"}}
    checks, _version, warnings = pf.run_all(params, run)
    assert dict((c["name"], c["ok"]) for c in checks)["gpu_processes"] is True
    assert [w for w in warnings if "shares its GPUs" in w] and "instance smoke-a (pid %d" % pid in warnings[-1]
    # the neighbour on GPU 0 is none of an instance on GPU 1's business: no warning
    checks, _version, warnings = pf.run_all(dict(params, env={orphans.MARKER: "smoke-b", "CUDA_VISIBLE_DEVICES": "1"}), run)
    assert dict((c["name"], c["ok"]) for c in checks)["gpu_processes"] is True and warnings == []
    # no marker in the env: the neighbour is a stranger
    checks, _version, warnings = pf.run_all(dict(params, env={"CUDA_VISIBLE_DEVICES": "0"}), run)
    assert dict((c["name"], c["ok"]) for c in checks)["gpu_processes"] is False
