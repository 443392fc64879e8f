# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Launch the (double) inference server: ``python -m sglang.launch_server [SGLang flags]``."""
import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

from sglang.version import __version__, at_least


def main():
    from sglang.srt.server_args import prepare_server_args
    from sglang._double import texts
    from sglang._double.config import Settings
    from sglang._double.out import Events, log, raw, uvicorn

    settings = Settings()
    events = Events(settings.events)
    me = os.getpid()
    if settings.frozen:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def exit_now(code):
        events.emit("exit", code=code)
        sys.stdout.flush()
        sys.stderr.flush()
        if code < 0:
            os.kill(me, -code)
        os._exit(code)

    if at_least("0.5.15"):
        warnings.warn("'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended "
                      "entrypoint.\n  Example: sglang serve --model-path <model> [options]", UserWarning, stacklevel=1)
    events.emit("stage", stage="init")
    if settings.scenario == "crash_import":
        raw(texts.IMPORT_ERROR + "\n")
        exit_now(1)
    try:
        server_args = prepare_server_args(sys.argv[1:])
    except SystemExit as e:  # argparse: status 2 and "prog: error: ..." already on stderr
        exit_now(e.code if isinstance(e.code, int) else 1)
    a = server_args.__dict__
    reason = _adaptive_unsupported(a)
    if reason:  # arg_groups/speculative_hook.py _maybe_disable_adaptive (0.5.15.post1, 0.5.23): static from here on
        log("speculative_adaptive disabled: %s. Falling back to static speculative params." % reason)
        a["speculative_adaptive"] = False
    log("server_args=%r" % server_args)
    if settings.scenario == "crash_model_not_found":
        raw(texts.model_not_found(a.get("model_path")) + "\n")
        exit_now(1)
    if settings.hang_stage == "init":
        events.emit("hang_start", stage="init")
        while True:
            time.sleep(3600)
    time.sleep(settings.duration("init"))

    tp = int(a.get("tp_size") or a.get("tensor_parallel_size") or 1)  # dest differs per version
    node_rank = int(a.get("node_rank") or 0)
    spec = bool(a.get("speculative_algorithm"))
    children = []

    def kill_tree(include_parent, code=-signal.SIGKILL):
        # sglang.srt.utils.kill_process_tree: SIGKILL the children, then the process itself.
        if at_least("0.5.15"):
            log("kill_process_tree called: parent_pid=%d, include_parent=%s, pid=%d" % (me, include_parent, me))
        for p in children:
            try:
                p.kill()
            except OSError:
                pass
        for p in children:
            p.wait()
        if include_parent:
            exit_now(code)

    def on_sigquit(signum, frame):
        log("Received sigquit from a child process. It usually means the child failed.")
        deadline = time.time() + 0.5  # let a dying child finish writing its cause
        while time.time() < deadline and any(p.poll() is None for p in children):
            time.sleep(0.02)
        kill_tree(True)

    signal.signal(signal.SIGQUIT, on_sigquit)

    # Scheduler children: one process per rank, at most two (enough to show per-rank behaviour cheaply).
    nchild = 2 if settings.scenario == "child_dies" else max(1, min(tp, 2))
    default_bs = 48 if spec else (256 if at_least("0.5.10") else 160)
    max_bs = int(a.get("cuda_graph_max_bs") or a.get("cuda_graph_max_bs_decode") or default_bs)
    readers = []
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for i in range(nchild):
        rfd, wfd = os.pipe()
        cfg = {"ranks": [r for r in range(max(tp, nchild)) if r % nchild == i], "tp": max(tp, nchild if
               settings.scenario == "child_dies" else tp), "node_rank": node_rank, "spec": spec,
               "cuda_graph_max_bs": max_bs, "disable_cuda_graph": bool(a.get("disable_cuda_graph")), "ready_fd": wfd, "dies": settings.scenario == "child_dies" and i == 1,
               "max_running_requests": int(a.get("max_running_requests") or (48 if spec else 2048))}
        env = dict(os.environ, SGLANG_DOUBLE_CHILD=json.dumps(cfg), SGLANG_DOUBLE_VERSION=__version__)
        env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        children.append(subprocess.Popen([sys.executable, "-m", "sglang._double.scheduler"], env=env,
                                         pass_fds=(wfd,)))
        os.close(wfd)
        readers.append(rfd)

    from sglang._double.engine import Engine
    from sglang._double.http import State, make_server
    hung = threading.Event()
    engine = Engine.from_launch(settings, a, tp, hung, max_bs)
    host, port = a.get("host") or "127.0.0.1", int(a.get("port") or 30000)

    if node_rank >= 1:
        # Worker nodes: the always-200 stub on --host/--port, then block until the schedulers exit.
        make_server(host, port, State(a, engine, settings, stub=True))
        log("Dummy health check server started in background thread at %s:%d" % (host, port))
        if not settings.frozen:
            signal.signal(signal.SIGTERM, lambda *_: kill_tree(True, 0))
        while True:
            time.sleep(3600)

    for rfd in readers:  # _wait_for_scheduler_ready
        data = b""
        while not data.endswith(b"\n"):
            chunk = os.read(rfd, 4096)
            if not chunk:
                break
            data += chunk
        if not data:
            # A dead rank leaves the others blocked in a collective: the launcher lingers.
            while True:
                time.sleep(3600)

    events.emit("stage", stage="http")
    if settings.hang_stage == "http":
        events.emit("hang_start", stage="http")
        while True:
            time.sleep(3600)
    time.sleep(settings.duration("http"))
    uvicorn("INFO", "Started server process [%d]" % me)
    uvicorn("INFO", "Waiting for application startup.")
    uvicorn("INFO", "Application startup complete.")
    state = State(a, engine, settings)
    try:
        if settings.scenario == "crash_port_in_use":
            raise OSError(errno.EADDRINUSE, "address already in use")
        srv = make_server(host, port, state)
    except OSError as e:
        uvicorn("ERROR", "[Errno %d] error while attempting to bind on address ('%s', %d): %s"
                % (e.errno or 0, host, port, "address already in use" if e.errno == errno.EADDRINUSE else e.strerror))
        uvicorn("INFO", "Waiting for application shutdown.")
        # Real SGLang (0.5.15.post1 on the H200): the warm-up thread is already running and reaches whatever answers
        # on the port; when another server does, it prints the fired-up line after the bind error. The schedulers
        # are killed, but the process itself stays alive (~70 s there) before it exits.
        if _warmup_reaches(host, port, a):
            log("The server is fired up and ready to roll!")
        uvicorn("INFO", "Application shutdown complete.")
        kill_tree(False)
        events.emit("linger", stage="http")
        time.sleep(settings.duration("linger"))
        exit_now(1)
    events.emit("port_open", stage="http", port=port)
    uvicorn("INFO", "Uvicorn running on http://%s:%d (Press CTRL+C to quit)" % (host, port))

    stop = threading.Event()
    threading.Thread(target=engine.decode_log_loop, args=(stop,), daemon=True).start()

    def on_sigterm(signum, frame):
        latched = state.status == "unhealthy"
        state.status = "draining"
        threading.Thread(target=force_exit if latched else drain, daemon=True).start()

    def force_exit():
        # tokenizer_manager's SIGTERM watchdog: a latched server (failed health check) does not drain
        log("Signal SIGTERM received while health check failed. Force exiting.")
        srv.shutdown()
        kill_tree(False)
        exit_now(1)

    def drain():
        # from this thread, not the signal handler (no file I/O inside a handler); /health already answers 503
        events.emit("draining", stage="http")
        deadline = time.time() + 30
        while engine.running and time.time() < deadline:
            time.sleep(0.05)
        # a short window in which probes see 503 (a scenario file's "drain" duration lengthens it for tests)
        time.sleep(settings.durations.get("drain", min(0.5, settings.pace)))
        uvicorn("INFO", "Shutting down")
        uvicorn("INFO", "Waiting for application shutdown.")
        uvicorn("INFO", "Application shutdown complete.")
        uvicorn("INFO", "Finished server process [%d]" % me)
        srv.shutdown()
        kill_tree(False)
        exit_now(0)

    if not settings.frozen:
        signal.signal(signal.SIGTERM, on_sigterm)

    events.emit("stage", stage="warmup")
    if settings.hang_stage == "warmup":
        events.emit("hang_start", stage="warmup")
        while True:
            time.sleep(3600)
    warm = _warmup(host, port, a, settings, state)
    if warm is not None:
        log("Initialization failed. warmup error: " + warm)
        kill_tree(True)
    state.status = "up"
    events.emit("ready", stage="ready")
    log("The server is fired up and ready to roll!")
    events.emit("stage", stage="ready")
    if settings.scenario == "generate_fails":
        state.fail_generate = True
    if settings.fail_after is not None:
        def go_bad():
            state.fail_generate = True
            events.emit("generate_fails", stage="ready")
        threading.Timer(settings.fail_after, go_bad).start()
    if settings.hang_stage == "ready":
        events.emit("hang_start", stage="ready")
        hung.set()
    while True:
        time.sleep(3600)


