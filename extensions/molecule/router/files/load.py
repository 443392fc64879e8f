# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Background load for the router scenario (standard library only).

N clients stream chat completions through the router, one after another, until STOP_FILE exists or the
deadline passes. A request counts as ok when it answers 200 and streams exactly max_tokens content chunks and
[DONE]; anything else (status, cut stream, connection error) is a failure. The summary is rewritten to OUT
about every second (so a caller can see the load is running) and a last time with "finished": true.
"""
import argparse
import http.client
import json
import os
import threading
import time


def one_request(host, port, max_tokens, timeout):
    """Return None when the request succeeded, else a short error text."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        body = json.dumps({"model": "x", "stream": True, "max_tokens": max_tokens,
                           "messages": [{"role": "user", "content": "hello through the router"}]})
        conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read().decode("utf-8", "replace")
        if resp.status != 200:
            return "HTTP %d: %s" % (resp.status, data[:200])
        tokens, done = 0, False
        for line in data.splitlines():
            if not line.startswith("data: "):
                continue
            payload = line[len("data: "):]
            if payload.strip() == "[DONE]":
                done = True
                continue
            for choice in json.loads(payload).get("choices", []):
                if (choice.get("delta") or {}).get("content"):
                    tokens += 1
        if not done:
            return "stream ended without [DONE] after %d tokens" % tokens
        if tokens != max_tokens:
            return "streamed %d of %d tokens" % (tokens, max_tokens)
        return None
    except Exception as exc:  # every failure counts, whatever it is
        return "%s: %s" % (type(exc).__name__, exc)
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--deadline", type=float, default=240, help="seconds; stop even without the stop file")
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    lock = threading.Lock()
    results = []  # [start, end, error or None]
    started = time.time()
    end_by = started + args.deadline

    def running():
        return not os.path.exists(args.stop_file) and time.time() < end_by

    def client():
        while running():
            t0 = time.time()
            err = one_request(args.host, args.port, args.max_tokens, args.timeout)
            with lock:
                results.append([t0, time.time(), err])
            if err:
                time.sleep(0.2)

    def write(finished):
        with lock:
            ok = [r for r in results if r[2] is None]
            bad = [r for r in results if r[2] is not None]
            summary = {"finished": finished, "started": started, "now": time.time(), "clients": args.clients,
                       "ok": len(ok), "failed": len(bad), "ok_ends": [r[1] for r in ok],
                       "errors": [{"start": r[0], "end": r[1], "error": r[2]} for r in bad[:20]],
                       "deadline_hit": time.time() >= end_by}
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(summary, f)
        os.replace(tmp, args.out)

    threads = [threading.Thread(target=client, daemon=True) for _client in range(args.clients)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        write(False)
        time.sleep(1)
    write(True)


if __name__ == "__main__":
    main()
