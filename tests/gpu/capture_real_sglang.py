# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start real SGLang on a real GPU, in the ways it serves and the ways it fails, and record what it does.

    capture_real_sglang.py --models DIR --out DIR [--python PY] [--only CASE,...]

For each case it records, under OUT/CASE/:
  server.log        the server's stdout+stderr, byte for byte (tqdm's \\r redraws included)
  timed.jsonl       every log line with the seconds since launch when it was read (so a replay can keep the
                    real pace: tests/unit replays these)
  http.jsonl        every change of the /health answer (seconds since launch, status or error)
  result.json       exit code and time, the first 200 from /health, the captured endpoints, benchmark numbers
The driver needs only the standard library (and, for the benchmark, this repository's bench_client).
It is the reference the SGLang double and server_ready are held to; docs/evidence/real-sglang-h200/ says how
it was run and what it showed.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))

# Flags that let SGLang serve here: no FA3 kernels carried, no xgrammar, no flashinfer sampling, no CUDA graphs
# (see docs/evidence/real-sglang-h200/README.md for why each one).
COMMON = ["--host", "127.0.0.1", "--attention-backend", "triton", "--sampling-backend", "pytorch",
          "--grammar-backend", "none", "--disable-cuda-graph", "--enable-metrics", "--log-level", "info"]
ENDPOINTS = ["/health", "/health_generate", "/model_info", "/get_model_info", "/server_info", "/get_server_info",
             "/v1/models", "/metrics"]


def now():
    return time.monotonic()


ALL = []


class Case:
    def __init__(self, name, out, argv, port, env=None):
        self.name, self.argv, self.port = name, argv, port
        self.dir = os.path.join(out, name)
        os.makedirs(self.dir, exist_ok=True)
        self.env = dict(os.environ, **(env or {}))
        self.result = {"case": name, "argv": argv, "port": port, "env": env or {}}
        self.t0 = None
        self.proc = None
        self.ready_at = None
        self.lines = []
        self._stop = threading.Event()
        ALL.append(self)

    def t(self):
        return round(now() - self.t0, 3)

    def start(self):
        self.t0 = now()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True)
        self.result["pid"] = self.proc.pid
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._poll_health, daemon=True).start()
        return self

    def _read(self):
        with open(os.path.join(self.dir, "server.log"), "wb") as raw, \
                open(os.path.join(self.dir, "timed.jsonl"), "w") as timed:
            for line in iter(self.proc.stdout.readline, b""):
                raw.write(line)
                raw.flush()
                text = line.decode("utf-8", "replace").rstrip("\n")
                self.lines.append(text)
                timed.write(json.dumps({"t": self.t(), "line": text}) + "\n")
                timed.flush()
        rc = self.proc.wait()
        self.result.update(exit_code=rc, exit_t=self.t())

    def _poll_health(self):
        last = None
        with open(os.path.join(self.dir, "http.jsonl"), "w") as fh:
            while not self._stop.is_set() and self.proc.poll() is None:
                status = http_status("http://127.0.0.1:%d/health" % self.port, timeout=2)
                if status != last:
                    fh.write(json.dumps({"t": self.t(), "health": status}) + "\n")
                    fh.flush()
                    last = status
                if status == 200 and self.ready_at is None:
                    self.ready_at = self.t()
                    self.result["health_200_t"] = self.ready_at
                time.sleep(0.25)

    def seen(self, text):
        return any(text in line for line in self.lines)

    def wait_for(self, pred, timeout):
        end = now() + timeout
        while now() < end:
            if pred():
                return True
            if self.proc.poll() is not None and not pred():
                time.sleep(0.5)  # let the reader drain the pipe
                return pred()
            time.sleep(0.25)
        return False

    def stop(self, sig=signal.SIGTERM, grace=20):
        self._stop.set()
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        time.sleep(0.5)
        self.result.setdefault("exit_code", self.proc.returncode)
        self.result.setdefault("exit_t", self.t())

    def save(self):
        with open(os.path.join(self.dir, "result.json"), "w") as fh:
            json.dump(self.result, fh, indent=1, sort_keys=True)


