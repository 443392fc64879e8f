# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scenario, pace and token-rate settings read from SGLANG_DOUBLE_* environment variables."""
import json
import os
import re

STAGES = ("init", "dist_init", "load_weights", "kv_cache", "cuda_graph", "http", "warmup", "ready")
# Seconds per stage at PACE 1.0: about 6 s from launch to ready.
BASE_DURATIONS = {"init": 0.3, "dist_init": 0.5, "load_weights": 2.0, "kv_cache": 0.4,
                  "cuda_graph": 1.4, "http": 0.4, "warmup": 0.8, "ready": 0.0,
                  # alive after a bind error before exiting (real 0.5.15.post1: ~70 s after a ~80 s start)
                  "linger": 30.0,
                  # a step that never returns, until the scheduler's watchdog ends it (real: --watchdog-timeout 300)
                  "watchdog": 3.0}
SCENARIOS = ("ready", "crash_oom_cuda_graph", "crash_oom_kv", "crash_oom_weights", "crash_nccl",
             "crash_import", "crash_scheduler", "crash_scheduler_sigquit_first", "crash_warmup",
             "crash_port_in_use", "crash_arch", "crash_driver", "crash_model_not_found",
             "child_dies", "generate_fails", "crash_shm", "crash_p2p", "crash_sigbus")
# crash_arch:<layer>: the same refusal of the GPU's architecture in each layer's words (texts.ARCH_REFUSALS)
ARCH_LAYERS = ("cuda", "hip", "triton", "flashinfer", "sglang", "ptxas")
# watchdog:<stage>: the scheduler stages a step can hang in until the watchdog fires
WATCHDOG_STAGES = ("dist_init", "load_weights", "kv_cache", "cuda_graph")
DEFAULT_PERF = {"baseline": {"per_request_tps": 60.0, "saturation_tps": 773.0},
                "eagle3": {"per_request_tps": 96.0, "saturation_tps": 354.0, "accept_length": 3.2}}


class Settings(object):
    def __init__(self, env=None):
        env = os.environ if env is None else env
        data = {}
        path = env.get("SGLANG_DOUBLE_SCENARIO_FILE")
        if path:
            with open(path) as f:
                data = json.load(f)
        self.scenario = env.get("SGLANG_DOUBLE_SCENARIO") or data.get("scenario") or "ready"
        self.pace = float(env.get("SGLANG_DOUBLE_PACE") or data.get("pace") or 1.0)
        self.shards = int(env.get("SGLANG_DOUBLE_SHARDS") or data.get("shards") or 8)
        self.events = env.get("SGLANG_DOUBLE_EVENTS") or data.get("events")
        # Durations from the scenario file are absolute seconds (not scaled by PACE).
        self.durations = dict((k, v * self.pace) for k, v in BASE_DURATIONS.items())
        self.durations.update(data.get("durations") or {})
        # prefill rate (prompt tokens/s; 0 = instant): a prefill holds the scheduler and emits nothing, as a long
        # (chunked) prefill in SGLang does - what latches /health (sgl-project/sglang#22511)
        self.prefill_tps = float(env.get("SGLANG_DOUBLE_PREFILL_TPS") or data.get("prefill_tps") or 0)
        perf = env.get("SGLANG_DOUBLE_PERF")
        self.perf = json.loads(perf) if perf else (data.get("perf") or DEFAULT_PERF)
        self.hang_stage = None
        self.busy_seconds = 0.0
        self.fail_after = None  # generate_fails_after:<s>: ready, then generation fails <s> later (a GPU gone bad)
        self.arch_layer = None
        self.watchdog_stage = None
        name = self.scenario
        # frozen:<stage> hangs like hang:<stage> and does not act on SIGTERM, as a process blocked inside a CUDA or
        # NCCL call never returns to Python to run its handler: only SIGKILL ends it.
        self.frozen = name.startswith("frozen:")
        if name.startswith("hang:") or self.frozen:
            self.hang_stage = name.split(":", 1)[1]
            if self.hang_stage not in STAGES:
                raise SystemExit("sglang double: unknown hang stage %r (stages: %s)" % (self.hang_stage, ", ".join(STAGES)))
        elif name.startswith("busy:"):
            self.busy_seconds = float(name.split(":", 1)[1])
        elif name.startswith("generate_fails_after:"):
            self.fail_after = float(name.split(":", 1)[1])
        elif name.startswith("crash_arch:"):
            self.arch_layer = name.split(":", 1)[1]
            if self.arch_layer not in ARCH_LAYERS:
                raise SystemExit("sglang double: unknown arch layer %r (layers: %s)" % (self.arch_layer, ", ".join(ARCH_LAYERS)))
        elif name.startswith("watchdog:"):
            self.watchdog_stage = name.split(":", 1)[1]
            if self.watchdog_stage not in WATCHDOG_STAGES:
                raise SystemExit("sglang double: unknown watchdog stage %r (stages: %s)"
                                 % (self.watchdog_stage, ", ".join(WATCHDOG_STAGES)))
        elif name not in SCENARIOS:
            raise SystemExit("sglang double: unknown scenario %r" % name)

    def duration(self, stage):
        return float(self.durations.get(stage, 0.0))

    def mode_perf(self, speculative):
        key = "eagle3" if speculative else "baseline"
        merged = dict(DEFAULT_PERF[key])
        merged.update(self.perf.get(key) or {})
        return merged


