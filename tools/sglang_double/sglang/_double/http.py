# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP API of the double on http.server: the endpoints and status codes SGLang's FastAPI app gives."""
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sglang.version import __version__, at_least
from sglang._double.metrics import Metrics
from sglang._double.out import access, log
from sglang.srt import server_args as srt_server_args
from sglang.srt.server_args import load_table

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error",
           503: "Service Unavailable"}


class State(object):
    """Shared between the HTTP threads and the launcher."""

    def __init__(self, args, engine, settings, stub=False):
        self.args, self.engine, self.settings, self.stub = args, engine, settings, stub
        self.status = "starting"  # starting -> up (<-> unhealthy: the health latch) -> draining
        self.fail_generate = False
        self.model = args.get("served_model_name") or args.get("model_path") or "default"
        self.metrics = Metrics(self)
        self.hf_config = read_hf_config(args.get("model_path"))

    def context_len(self):
        return int(self.args.get("context_length") or self.hf_config.get("max_position_embeddings") or 262144)


def _env_bool(name, default):
    """SGLang's EnvBool: true, 1, yes, y (any case) are true."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("true", "1", "yes", "y")


def read_hf_config(model_path):
    """The model folder's config.json, as SGLang reads it for /model_info (a Kimi-like default without one)."""
    try:
        with open(os.path.join(model_path or "", "config.json")) as fh:
            cfg = json.load(fh)
        return cfg if isinstance(cfg, dict) else {}
    except (IOError, OSError, ValueError):
        return {}


def chat_template_error(model_path, given, messages):
    """What SGLang's chat path says of the model's chat template for ``messages`` (None when it renders): Transformers'
    sandboxed Jinja, as model_verify renders it; no jinja2 here, no verdict (the double then serves chat as before)."""
    text = None
    try:
        with open(os.path.join(model_path or "", "tokenizer_config.json")) as fh:
            text = json.load(fh).get("chat_template")
    except (IOError, OSError, ValueError, AttributeError):
        pass
    for path in ([os.path.join(model_path or "", "chat_template.jinja")] if not given else
                 [given] if str(given).endswith(".jinja") else []):  # --chat-template FILE.jinja, as SGLang loads it
        try:
            with open(path) as fh:
                text = fh.read()
        except (IOError, OSError):
            pass
    if given and not str(given).endswith(".jinja"):
        return None  # a built-in template name
    if not isinstance(text, str):
        return None
    try:
        from jinja2.exceptions import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        return None

    def raise_exception(message):
        raise TemplateError(message)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    try:
        env.from_string(text).render(messages=messages, add_generation_prompt=True)
    except Exception as e:  # noqa: BLE001 - SGLang answers any of them 400 with str(e)
        return str(e)
    return None


