# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a killed worker stays in the router's pool (standard library only).

SIGKILLs every process of the worker's systemd unit on this host (no graceful exit: the port just closes), then
polls the router's GET /workers every 0.1 s until that worker is no longer listed as healthy. While waiting it
also sends one chat completion every 0.5 s through the router and counts those that failed or took a retry
(a latency over 1 s). Prints one JSON line: {"seconds", "status", "requests", "failed", "slow"}.
"""
import argparse
import http.client
import json
import subprocess
import time
from urllib.parse import urlsplit


def workers(router):
    u = urlsplit(router)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    try:
        conn.request("GET", "/workers")
        return json.loads(conn.getresponse().read().decode("utf-8"))["workers"]
    finally:
        conn.close()


def chat(router):
    u = urlsplit(router)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    t0 = time.monotonic()
    try:
        conn.request("POST", "/v1/chat/completions", headers={"Content-Type": "application/json"},
                     body=json.dumps({"model": "x", "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}))
        resp = conn.getresponse()
        resp.read()
        return resp.status == 200, time.monotonic() - t0
    except OSError:
        return False, time.monotonic() - t0
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--router", required=True)
    ap.add_argument("--worker-url", required=True)
    ap.add_argument("--unit", required=True)
    ap.add_argument("--timeout", type=float, default=400)
    a = ap.parse_args()
    url = a.worker_url.rstrip("/")
    subprocess.run(["systemctl", "kill", "--signal=SIGKILL", a.unit], check=True)
    t0 = time.monotonic()
    status, requests, failed, slow, next_chat = "timeout", 0, 0, 0, t0
    while time.monotonic() - t0 < a.timeout:
        mine = [w for w in workers(a.router) if w.get("url", "").rstrip("/") == url]
        if not mine or not mine[0].get("is_healthy"):
            status = mine[0].get("status", "unhealthy") if mine else "removed"
            break
        if time.monotonic() >= next_chat:
            ok, took = chat(a.router)
            requests += 1
            failed += 0 if ok else 1
            slow += 1 if took > 1.0 else 0
            next_chat = time.monotonic() + 0.5
        time.sleep(0.1)
    print(json.dumps({"seconds": round(time.monotonic() - t0, 2), "status": status, "requests": requests,
                      "failed": failed, "slow": slow}))


if __name__ == "__main__":
    main()