def http_status(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as exc:
        return "error: %s" % type(getattr(exc, "reason", exc)).__name__


def capture_endpoints(case, tag):
    """GET each endpoint once; keep status and body (bounded time: a busy server may not answer)."""
    got = {}
    for ep in ENDPOINTS:
        url = "http://127.0.0.1:%d%s" % (case.port, ep)
        t = now()
        try:
            with urllib.request.urlopen(url, timeout=15) as resp:
                body = resp.read().decode("utf-8", "replace")
                status = resp.status
        except urllib.error.HTTPError as exc:
            body, status = exc.read().decode("utf-8", "replace"), exc.code
        except Exception as exc:  # noqa: BLE001 - record whatever it was
            body, status = "", "error: %r" % exc
        got[ep] = {"status": status, "seconds": round(now() - t, 3)}
        name = "%s_%s" % (tag, ep.strip("/").replace("/", "_"))
        with open(os.path.join(case.dir, name + (".txt" if ep == "/metrics" else ".json")), "w") as fh:
            fh.write(body)
    case.result.setdefault("endpoints", {})[tag] = got


def generate(case, text, max_new_tokens=32, temperature=0.0, timeout=30):
    body = json.dumps({"text": text, "sampling_params": {"max_new_tokens": max_new_tokens,
                                                         "temperature": temperature}}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/generate" % case.port, data=body,
                                 headers={"Content-Type": "application/json"})
    t = now()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            out = json.loads(resp.read())
        return {"ok": True, "seconds": round(now() - t, 3), "meta": out.get("meta_info", {})}
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "seconds": round(now() - t, 3), "error": repr(exc)}


def bench(case, grid=(1, 8, 32), requests_per=None, max_new_tokens=64, timeout=60.0):
    from ansible_collections.llmserve.sglang.plugins.module_utils.bench import client as bench_client
    base = "http://127.0.0.1:%d" % case.port
    results = []
    for c in grid:
        n = requests_per or max(2 * c, 4)
        r, _records = bench_client.run_load(base, c, n, max_new_tokens=max_new_tokens, input_len=32,
                                            endpoint="chat", timeout=timeout)
        results.append(r)
        print("  %s c=%d: %.0f tok/s, ttft median %s ms, failed %s" % (
            case.name, c, r.get("output_throughput") or 0, r.get("median_ttft_ms"), r.get("failed")), flush=True)
    case.result["bench"] = results


def launch(py, name, out, models, port, extra, env=None):
    argv = [py, "-m", "sglang.launch_server", "--port", str(port)] + COMMON + extra
    if "--model-path" not in extra:
        argv += ["--model-path", os.path.join(models, "llama-tiny")]
    print("[%s] launch: %s" % (name, " ".join(argv[3:])), flush=True)
    return Case(name, out, argv, port, env).start()


