# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 34 on a real GPU: the baseline, static EAGLE-3, adaptive (step 0 above a threshold) and adaptive with the
step0-plain-decode patch, at running batch 1..256, real SGLang started by hand (no Ansible), one server at a time.

    bench_step0.py --out DIR --models DIR --modes baseline,eagle3,adaptive,adaptive_patched [--points 1,16,...]
                   [--threshold 64] [--tokens 256] [--deadline EPOCH] [--site-patched DIR]

Per mode: launch, wait for /health, one warm-up request, then for each point B one burst of B greedy requests of
--tokens output tokens each (ignore_eos): decode throughput is the median `gen throughput` of the server's own
`Decode batch` lines logged while `#running-req` == B (the batch full); lines at other sizes decide nothing.
Then (EAGLE modes) the accept length after a burst: 127 short requests and one long one; the long one decodes alone
once the others finish, and its `Decode batch` lines at #running-req 1 give the accept length after the load fell.
Then a torch-profiler trace of --profile-steps decode steps at the largest point, summarised by kernel.
Results go to DIR/results.json after every point, so a run cut short keeps what it measured.
"""
import argparse
import concurrent.futures
import glob
import gzip
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

DECODE_RE = re.compile(r"Decode batch.*?#running-req: (\d+),.*?(?:accept len: ([\d.]+),.*?)?"
                       r"(?:cuda graph|graph): (\w+), gen throughput \(token/s\): ([\d.]+)")
PROMPT = list(range(10, 42))  # 32 prompt tokens, token ids inside every tokenizer made by make_tiny_models


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def post(url, body, timeout):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        raw = resp.read()
    try:
        return json.loads(raw or b"null")
    except ValueError:  # /start_profile answers plain text
        return {"text": raw.decode(errors="replace")[:200]}


def generate(port, tokens, timeout=300):
    body = {"input_ids": PROMPT, "sampling_params": {"max_new_tokens": tokens, "temperature": 0.0, "ignore_eos": True}}
    for attempt in range(3):  # a refused connection (listen backlog) is retried; a slow answer is not
        try:
            out = post("http://127.0.0.1:%d/generate" % port, body, timeout)
            return out.get("meta_info", {}).get("completion_tokens", 0)
        except (ConnectionResetError, ConnectionRefusedError):
            if attempt == 2:
                raise
            time.sleep(0.2)
    return 0


def burst(port, sizes_tokens):
    """Send one request per entry of sizes_tokens at once; return (wall seconds, completion tokens)."""
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(sizes_tokens)) as pool:
        done = list(pool.map(lambda n: generate(port, n), sizes_tokens))
    return time.time() - t0, sum(done)


def decode_lines(text):
    rows = []
    for m in DECODE_RE.finditer(text):
        rows.append({"running": int(m.group(1)), "accept": float(m.group(2)) if m.group(2) else None,
                     "graph": m.group(3) == "True", "tps": float(m.group(4))})
    return rows


class Server:
    def __init__(self, name, argv, env, logpath, port):
        self.name, self.port, self.logpath = name, port, logpath
        self.fh = open(logpath, "w")
        self.proc = subprocess.Popen(argv, stdout=self.fh, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.t0 = time.time()

    def text(self, start=0):
        with open(self.logpath, errors="replace") as fh:
            fh.seek(start)
            return fh.read()

    def size(self):
        return os.path.getsize(self.logpath)

    def wait_ready(self, limit):
        while time.time() - self.t0 < limit:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/health" % self.port, timeout=5) as r:
                    if r.status == 200:
                        return True
            except Exception:  # pylint: disable=broad-except
                pass
            time.sleep(2)
        return False

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self.fh.close()
        time.sleep(3)  # the GPU memory of the killed scheduler goes back


def summarize_trace(folder, top=18):
    """Kernel time by name from the newest torch-profiler trace under folder."""
    files = sorted(glob.glob(os.path.join(folder, "**", "*.json*"), recursive=True), key=os.path.getmtime)
    if not files:
        return {"error": "no trace under %s" % folder}
    path = files[-1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as fh:
        events = json.load(fh).get("traceEvents", [])
    kern, launches, first, last = {}, 0, None, None
    for e in events:
        if e.get("ph") != "X":
            continue
        if e.get("cat") == "kernel":
            name = e.get("name", "?")[:90]
            kern[name] = kern.get(name, 0.0) + float(e.get("dur", 0))
            first = e["ts"] if first is None else min(first, e["ts"])
            last = max(last or 0, e["ts"] + e.get("dur", 0))
        elif e.get("name") in ("cudaGraphLaunch", "cuGraphLaunch"):
            launches += 1
    total = sum(kern.values())
    ranked = sorted(kern.items(), key=lambda kv: -kv[1])[:top]
    return {"trace": os.path.basename(path), "kernel_us_total": round(total, 1), "graph_launches": launches,
            "span_us": round((last or 0) - (first or 0), 1),
            "top": [{"kernel": k, "us": round(v, 1), "share": round(v / total, 3) if total else 0} for k, v in ranked]}


def wait_full_then_profile(server, start, batch, steps, folder, limit=60):
    """Poll the log until a Decode batch line at `batch` appears after `start`, then profile `steps` steps."""
    t0 = time.time()
    while time.time() - t0 < limit:
        if any(r["running"] == batch for r in decode_lines(server.text(start))):
            body = {"output_dir": folder, "num_steps": steps, "activities": ["CPU", "GPU"]}
            try:
                return post("http://127.0.0.1:%d/start_profile" % server.port, body, 60)
            except Exception as e:  # pylint: disable=broad-except
                return {"error": str(e)}
        time.sleep(0.2)
    return {"error": "batch %d never full" % batch}


def threshold_of(mode, a):
    """adaptive_patched-t2: a mode's own threshold (-tN), else --threshold."""
    m = re.search(r"-t(\d+)", mode)
    return int(m.group(1)) if m else a.threshold


