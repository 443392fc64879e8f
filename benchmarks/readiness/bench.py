#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness verdict latency: llmserve.sglang.server_ready's waiter vs the seed loop.

Runs the SGLang double (tools/sglang_double) in ready, crash and hang scenarios
and, in the same run and against the same server, both
  * the waiter (module_utils/ready/waiter.py) in its own process, and
  * a faithful copy of the seed loop (curl /health, sleep 10, tail -3 every 20 rounds, TIMEOUT after 90 rounds),
then compares each verdict's wall-clock instant with the instant the double
recorded (SGLANG_DOUBLE_EVENTS: ready / exit / hang_start).

The seed loop runs unscaled for `ready`.  For crash and hang its only verdict is
TIMEOUT after 90 rounds (900 s); it runs with its sleep scaled by --seed-scale
(default 0.01: 0.1 s sleeps) and its latency is reported scaled back (x 1/scale).

Also measures the waiter's CPU share and the per-poll cost on a 1 MiB and a 1 GiB (sparse) log.

Usage: python3 benchmarks/readiness/bench.py [--runs 5] [--pace 1.0] [--stall 5]
"""
import argparse
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))
DOUBLE = os.environ.get("SGLANG_DOUBLE_PATH") or os.path.join(REPO, "tools", "sglang_double")

SEED = r"""
for i in $(seq 1 90); do
  code=$(curl -s -o /dev/null -w '%{http_code}' $URL/health 2>/dev/null)
  if [ "$code" = "200" ]; then
    echo "Server ready after ~$((i*10))s"
    exit 0
  fi
  if [ $((i % 20)) -eq 0 ]; then
    echo "[$((i*10))s] Checking log..."
    tail -3 $LOG 2>/dev/null
  fi
  sleep $SLEEP
