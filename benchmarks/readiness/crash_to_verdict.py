#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wall-clock time from a crash to server_ready's verdict, idle and with every core saturated.

A real process replays a real SGLang crash log (tests/fixtures/sglang_logs/h200, SGLang 0.5.15.post1 on an H200)
and records the instant it exits (or, for the lingering port case, the instant it wrote the fatal line); the waiter
(module_utils/ready/waiter.Waiter, default tick and interval) runs in its own process watching that pid and the log.
Each case runs --runs times idle (the baseline, same run) and again with (cores + 1) spinning processes.
Prints median and max latency per case and the loaded/idle ratio, and whether every verdict had the right category.

Cases:
  exit   - the server writes its crash log and exits (oom_context, jit_build_fail, bad_flag, missing_model)
  gone   - same, but already dead before the wait starts (time counted from the waiter's start)
  linger - port_in_use: the fatal bind line is written and the process stays alive (fatal_grace applies)

Usage: python3 benchmarks/readiness/crash_to_verdict.py [--runs 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(REPO, "tests", "fixtures", "sglang_logs", "h200")

WRITER = r"""
import os, sys, time
src, dst, mark, linger = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
with open(src, 'rb') as f:
    data = f.read()
with open(dst, 'ab', buffering=0) as out:
    for i in range(0, len(data), 4096):
        out.write(data[i:i + 4096])
        time.sleep(0.002)
with open(mark, 'w') as m:
    m.write(repr(time.time()))
if linger:
    time.sleep(linger)
sys.exit(1)
"""

WAITER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter
p = json.loads(sys.argv[2])
r = Waiter(p).run()
print(json.dumps({"t": time.time(), "reason": r.get("reason"), "category": r.get("category")}))
"""

CASES = [("exit", "oom_context.log", "oom_kv"), ("exit", "jit_build_fail.log", "jit_build"),
         ("exit", "bad_flag.log", "bad_args"), ("exit", "missing_model.log", "model_not_found"),
         ("gone", "oom_context.log", "oom_kv"), ("linger", "port_in_use.log", "port_in_use")]


def one(kind, log_name, tmp):
    log = os.path.join(tmp, "server.log")
    mark = os.path.join(tmp, "mark")
    for path in (log, mark):
        if os.path.exists(path):
            os.unlink(path)
    open(log, "w").close()
    w = subprocess.Popen([sys.executable, "-c", WRITER, os.path.join(FIX, log_name), log, mark,
                          "30" if kind == "linger" else "0"])
    if kind == "gone":
        w.wait()
    params = {"log_path": log, "pid": w.pid, "url": "http://127.0.0.1:9", "timeout": 120}
    t_start = time.time()
    out = subprocess.run([sys.executable, "-c", WAITER, os.path.join(REPO, "collections"), json.dumps(params)],
                         stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
    w.kill()
    w.wait()
    res = json.loads(out.strip().splitlines()[-1])
    with open(mark) as f:
        t_event = float(f.read())
    if kind == "gone":
        t_event = max(t_event, t_start)
    return res["t"] - t_event, res


def run_all(runs, tmp):
    out = {}
    for kind, name, want in CASES:
        lat, ok = [], True
        for _i in range(runs):
            d, res = one(kind, name, tmp)
            lat.append(d)
            ok = ok and res["category"] == want and res["reason"] == "crashed"
        out[(kind, name)] = (lat, ok)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    n_spin = (os.cpu_count() or 2) + 1
    with tempfile.TemporaryDirectory() as tmp:
        idle = run_all(a.runs, tmp)
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _i in range(n_spin)]
        try:
            time.sleep(1.0)
            busy = run_all(a.runs, tmp)
        finally:
            for s in spinners:
                s.kill()
                s.wait()
    print("crash -> verdict, seconds (median / max of %d runs); busy = %d spinning processes on %d cores"
          % (a.runs, n_spin, os.cpu_count() or 0))
    print("%-8s %-22s %-18s %-18s %-7s %s" % ("case", "log", "idle", "busy", "ratio", "right category"))
    for key in idle:
        li, oki = idle[key]
        lb, okb = busy[key]
        mi, mb = statistics.median(li), statistics.median(lb)
        print("%-8s %-22s %5.2f / %5.2f     %5.2f / %5.2f     %5.1fx  %s" % (
            key[0], key[1], mi, max(li), mb, max(lb), mb / mi if mi > 0 else float("nan"),
            "yes" if oki and okb else "NO"))


if __name__ == "__main__":
    main()