def check_outputs(port, n, tokens):
    """n greedy requests with different prompts at once: the token ids each got (a random model's output depends on
    its context, so a wrong position or KV length in a decode path changes them)."""
    prompts = [[(7 * i + 13 * j) % 3000 + 50 for j in range(8 + i % 24)] for i in range(n)]

    def one(ids):
        body = {"input_ids": ids, "sampling_params": {"max_new_tokens": tokens, "temperature": 0.0, "ignore_eos": True}}
        return post("http://127.0.0.1:%d/generate" % port, body, 300).get("output_ids")

    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, prompts))


def launch_argv(mode, a, port):
    target, draft = os.path.join(a.models, a.target), os.path.join(a.models, a.draft)
    argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", target, "--host", "127.0.0.1",
            "--port", str(port), "--attention-backend", "triton", "--sampling-backend", "pytorch",
            "--grammar-backend", "none", "--mem-fraction-static", "0.45", "--max-running-requests", "256",
            "--cuda-graph-bs"] + [str(b) for b in a.graph_bs] + [
        "--disable-prefill-cuda-graph", "--decode-log-interval", "10", "--log-level", "info"]
    if mode != "baseline":
        argv += ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", draft,
                 "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    if mode.startswith("adaptive"):
        cfg = os.path.join(a.work, "adaptive-%s.json" % mode)
        with open(cfg, "w") as fh:
            json.dump({"1": {"candidate_steps": [3]}, str(threshold_of(mode, a)): {"candidate_steps": [0]}}, fh)
        argv += ["--speculative-adaptive", "--speculative-adaptive-config", cfg]
    return argv