done
echo "TIMEOUT"
"""

WAITER = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter
p = json.loads(sys.argv[2])
w0 = time.time()
ru0 = resource.getrusage(resource.RUSAGE_SELF)
r = Waiter(p).run()
t = time.time()
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"t": t, "wall": t - w0, "cpu": ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime, "failed": r["failed"],
                  "reason": r.get("reason"), "category": r.get("category"), "stage": r["stage"],
                  "polls": r["polls"], "health_calls": r["health_calls"]}))
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def events(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                name = e.get("event") or e.get("type") or e.get("name") or e.get("kind")
                out.setdefault(name, e["t"])
    except (OSError, ValueError):
        pass
    return out


def one(scenario, pace, stall, seed_scale, tmp):
    port = free_port()
    log = os.path.join(tmp, "%s-%d.log" % (scenario.replace(":", "_"), port))
    ev = log + ".events.jsonl"
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_SCENARIO=scenario, SGLANG_DOUBLE_PACE=str(pace),
               SGLANG_DOUBLE_EVENTS=ev)
    fh = open(log, "wb")
    srv = subprocess.Popen([sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/bench",
                            "--host", "127.0.0.1", "--port", str(port)],
                           stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    params = {"url": "http://127.0.0.1:%d" % port, "log_path": log, "pid": srv.pid,
              "timeout": 900, "stall_timeout": stall, "interval": 1}
    scale = 1.0 if scenario == "ready" else seed_scale
    seed_env = dict(os.environ, URL="http://127.0.0.1:%d" % port, LOG=log, SLEEP=str(10 * scale))
    waiter = subprocess.Popen([sys.executable, "-c", WAITER, os.path.join(REPO, "collections"), json.dumps(params)],
                              stdout=subprocess.PIPE)
    seed_start = time.time()
    seed = subprocess.Popen(["bash", "-c", SEED], stdout=subprocess.PIPE, env=seed_env)
    seed_t, seed_verdict = None, None
    for raw in seed.stdout:
        line = raw.decode().strip()
        if line.startswith("Server ready") or line == "TIMEOUT":
            seed_t, seed_verdict = time.time(), line
    seed.wait()
    w = json.loads(waiter.communicate()[0].decode().strip().splitlines()[-1])
    try:
        os.killpg(srv.pid, signal.SIGKILL)
    except OSError:
        pass
    srv.wait()
    fh.close()
    e = events(ev)
    ref = {"ready": e.get("ready"), "crash": e.get("exit"), "hang": e.get("hang_start")}[scenario.split("_")[0].split(":")[0]]
    return {"scenario": scenario, "ref": ref, "waiter_lat": (w["t"] - ref) if ref else None,
            # scaled runs: put the 90 sleeps back at 10 s, keep the real curl/bash overhead
            "seed_lat": ((seed_t - seed_start) - 90 * 10 * scale + 900 - (ref - seed_start)
                         if scale != 1.0 else seed_t - ref) if (ref and seed_t) else None, "seed_verdict": seed_verdict,
            "waiter": w}


def pct(vals, q):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return float("nan")
    return vals[min(len(vals) - 1, int(round(q * (len(vals) - 1))))]


def poll_cost(tmp, size, n=2000):
    from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter
    path = os.path.join(tmp, "big-%d.log" % size)
    with open(path, "wb") as f:
        f.truncate(size)  # sparse
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        w = Waiter({"log_path": path, "pid": sleeper.pid, "url": "http://127.0.0.1:9"})
        while w.probe.reader.offset < os.path.getsize(path):
            w.probe.feed_log(0)
        line = b"[2026-01-12 10:31:12 TP0] Decode batch, #running-req: 1, #token: 100, gen throughput (token/s): 50\n"
        total = 0.0
        with open(path, "ab") as f:
            for _ in range(n):
                f.write(line)
                f.flush()
                t = time.perf_counter()
                w.probe.feed_log(1)
                w.probe.alive()
                total += time.perf_counter() - t
        return total / n * 1e6
    finally:
        sleeper.kill()
        sleeper.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pace", type=float, default=1.0)
    ap.add_argument("--stall", type=float, default=5.0)
    ap.add_argument("--seed-scale", type=float, default=0.01)
    ap.add_argument("--scenarios", default="ready,crash_oom_kv,crash_nccl,hang:load_weights")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="readiness-bench-")
    rows = []
    for sc in a.scenarios.split(","):
        res = [one(sc, a.pace, a.stall, a.seed_scale, tmp) for _ in range(a.runs)]
        wl = [r["waiter_lat"] for r in res]
        sl = [r["seed_lat"] for r in res]
        verdicts = sorted(set("%s/%s" % (r["waiter"]["reason"] or "ready", r["waiter"]["category"] or "-") for r in res))
        cpu = sum(r["waiter"]["cpu"] for r in res) / sum(r["waiter"]["wall"] for r in res) * 100
        rows.append((sc, statistics.median([x for x in wl if x is not None] or [float("nan")]), pct(wl, 0.95),
                     statistics.median([x for x in sl if x is not None] or [float("nan")]), pct(sl, 0.95),
                     verdicts, sorted(set(r["seed_verdict"] or "-" for r in res)), cpu))
    print("\n| scenario | waiter median s | waiter p95 s | seed median s | seed p95 s | seed/waiter | waiter verdict |"
          " seed verdict | waiter CPU % of a core |")
    print("|---|---|---|---|---|---|---|---|---|")
    for sc, wm, wp, sm, sp, v, sv, cpu in rows:
        ratio = sm / wm if wm and wm == wm and wm > 0 else float("nan")
        print("| %s | %.2f | %.2f | %.1f | %.1f | %.0fx | %s | %s | %.2f |" % (sc, wm, wp, sm, sp, ratio, ", ".join(v),
                                                                       ", ".join(sv), cpu))
    print("\nper-poll cost (log stat+read of one new line + /proc check):")
    for size in (1 << 20, 1 << 30):
        print("| %s log | %.1f us/poll |" % ("1 MiB" if size == 1 << 20 else "1 GiB", poll_cost(tmp, size)))
    print("\nrusage self (bench process): %.2fs" % resource.getrusage(resource.RUSAGE_SELF).ru_utime)


if __name__ == "__main__":
    main()
