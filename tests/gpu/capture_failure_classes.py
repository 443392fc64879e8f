# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Produce for real, on one GPU, the failure classes of issue 29 that one GPU can produce, and record them.

    capture_failure_classes.py --models DIR --big DIR --out DIR [--python PY]

Three real SGLang servers (TP 1) run side by side, each recorded as tests/gpu/capture_real_sglang.py records
(server.log byte for byte, timed.jsonl, http.jsonl, result.json), and each watched live by server_ready's Waiter
with the host facts of this machine (waiter.json):

  shm_tiny_tp1      inside a private mount namespace (unshare -m) whose /dev/shm is a 1 MiB tmpfs. TP 1 has no
                    NCCL peers, so whether SGLang touches /dev/shm at all is what this shows. Beside it, in the same
                    kind of namespace, the two ways a full /dev/shm shows itself below SGLang: torch's shared-memory
                    tensor (share_memory_) and a mapped /dev/shm file touched past the space (NCCL's way: SIGBUS).
  sigbus_weights    a single-file checkpoint (a few GiB) truncated to a quarter the moment the scheduler has it
                    mapped (seen in /proc/<pid>/maps): the loader then touches pages past the end of the file.
  frozen_tp1        the scheduler SIGSTOPped when the log says "Init torch distributed begin.": a frozen TP 1
                    start-up; the Waiter (stall_timeout 25 s) must report it stalled without an NCCL remedy.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import capture_real_sglang as cap  # noqa: E402  (its Case, launch and COMMON flags)

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter  # noqa: E402

HOST = {"tp_size": 1, "nnodes": 1, "gpu_count": 1, "compute_caps": ["9.0"], "gpu_names": ["NVIDIA H200"]}
SHM_SIZE = "1m"


def run_quiet(argv, timeout=60):
    t = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        return {"argv": argv, "rc": p.returncode, "stdout": p.stdout[-4000:], "stderr": p.stderr[-4000:],
                "seconds": round(time.monotonic() - t, 2)}
    except Exception as exc:  # noqa: BLE001 - record what happened
        return {"argv": argv, "error": repr(exc)}


def watch(case, params, out_name="waiter.json"):
    """server_ready's Waiter on the live server (its own thread); the verdict goes to CASE/waiter.json."""
    def body():
        log = os.path.join(case.dir, "server.log")
        for _i in range(200):
            if os.path.exists(log):
                break
            time.sleep(0.05)
        p = {"log_path": log, "pid": case.proc.pid, "url": "http://127.0.0.1:%d" % case.port, "timeout": 240,
             "interval": 1.0, "verify_generation": False, "host": HOST, "sglang_version": "0.5.15.post1"}
        p.update(params)
        try:
            r = Waiter(p).run()
        except Exception as exc:  # noqa: BLE001
            r = {"error": repr(exc)}
        r.pop("state", None)
        with open(os.path.join(case.dir, out_name), "w") as fh:
            json.dump(r, fh, indent=1, sort_keys=True, default=str)
        case.result["waiter"] = {k: r.get(k) for k in ("reason", "category", "stage", "key_line", "remedy", "msg",
                                                       "elapsed")}
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def descendants(pid):
    return [p for p in (proc_watch.tree(pid) or []) if p != pid]


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def scheduler_pid(pid):
    kids = descendants(pid)
    named = [k for k in kids if "scheduler" in cmdline(k)]
    return (named or kids or [None])[0]


def shm_case(py, out, models, port):
    ns = ["unshare", "-m", "--propagation", "private", "sh", "-c",
          "mount -t tmpfs -o size=%s tmpfs /dev/shm && df -k /dev/shm >&2 && exec \"$@\"" % SHM_SIZE, "sh"]
    argv = ns + [py, "-m", "sglang.launch_server", "--port", str(port)] + cap.COMMON + [
        "--model-path", os.path.join(models, "llama-tiny"), "--mem-fraction-static", "0.2"]
    case = cap.Case("shm_tiny_tp1", out, argv, port).start()
    w = watch(case, {"stall_timeout": 120})
    probes = {
        "torch_share_memory": ns + [py, "-c", "import torch; t = torch.zeros(4 * 2**20); t.share_memory_(); "
                                              "print('shared', t.numel() * 4, 'bytes')"],
        "mmap_past_space": ns + [py, "-c", "import mmap, os; fd = os.open('/dev/shm/nccl-probe', os.O_CREAT | os.O_RDWR); "
                                           "os.ftruncate(fd, 8 << 20); m = mmap.mmap(fd, 8 << 20); "
                                           "m[:] = b'\\1' * (8 << 20); print('touched 8 MiB')"],
        "faulthandler_mmap_past_space": ns + [py, "-X", "faulthandler", "-c",
                                              "import mmap, os; fd = os.open('/dev/shm/nccl-probe', os.O_CREAT | os.O_RDWR); "
                                              "os.ftruncate(fd, 8 << 20); m = mmap.mmap(fd, 8 << 20); "
                                              "m[:] = b'\\1' * (8 << 20)"],
    }
    case.result["probes"] = {k: run_quiet(v) for k, v in probes.items()}
    case.wait_for(lambda: case.ready_at is not None or case.seen("fired up"), 150)
    case.result["served"] = case.ready_at is not None
    case.stop()
    w.join(20)
    case.save()
    return case


def sigbus_case(py, out, big, port):
    model = os.path.join(out, "..", "big-copy")
    if os.path.exists(model):
        shutil.rmtree(model)
    shutil.copytree(big, model)
    weights = os.path.join(model, "model.safetensors")
    size = os.path.getsize(weights)
    argv = [py, "-m", "sglang.launch_server", "--port", str(port)] + cap.COMMON + [
        "--model-path", model, "--mem-fraction-static", "0.3"]
    case = cap.Case("sigbus_weights", out, argv, port).start()
    w = watch(case, {"stall_timeout": 120})
    case.result["weights"] = {"path": weights, "size": size}
    end = time.monotonic() + 150
    real = os.path.realpath(weights)
    while time.monotonic() < end and case.proc.poll() is None:
        holders = []
        for pid in descendants(case.proc.pid):
            try:
                with open("/proc/%d/maps" % pid) as fh:
                    if real in fh.read():
                        holders.append(pid)
            except OSError:
                pass
        if holders:
            os.truncate(weights, size // 4)
            case.result["truncated"] = {"t": case.t(), "mapped_by": holders, "to": size // 4}
            print("[sigbus_weights] truncated to %d bytes at %.2fs, mapped by %s" % (size // 4, case.t(), holders),
                  flush=True)
            break
        time.sleep(0.005)
    case.wait_for(lambda: case.proc.poll() is not None, 120)
    time.sleep(2)
    case.stop()
    w.join(30)
    case.save()
    return case


def frozen_case(py, out, models, port):
    argv = [py, "-m", "sglang.launch_server", "--port", str(port)] + cap.COMMON + [
        "--model-path", os.path.join(models, "llama-tiny"), "--mem-fraction-static", "0.2"]
    case = cap.Case("frozen_tp1", out, argv, port).start()
    w = watch(case, {"stall_timeout": 25})
    if case.wait_for(lambda: case.seen("Init torch distributed begin"), 120):
        sched = scheduler_pid(case.proc.pid)
        if sched:
            os.kill(sched, signal.SIGSTOP)
            case.result["stopped"] = {"pid": sched, "t": case.t(), "cmdline": cmdline(sched)[:200]}
            print("[frozen_tp1] SIGSTOP %d (%s) at %.2fs" % (sched, cmdline(sched)[:60], case.t()), flush=True)
    w.join(90)
    case.stop(signal.SIGKILL, grace=10)
    case.save()
    return case


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--big", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jobs = [threading.Thread(target=f, args=args, daemon=True) for f, args in (
        (shm_case, (a.python, a.out, a.models, 31100)),
        (sigbus_case, (a.python, a.out, a.big, 31200)),
        (frozen_case, (a.python, a.out, a.models, 31300)))]
    for j in jobs:
        j.start()
    for j in jobs:
        j.join(300)
    for c in cap.ALL:
        if c.proc and c.proc.poll() is None:
            c.stop(signal.SIGKILL, grace=5)
        c.save()
        print("%s: exit %s at %ss; waiter %s" % (c.name, c.result.get("exit_code"), c.result.get("exit_t"),
                                                 json.dumps(c.result.get("waiter"))[:600]), flush=True)


if __name__ == "__main__":
    main()