def run_mode(mode, a, results, save):
    port = 30000 + len(results["modes"])
    env = dict(os.environ, HF_HUB_OFFLINE="1", CUDA_HOME="/usr/local/cuda", PYTHONUNBUFFERED="1",
               SGLANG_TORCH_PROFILER_DIR=os.path.join(a.work, "prof-" + mode))
    if mode.startswith("adaptive_patched"):
        env["PYTHONPATH"] = a.site_patched + os.pathsep + env.get("PYTHONPATH", "")
    else:
        env["LLMSERVE_STEP0_PLAIN_DECODE"] = "0"  # no effect on a pristine install; says so if the overlay leaks
    if "-noextend" in mode:  # SGLang's own switch: no draft-extend at step 0 (the draft falls out of step)
        env["SGLANG_SPEC_SKIP_ZERO_STEP_DRAFT_EXTEND"] = "1"
    res = {"mode": mode, "points": [], "started": time.time(),
           "threshold": threshold_of(mode, a) if mode.startswith("adaptive") else None}
    results["modes"][mode] = res
    logpath = os.path.join(a.work, "server-%s.log" % mode)
    srv = Server(mode, launch_argv(mode, a, port), env, logpath, port)
    ok = srv.wait_ready(min(300, a.deadline - time.time() - 30))
    res["ready_s"] = round(time.time() - srv.t0, 1)
    log("%s ready=%s in %.0fs" % (mode, ok, res["ready_s"]))
    if not ok:
        res["error"] = "not ready: " + srv.text()[-3000:]
        srv.stop()
        save()
        return
    text = srv.text()
    res["switch_lines"] = [ln for ln in text.splitlines() if "adaptive" in ln.lower()][:12]
    try:
        generate(port, 16)
        if a.check_outputs:
            res["outputs"] = check_outputs(port, a.check_outputs, a.tokens)
            log("%s: %d outputs, first %s" % (mode, len(res["outputs"]), (res["outputs"][0] or [])[:12]))
            save()
            return
        for b in a.points:
            if time.time() > a.deadline - 25:
                res["cut"] = "deadline before point %d" % b
                break
            start = srv.size()
            wall, toks = burst(port, [a.tokens] * b)
            time.sleep(0.3)
            rows = decode_lines(srv.text(start))
            full = [r for r in rows if r["running"] == b]
            point = {"batch": b, "client_tok_s": round(toks / wall, 1), "wall_s": round(wall, 2),
                     "lines": len(rows), "full_lines": len(full),
                     "running_max": max([r["running"] for r in rows] or [0]),
                     "tok_s": round(statistics.median([r["tps"] for r in full]), 1) if full else None,
                     "graph": all(r["graph"] for r in full) if full else None,
                     "accept": round(statistics.median([r["accept"] for r in full if r["accept"] is not None]), 2)
                     if full and full[0]["accept"] is not None else None}
            res["points"].append(point)
            log("%s B=%d: %s tok/s (%d full lines of %d, graph %s, accept %s), client %s tok/s"
                % (mode, b, point["tok_s"], len(full), len(rows), point["graph"], point["accept"], point["client_tok_s"]))
            save()
        if mode != "baseline" and time.time() < a.deadline - 40:
            start = srv.size()
            wall, _tokens = burst(port, [128] * 127 + [640])
            time.sleep(0.3)
            rows = decode_lines(srv.text(start))
            tail = [r for r in rows if r["running"] == 1 and r["accept"] is not None]
            busy = [r for r in rows if r["running"] >= 64 and r["accept"] is not None]
            res["after_burst"] = {"wall_s": round(wall, 2), "busy_lines": len(busy),
                                  "busy_accept": round(statistics.median([r["accept"] for r in busy]), 2) if busy else None,
                                  "alone_lines": len(tail),
                                  "alone_accept": round(statistics.median([r["accept"] for r in tail]), 2) if tail else None,
                                  "alone_accept_all": [r["accept"] for r in tail]}
            log("%s after burst: %s" % (mode, res["after_burst"]))
            save()
        if a.profile_steps and time.time() < a.deadline - 45:
            b = max(a.points)
            folder = os.path.join(a.work, "prof-" + mode)
            os.makedirs(folder, exist_ok=True)
            start = srv.size()
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
                fut = pool.submit(burst, port, [a.tokens] * b)
                res["profile_req"] = wait_full_then_profile(srv, start, b, a.profile_steps, folder)
                fut.result()
            for _step in range(30):
                if glob.glob(os.path.join(folder, "**", "*.json*"), recursive=True):
                    break
                time.sleep(1)
            time.sleep(2)
            res["profile"] = summarize_trace(folder)
            res["profile"]["steps"] = a.profile_steps
            res["profile"]["batch"] = b
            log("%s profile: %s" % (mode, json.dumps(res["profile"])[:1500]))
            save()
    except Exception as e:  # pylint: disable=broad-except
        res["error"] = "%s: %s" % (type(e).__name__, e)
        log("%s failed: %s" % (mode, res["error"]))
    finally:
        res["tail"] = srv.text()[-2500:] if res.get("error") else ""
        srv.stop()
        save()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/step0")
    ap.add_argument("--models", required=True)
    ap.add_argument("--modes", default="baseline,eagle3,adaptive,adaptive_patched")
    ap.add_argument("--points", default="1,16,32,64,128,256")
    ap.add_argument("--graph-bs", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--threshold", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--profile-steps", type=int, default=8)
    ap.add_argument("--site-patched", default="/tmp/sgp")
    ap.add_argument("--target", default="llama-fixed")
    ap.add_argument("--draft", default="eagle3-fixed")
    ap.add_argument("--check-outputs", type=int, default=0,
                    help="instead of the sweep: N concurrent greedy requests, their output ids kept (correctness)")
    ap.add_argument("--deadline", type=float, default=time.time() + 540)
    a = ap.parse_args(argv)
    a.points = [int(x) for x in a.points.split(",")]
    a.graph_bs = [int(x) for x in a.graph_bs.split(",")]
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.out, "results.json")
    results = json.load(open(path)) if os.path.exists(path) else {"modes": {}}
    results.update({"threshold": a.threshold, "tokens": a.tokens, "graph_bs": a.graph_bs})

    def save():
        with open(path + ".tmp", "w") as fh:
            json.dump(results, fh, indent=1)
        os.replace(path + ".tmp", path)

    for mode in a.modes.split(","):
        if time.time() > a.deadline - 90:
            log("skip %s: deadline" % mode)
            results.setdefault("skipped", []).append(mode)
            continue
        run_mode(mode, a, results, save)
    save()


if __name__ == "__main__":
    main()