# ---- `--config FILE.yaml`, read as SGLang reads it (yaml.safe_load: YAML 1.1 scalars, PyYAML's resolvers) ----------
# The double's venv has no PyYAML; this reads the flat mappings deployments write (`key: scalar` or `key: [a, b]`)
# with PyYAML's semantics, and tests/unit/tools/test_sglang_double.py holds it against yaml.safe_load.
_YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
                 "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
                 "L": "\u2028", "P": "\u2029"}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}
_BOOL_RE = re.compile(r"^(yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_NULL_RE = re.compile(r"^(~|null|Null|NULL|)$")
_INT_RE = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT_RE = re.compile(r"^[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?$")


def _double_quoted(text, i):
    """Parse a YAML double-quoted scalar starting at text[i] == '"'; returns (value, index after it)."""
    out = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return "".join(out), i + 1
        if c == "\\":
            e = text[i + 1:i + 2]
            if e in _YAML_ESCAPES:
                out.append(_YAML_ESCAPES[e])
                i += 2
            elif e in _HEX_LEN:
                n = _HEX_LEN[e]
                out.append(chr(int(text[i + 2:i + 2 + n], 16)))
                i += 2 + n
            else:
                raise ValueError("found unknown escape character %r" % e)
        else:
            out.append(c)
            i += 1
    raise ValueError("unterminated double-quoted scalar")


def _single_quoted(text, i):
    out = []
    i += 1
    while i < len(text):
        if text[i] == "'":
            if text[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(text[i])
        i += 1
    raise ValueError("unterminated single-quoted scalar")


def _plain(text):
    if _NULL_RE.match(text):
        return None
    if _BOOL_RE.match(text):
        return text.lower() in ("yes", "true", "on")
    if _INT_RE.match(text):
        return int(text.replace("_", ""))
    if _FLOAT_RE.match(text) and text not in (".", "-.", "+."):
        return float(text.replace("_", ""))
    return text


def _rest(text, i):
    """After a scalar only spaces and a comment may follow."""
    tail = text[i:].strip()
    if tail and not tail.startswith("#"):
        raise ValueError("unexpected text after a quoted scalar: %r" % tail)


def _value(text):
    text = text.strip()
    if text.startswith('"'):
        value, end = _double_quoted(text, 0)
        _rest(text, end)
        return value
    if text.startswith("'"):
        value, end = _single_quoted(text, 0)
        _rest(text, end)
        return value
    if text.startswith("["):
        inner = text[1:text.rindex("]")].strip()
        return [_value(p) for p in inner.split(",")] if inner else []
    return _plain(re.split(r"\s#", text, maxsplit=1)[0].strip())


def read_config_yaml(path):
    """The mapping of a SGLang --config file, as yaml.safe_load returns it (PyYAML when it is installed)."""
    try:
        import yaml  # pylint: disable=import-outside-toplevel
    except ImportError:
        yaml = None
    with open(path) as f:
        text = f.read()
    if yaml is not None:
        return yaml.safe_load(text) or {}
    data = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#") or line.strip() == "---":
            continue
        if line[0].isspace():
            raise ValueError("%s:%d: the double reads only a flat 'key: value' mapping" % (path, lineno))
        key, sep, value = line.partition(": ") if ": " in line else line.partition(":")
        if not sep:
            raise ValueError("%s:%d: not a 'key: value' line" % (path, lineno))
        try:
            data[key.strip()] = _value(value)
        except ValueError as e:
            raise ValueError("%s:%d: %s" % (path, lineno, e))
    return data