def server_fields():
    """ServerArgs' fields for this version (the flag table's 'fields'; its dests where the table has none)."""
    table = load_table()
    return table.get("fields") or sorted(set(f["dest"] for f in table["flags"]) - {"config"})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # uvicorn listens with a backlog of 2048; the stdlib default of 5 resets bursts of
    # benchmark clients that a real server would queue.
    request_queue_size = 2048


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set by make_server

    def log_message(self, *a):  # replaced by uvicorn-style access lines
        pass

    # ---- plumbing
    def _send(self, code, body=b"", ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response_only(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        access(self.client_address, self.command, self.path, code, REASONS.get(code, ""))
        self._count(code)

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def _stream_start(self):
        self.send_response_only(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        access(self.client_address, self.command, self.path, 200, "OK")
        self._count(200)

    def _count(self, code):
        if not self.state.stub:  # SGLang's HTTP metrics middleware: one response per request, by route
            self.state.metrics.http_response(self.path.split("?", 1)[0], self.command, code)

    def _chunk(self, data):
        data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _authorized(self, path):
        key = self.state.args.get("api_key")
        if not key or path.startswith(("/health", "/ready", "/metrics")):
            return True  # SGLang's auth exempts probes and metrics (utils/auth.py)
        return self.headers.get("authorization") == "Bearer " + key

    # ---- dispatch
    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def _dispatch(self, method):
        path = self.path.split("?", 1)[0]
        st = self.state
        if st.stub:
            return self._stub(path)
        st.metrics.http_request(path, method)
        if not self._authorized(path):
            return self._send(401, {"error": "Unauthorized"})
        routes = {
            ("GET", "/health"): lambda: self.health(path), ("GET", "/health_generate"): lambda: self.health(path),
            ("GET", "/v1/models"): self.models, ("GET", "/model_info"): self.model_info,
            ("GET", "/get_model_info"): self.model_info, ("GET", "/server_info"): self.server_info,
            ("GET", "/get_server_info"): self.server_info, ("GET", "/ping"): lambda: self._send(200),
            ("POST", "/generate"): self.generate, ("PUT", "/generate"): self.generate,
            ("POST", "/v1/chat/completions"): self.chat,
        }
        if at_least("0.5.20"):  # GET /ready came with 0.5.20 (entrypoints/http_server.py; 0.5.19 lacks it)
            routes[("GET", "/ready")] = lambda: self._send(200 if st.status == "up" else 503)
        if st.args.get("enable_metrics"):
            routes[("GET", "/metrics")] = self.metrics
        fn = routes.get((method, path))
        if fn is None:
            known = set(p for _, p in routes)
            if path in known:
                return self._send(405, {"detail": "Method Not Allowed"})
            return self._send(404, {"detail": "Not Found"})
        fn()

    def _stub(self, path):
        # launch_dummy_health_check_server on node_rank >= 1: always 200, nothing else.
        if path in ("/health", "/health_generate", "/ping"):
            return self._send(200)
        if path == "/metrics" and self.state.args.get("enable_metrics"):
            return self._send(200, "", "text/plain; version=0.0.4; charset=utf-8")
        return self._send(404, {"detail": "Not Found"})

    # ---- endpoints
    def health(self, path):
        """entrypoints/http_server.py health_generate (0.5.9-0.5.23, one handler for both paths): a 1-token
        generation that passes on any output of the server within SGLANG_HEALTH_CHECK_TIMEOUT (20 s; scaled by PACE
        here); a failure latches the server UnHealthy - /ready answers 503 from then on - until a later check
        passes. SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=0 makes /health (not /health_generate) a status check."""
        st = self.state
        if st.status == "draining":
            log("Health check request received during shutdown. Returning 503.")
            return self._send(503)
        if st.status == "starting":
            return self._send(503)
        if _env_bool("SGLANG_DIAG_BYPASS_HEALTH_GENERATE", False):
            return self._send(200)
        if path == "/health" and not _env_bool("SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION", True):
            return self._send(200)
        timeout = int(os.environ.get("SGLANG_HEALTH_CHECK_TIMEOUT", 20))
        e = st.engine
        tic = time.time()
        threading.Thread(target=e.generate, args=(1, 1), daemon=True).start()
        step = min(1.0, st.settings.pace)  # SGLang looks once a second
        while time.time() < tic + timeout * st.settings.pace:
            time.sleep(step)
            if e.last_output > tic:
                if st.status == "unhealthy":
                    st.status = "up"
                return self._send(200)
        log("Health check failed. Server couldn't get a response from detokenizer for last %d seconds. "
            "tic start time: %s. last_heartbeat time: %s" % (timeout, time.strftime("%H:%M:%S", time.localtime(tic)),
                                                             time.strftime("%H:%M:%S", time.localtime(e.last_output))))
        if st.status == "up":
            st.status = "unhealthy"
        self._send(503)

    def models(self):
        self._send(200, {"object": "list", "data": [{"id": self.state.model, "object": "model",
                                                     "created": int(time.time()), "owned_by": "sglang",
                                                     "root": self.state.model, "parent": None,
                                                     "max_model_len": self.state.context_len()}]})

    def model_info(self):
        a = self.state.args
        self._send(200, {"model_path": a.get("model_path"), "tokenizer_path": a.get("tokenizer_path") or a.get("model_path"),
                         "is_generation": True, "preferred_sampling_params": None, "weight_version": "default",
                         "has_image_understanding": False, "has_audio_understanding": False,
                         "model_type": self.state.hf_config.get("model_type", "deepseek_v3"),
                         "architectures": self.state.hf_config.get("architectures", ["DeepseekV3ForCausalLM"])})

    def server_info(self):
        st = self.state
        st.engine.wait_scheduler(600.0)  # get_internal_state goes through the scheduler: it waits behind a stuck batch
        # As real SGLang: every ServerArgs field at the top (the key is never echoed), and again, with the
        # scheduler's live figures, in internal_states[0] (captured from 0.5.15.post1 on an H200).
        args = dict((k, None if k in ("api_key", "admin_api_key") else st.args.get(k)) for k in server_fields())
        internal = dict(args, last_gen_throughput=round(st.engine.last_tps, 2),
                        memory_usage={"weight": 69.56, "kvcache": 14.47, "token_capacity": 412160, "graph": 1.52},
                        effective_max_running_requests_per_dp=st.args.get("max_running_requests") or 2048,
                        max_speculative_num_draft_tokens=st.args.get("speculative_num_draft_tokens"),
                        enable_grpc=False, grpc_port=None)
        al = st.engine.info_accept_length()
        if al is not None:
            internal["avg_spec_accept_length"] = al
        info = dict(args, version=__version__, status="ready" if st.status == "up" else st.status,
                    internal_states=[internal], max_total_num_tokens=412160,
                    max_req_input_len=st.context_len() - 6, kv_events=None)
        if at_least("0.5.20"):
            # as real 0.5.20+: what was asked for, and the engine's start-up phases (observability/startup_time.py)
            d = st.settings.duration
            info["launch_command"] = srt_server_args.LAUNCH_COMMAND
            info["startup_time"] = {"load_weight": d("load_weights"), "kv_cache_allocation": d("kv_cache"),
                                    "scheduler_e2e": d("dist_init") + d("load_weights") + d("kv_cache") + d("cuda_graph"),
                                    "cuda_graph": {"decode": d("cuda_graph")}, "tokenizer_e2e": d("http")}
        self._send(200, info)

    def metrics(self):
        self._send(200, self.state.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")

    def _failing(self):
        return self.state.fail_generate

    def generate(self):
        req = self._body()
        if req is None:
            return self._send(400, {"error": {"message": "Invalid JSON"}})
        if self._failing():
            return self._send(500, {"error": {"message": "CUDA error: an illegal memory access was encountered"}})
        sp = req.get("sampling_params") or {}
        n = int(sp.get("max_new_tokens", 128))
        prompt = req.get("text") or ""
        prompt_tokens = len(req.get("input_ids") or []) or max(1, len(str(prompt).split()))
        rid = uuid.uuid4().hex
        t0 = time.time()
        e = self.state.engine

        def meta(done):
            m = {"id": rid, "finish_reason": {"type": "length", "length": done} if done == n else None,
                 "prompt_tokens": prompt_tokens, "completion_tokens": done, "cached_tokens": 0,
                 "e2e_latency": time.time() - t0}
            if e.speculative:
                m["spec_verify_ct"] = max(1, int(done / (e.accept_length() or 1)))
                m["spec_accept_length"] = e.accept_length()
            return m

        if req.get("stream"):
            self._stream_start()
            text = []

            def on_token(i):
                text.append(" tok")
                self._chunk("data: " + json.dumps({"text": "".join(text), "output_ids": list(range(i + 1)),
                                                   "meta_info": meta(i + 1)}) + "\n\n")
            rec = self.state.metrics.request(prompt_tokens)
            e.generate(n, prompt_tokens, rec.token(on_token))
            rec.done(n)
            self._chunk("data: [DONE]\n\n")
            self._chunk("")
            return
        rec = self.state.metrics.request(prompt_tokens)
        e.generate(n, prompt_tokens, rec.token())
        rec.done(n)
        self._send(200, {"text": " tok" * n, "output_ids": list(range(n)), "meta_info": meta(n)})

    def chat(self):
        req = self._body()
        if req is None:
            return self._send(400, {"object": "error", "message": "Invalid JSON", "type": "BadRequestError",
                                    "param": None, "code": 400})
        if self._failing():
            return self._send(400, {"object": "error", "message": "CUDA error: an illegal memory access was encountered",
                                    "type": "BadRequestError", "param": None, "code": 400})
        said = chat_template_error(self.state.args.get("model_path"), self.state.args.get("chat_template"),
                                   req.get("messages") or [])
        if said:
            return self._send(400, {"object": "error", "message": said, "type": "BadRequestError", "param": None,
                                    "code": 400})
        n = int(req.get("max_completion_tokens") or req.get("max_tokens") or 128)
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in req.get("messages") or []) or 1
        cid, created = "chatcmpl-" + uuid.uuid4().hex, int(time.time())
        e = self.state.engine
        base = {"id": cid, "created": created, "model": req.get("model") or self.state.model}
        if req.get("stream"):
            self._stream_start()

            def on_token(i):
                d = dict(base, object="chat.completion.chunk",
                         choices=[{"index": 0, "delta": {"role": "assistant", "content": " tok"} if i == 0 else
                                   {"content": " tok"}, "finish_reason": None}])
                self._chunk("data: " + json.dumps(d) + "\n\n")
            rec = self.state.metrics.request(prompt_tokens)
            e.generate(n, prompt_tokens, rec.token(on_token))
            rec.done(n)
            last = dict(base, object="chat.completion.chunk",
                        choices=[{"index": 0, "delta": {}, "finish_reason": "length"}],
                        usage={"prompt_tokens": prompt_tokens, "completion_tokens": n,
                               "total_tokens": prompt_tokens + n})
            self._chunk("data: " + json.dumps(last) + "\n\n")
            self._chunk("data: [DONE]\n\n")
            self._chunk("")
            return
        rec = self.state.metrics.request(prompt_tokens)
        e.generate(n, prompt_tokens, rec.token())
        rec.done(n)
        self._send(200, dict(base, object="chat.completion",
                             choices=[{"index": 0, "message": {"role": "assistant", "content": " tok" * n},
                                       "finish_reason": "length"}],
                             usage={"prompt_tokens": prompt_tokens, "completion_tokens": n,
                                    "total_tokens": prompt_tokens + n}))


def make_server(host, port, state):
    handler = type("BoundHandler", (Handler,), {"state": state})
    srv = Server((host, port), handler)
    t = threading.Thread(target=srv.serve_forever, name="http", daemon=True)
    t.start()
    return srv