def _adaptive_unsupported(a):
    """speculative/adaptive_spec_params.py adaptive_unsupported_reason, the cases the double can see."""
    if not a.get("speculative_adaptive") or not a.get("speculative_algorithm"):
        return None
    algo = str(a.get("speculative_algorithm")).upper()
    if algo not in ("EAGLE", "EAGLE3"):
        return "speculative_algorithm=%s (only EAGLE/EAGLE3 are supported)" % algo
    topk = a.get("speculative_eagle_topk")
    if topk is not None and int(topk) != 1:
        return "speculative_eagle_topk=%s (only topk=1 is supported)" % topk
    if a.get("enable_dp_attention"):
        return "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)"
    return None


def _warmup_reaches(host, port, a):
    """One warm-up round against whatever holds the port: True when it answers /model_info and /generate."""
    import urllib.request
    h = host if host not in ("0.0.0.0", "::") else "127.0.0.1"
    headers = {"Content-Type": "application/json"}
    if a.get("api_key"):
        headers["Authorization"] = "Bearer " + a["api_key"]
    base = "http://%s:%d" % (h, port)
    body = json.dumps({"text": "The capital city of France is",
                       "sampling_params": {"temperature": 0, "max_new_tokens": 8}}).encode()
    try:
        urllib.request.urlopen(urllib.request.Request(base + "/model_info", headers=headers), timeout=2).read()
        urllib.request.urlopen(urllib.request.Request(base + "/generate", data=body, headers=headers), timeout=5).read()
    except Exception:  # a socket that is not an SGLang server (or refuses us): no fired-up line
        return False
    return True


def _warmup(host, port, a, settings, state):
    """_execute_server_warmup: GET /model_info, then POST /generate; returns an error text or None."""
    import urllib.request
    from sglang._double import texts
    time.sleep(settings.duration("warmup") / 2)
    h = host if host not in ("0.0.0.0", "::") else "127.0.0.1"
    headers = {"Content-Type": "application/json"}
    if a.get("api_key"):
        headers["Authorization"] = "Bearer " + a["api_key"]
    base = "http://%s:%d" % (h, port)
    urllib.request.urlopen(urllib.request.Request(base + "/model_info", headers=headers), timeout=30).read()
    time.sleep(settings.duration("warmup") / 2)
    if settings.scenario == "crash_warmup":
        state.fail_generate = True
    body = json.dumps({"text": "The capital city of France is",
                       "sampling_params": {"temperature": 0, "max_new_tokens": 8}}).encode()
    try:
        urllib.request.urlopen(urllib.request.Request(base + "/generate", data=body, headers=headers), timeout=600).read()
    except Exception as e:  # HTTPError carries the server's body, like res.text
        text = e.read().decode() if hasattr(e, "read") else str(e)
        return texts.warmup_error(text)
    return None


if __name__ == "__main__":
    main()
