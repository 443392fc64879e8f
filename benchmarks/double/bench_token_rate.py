#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does the SGLang double generate at the rate its model says, in wall-clock time? (Moved here from the unit tests:
a wall-clock bound is a measurement, not an assertion a loaded test machine can keep.)

Starts the double with a rate model (100 tok/s per request, 150 tok/s in total), times one 50-token generation and
three at once, and prints measured against expected with the ratio (1.0 = exactly the model; the HTTP round trip and
the machine's load add to it).

  python3 benchmarks/double/bench_token_rate.py [--tokens 50] [--repeats 3]
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOUBLE = os.path.join(REPO, "tools", "sglang_double")
PERF = {"baseline": {"per_request_tps": 100, "saturation_tps": 150}}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate(url, tokens):
    body = json.dumps({"text": "x", "sampling_params": {"max_new_tokens": tokens}}).encode()
    req = urllib.request.Request(url + "/generate", data=body, headers={"Content-Type": "application/json"})
    t0 = time.time()
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
    return time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    port = free_port()
    events = tempfile.mktemp(suffix=".jsonl")
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.05", SGLANG_DOUBLE_PERF=json.dumps(PERF),
               SGLANG_DOUBLE_EVENTS=events)
    proc = subprocess.Popen([sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/m", "--host",
                             "127.0.0.1", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    url = "http://127.0.0.1:%d" % port
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(url + "/health", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        base = PERF["baseline"]
        single = [generate(url, args.tokens) for _ in range(args.repeats)]
        expected_single = args.tokens / float(base["per_request_tps"])
        concurrent = []
        for _ in range(args.repeats):
            times = []
            threads = [threading.Thread(target=lambda: times.append(generate(url, args.tokens))) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            concurrent.append(max(times))
        expected_three = args.tokens / min(float(base["per_request_tps"]), float(base["saturation_tps"]) / 3)
        for label, got, want in (("1 in flight", statistics.median(single), expected_single),
                                 ("3 in flight", statistics.median(concurrent), expected_three)):
            print("%-12s measured %.3f s, model %.3f s, ratio %.2f" % (label, got, want, got / want))
    finally:
        os.killpg(proc.pid, 15)
        proc.wait()
        if os.path.exists(events):
            os.unlink(events)


if __name__ == "__main__":
    main()