def finish(case, wait=90):
    """Let a failing case die on its own (its real exit is the fact to record), then kill what lingers."""
    case.wait_for(lambda: case.proc.poll() is not None, wait)
    lingered = case.proc.poll() is None
    case.stop(grace=10)
    case.result["killed_by_driver"] = lingered
    case.save()
    print("[%s] exit %s at %.1fs%s" % (case.name, case.result.get("exit_code"), case.result.get("exit_t", -1),
                                       " (killed: still alive)" if lingered else ""), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))

    def want(name):
        return not only or name in only

    py, out, models = args.python, args.out, args.models
    draft = os.path.join(models, "eagle3-tiny")
    summary = {}

    # Phase A: the base server, and at the same time the failures that do not need it.
    fails = []
    base = launch(py, "base", out, models, 30000, ["--mem-fraction-static", "0.3"]) if want("base") else None
    if want("missing_model"):
        fails.append(launch(py, "missing_model", out, models, 30010,
                            ["--model-path", "/models/does-not-exist", "--mem-fraction-static", "0.1"]))
    if want("bad_flag"):
        fails.append(launch(py, "bad_flag", out, models, 30011, ["--no-such-flag", "3"]))
    if want("bad_value"):
        fails.append(launch(py, "bad_value", out, models, 30012, ["--tp-size", "two"]))
    if want("oom_context"):
        fails.append(launch(py, "oom_context", out, models, 30014,
                            ["--mem-fraction-static", "0.1", "--context-length", "1000000000"],
                            env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}))
    if want("jit_build_fail"):
        # A fresh JIT cache and no CUDA toolkit: the warm-up's kernel build fails as on a host without nvcc.
        home = "/tmp/home-jitfail"
        os.makedirs(home, exist_ok=True)
        path = ":".join(p for p in os.environ.get("PATH", "").split(":") if "cuda" not in p)
        fails.append(launch(py, "jit_build_fail", out, models, 30013, ["--mem-fraction-static", "0.1"],
                            env={"HOME": home, "CUDA_HOME": "/nonexistent-cuda", "PATH": path,
                                 "XDG_CACHE_HOME": home + "/.cache"}))
    if want("tp_too_big"):
        fails.append(launch(py, "tp_too_big", out, models, 30015, ["--tp-size", "2", "--mem-fraction-static", "0.1"]))

    if base:
        ok = base.wait_for(lambda: base.ready_at is not None, 240)
        print("[base] ready=%s at %s s" % (ok, base.ready_at), flush=True)
        base.result["fired_up_seen"] = base.seen("The server is fired up and ready to roll")
        if ok:
            try:
                with open(os.path.join(base.dir, "compute-apps.csv"), "w") as fh:
                    subprocess.call(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory,gpu_bus_id",
                                     "--format=csv"], stdout=fh, stderr=subprocess.STDOUT)
            except OSError as exc:
                print("nvidia-smi: %s" % exc, flush=True)
            capture_endpoints(base, "before")
            base.result["generate"] = [generate(base, "Hello, my name is", 32) for _i in range(3)]
            bench(base)
            capture_endpoints(base, "after")
            if want("port_in_use"):
                # Same port as the running base server: the bind fails after the model loaded.
                taken = launch(py, "port_in_use", out, models, 30000, ["--mem-fraction-static", "0.1"])
                taken.wait_for(lambda: taken.seen("address already in use") or taken.seen("Errno 98"), 180)
                taken.result["bind_error_t"] = taken.t()
                print("[port_in_use] bind error at %.1fs" % taken.t(), flush=True)
                fails.append(taken)
        base.stop()
        base.save()
        summary["base"] = base.result

    # Phase B: EAGLE-3 with the random draft, while the lingering failures finish.
    if want("eagle3"):
        eagle = launch(py, "eagle3", out, models, 30001, [
            "--mem-fraction-static", "0.3", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", draft, "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"])
        ok = eagle.wait_for(lambda: eagle.ready_at is not None, 240)
        print("[eagle3] ready=%s at %s s" % (ok, eagle.ready_at), flush=True)
        if ok:
            capture_endpoints(eagle, "before")
            eagle.result["generate"] = [generate(eagle, "Hello, my name is", 32, timeout=30) for _i in range(2)]
            eagle.result["generate_sampled"] = [generate(eagle, "Once upon a time", 32, 0.8, timeout=20)]
            bench(eagle, grid=(1, 8), requests_per=8, timeout=30.0)
            capture_endpoints(eagle, "after")
        eagle.stop()
        eagle.save()
        summary["eagle3"] = eagle.result

    for case in fails:
        finish(case)
        summary[case.name] = case.result
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    try:
        main()
    finally:
        for left in ALL:  # never leave a server holding the GPU behind
            if left.proc is not None and left.proc.poll() is None:
                left.stop(sig=signal.SIGKILL, grace=5)
