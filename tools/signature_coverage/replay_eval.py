#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Score server_ready on a corpus of real logs replayed as live processes, and time its verdicts.

  replay_eval.py [--set public|h200|batch7] [--subset batch-7] [--modes normal,early,loaded,noisy] [--verbose]

Modes (the same as tests/unit/plugins/module_utils/ready/test_server_ready_replay.py):
  normal - the log written in pieces while the waiter polls (pid watched), then the writer exits 1;
  early  - written at once by roles/server's real supervisor, gone before the wait begins (pid_file);
  loaded - as normal, with every core kept busy by spinning processes;
  noisy  - only entries marked ``noisy_ready``: their lines written into a real start-up (the H200
           ``base.log`` capture, up to its "fired up" line) by a process that stays alive, a local
           HTTP stand-in answering /health and /generate: the verdict must be ready, with warnings.

A replay counts when the category is right and the key line holds the expected key (or, in the
"fair" figure, one of the label's declared alternatives).  "detect" is the time from the log's last
byte (its mtime: normal, loaded, noisy) or from the wait's start (early) to the verdict, in seconds.
"""
from __future__ import print_function

import argparse
import json
import os
import subprocess
import sys
import tempfile
import socket
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.waiter import Waiter  # noqa: E402

FIX = os.path.join(REPO, "tests", "fixtures", "sglang_logs")
SUPERVISE = os.path.join(REPO, "plugins", "module_utils", "server", "supervise.py")
BASE = os.path.join(FIX, "h200", "base.log")

WRITER = r"""
import sys, threading, time
src, dst, pieces, pause, rc, stamp = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
if len(sys.argv) > 7:  # serve like a ready SGLang from this very process (the waiter trusts only its own tree's port)
    from http.server import BaseHTTPRequestHandler, HTTPServer
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'{"text": "x", "meta_info": {}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_POST = do_GET
        def log_message(self, *a):
            pass
    threading.Thread(target=HTTPServer(("127.0.0.1", int(sys.argv[7])), H).serve_forever, daemon=True).start()
data = open(src, 'rb').read()
step = max(1, len(data) // pieces + 1)
with open(dst, 'ab', buffering=0) as out:
    for i in range(0, len(data), step):
        out.write(data[i:i + step])
        time.sleep(pause)
open(stamp, 'w').write(repr(time.time()))
if rc >= 0:
    sys.exit(rc)
time.sleep(120)
"""


def params(log, **kw):
    p = {"log_path": log, "url": "http://127.0.0.1:9", "timeout": 120, "stall_timeout": 60,
         "interval": 0.2, "tick": 0.02, "verify_generation": False}
    p.update(kw)
    return p


def replay_live(src, tmp, rc=1, port=None, **kw):
    log, stamp = os.path.join(tmp, "server.log"), os.path.join(tmp, "written")
    open(log, "w").close()
    p = subprocess.Popen([sys.executable, "-c", WRITER, src, log, "6", "0.01", str(rc), stamp]
                         + ([str(port)] if port else []))
    try:
        r = Waiter(params(log, pid=p.pid, **kw)).run()
        done = time.time()
    finally:
        p.kill()
        p.wait()
    # from the log's last byte (its mtime) to the verdict
    return r, max(0.0, done - os.stat(log).st_mtime)


def replay_early(src, tmp):
    log, pid_file, stamp = os.path.join(tmp, "server.log"), os.path.join(tmp, "server.pid"), os.path.join(tmp, "w")
    subprocess.run([sys.executable, SUPERVISE, "start", "--pid-file", pid_file, "--log", log, "--",
                    sys.executable, "-c", WRITER, src, log, "1", "0", "1", stamp],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _i in range(2000):
        try:
            with open(pid_file + ".status") as f:
                if json.load(f).get("returncode") is not None:
                    break
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    t0 = time.time()
    r = Waiter(params(log, pid_file=pid_file)).run()
    return r, time.time() - t0


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def noisy_source(src, tmp):
    """The H200 start-up up to and including 'fired up', with the noisy lines after its KV-cache line."""
    with open(BASE, encoding="utf-8") as f:
        base = f.read().splitlines(True)
    fired = next(i for i, line in enumerate(base) if "fired up" in line)
    kv = next(i for i, line in enumerate(base) if "max_total_num_tokens=" in line)
    with open(src, encoding="utf-8") as f:
        noise = f.read().splitlines(True)
    out = os.path.join(tmp, "noisy.src")
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(base[:kv + 1] + noise + base[kv + 1:fired + 1])
    return out


def replay_noisy(src, tmp):
    port = free_port()
    return replay_live(noisy_source(src, tmp), tmp, rc=-1, port=port, url="http://127.0.0.1:%d" % port,
                       verify_generation=True, health_path="/health")


def judge(exp, r):
    """'ok', 'alt' (a declared alternative) or 'MISS'."""
    if not r.get("failed") or r.get("category") != exp["category"]:
        return "MISS"
    if exp["category"] == "unknown":
        return "ok"
    line = r.get("key_line") or ""
    if exp.get("key") and exp["key"] in line:
        return "ok"
    if any(a["category"] == r["category"] and a["key"] in line for a in exp.get("alternatives") or ()):
        return "alt"
    return "MISS"


def corpus(which, subset=None):
    path = os.path.join(FIX, which, "expected.json")
    with open(path, encoding="utf-8") as f:
        exp = json.load(f)
    return [(os.path.join(FIX, which, n), n, e) for n, e in sorted(exp.items())
            if e.get("replay", True) and (subset is None or e.get("heldout") == subset)]


def run(which, subset, modes, verbose, out=sys.stdout):
    cases = corpus(which, subset)
    spinners = []
    summary = {}
    for mode in modes:
        if mode == "loaded":
            spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        for _i in range((os.cpu_count() or 2) + 1)]
        try:
            tally, times = {"ok": 0, "alt": 0, "MISS": 0}, []
            picked = [c for c in cases if mode != "noisy" or c[2].get("noisy_ready")]
            for src, name, exp in picked:
                with tempfile.TemporaryDirectory() as tmp:
                    if mode == "early":
                        r, t = replay_early(src, tmp)
                    elif mode == "noisy":
                        r, t = replay_noisy(src, tmp)
                    else:
                        r, t = replay_live(src, tmp)
                if mode == "noisy":
                    mark = "ok" if not r.get("failed") and r.get("log_warnings", {}).get("count", 0) > 0 else "MISS"
                    got = "ready" if not r.get("failed") else "%s/%s" % (r.get("reason"), r.get("category"))
                    line = "warnings=%s" % (r.get("log_warnings") or {}).get("count")
                else:
                    mark = judge(exp, r)
                    got, line = r.get("category"), (r.get("key_line") or "")[:90]
                tally[mark] += 1
                if t is not None:
                    times.append(t)
                if verbose or mark != "ok":
                    print("%-6s %-4s %-58s want %-19s got %-19s %5.2fs %s" % (
                        mode, mark, name[:58], "ready" if mode == "noisy" else exp["category"], got, t or -1, line),
                        file=out)
            n = len(picked) or 1
            times.sort()
            med = times[len(times) // 2] if times else float("nan")
            summary[mode] = dict(n=len(picked), strict=tally["ok"], fair=tally["ok"] + tally["alt"],
                                 detect_median=round(med, 2), detect_max=round(max(times), 2) if times else None)
            print("%s %s%s: %d replays, right %d (%.0f%%), with the fair alternatives %d; detection to verdict "
                  "median %.2f s, max %.2f s" % (
                      which, mode, " (%s)" % subset if subset else "", len(picked), tally["ok"],
                      100.0 * tally["ok"] / n, tally["ok"] + tally["alt"], med, max(times) if times else -1),
                  file=out)
        finally:
            for s in spinners:
                s.kill()
                s.wait()
            spinners = []
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="batch7")
    ap.add_argument("--subset")
    ap.add_argument("--modes", default="normal,early,loaded,noisy")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    run(a.set, a.subset, a.modes.split(","), a.verbose)


if __name__ == "__main__":
    main()
