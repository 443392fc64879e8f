# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which SGLang release has what: the one table of version gates (pure).

Everything that depends on the SGLang version asks here - the readiness endpoint (server/health.py, ready/params.py,
the router), the adaptive flag and its config format (sglang/adaptive.py, sglang/argv.py, the benchmark), the
PCIe-IPC all-reduce (sglang/allreduce.py), the CLI generation (sglang/argv.py), the start-up log lines
(sglang/stages.py, ready/verdicts.py; the SGLang double prints the same), the verified versions and the Python each
needs (roles/sglang, tests/sglang_wheels). Support for a new SGLang release starts with this file and
``tests/unit/plugins/module_utils/sglang/test_sglang_gates_wheels.py``, which reads each supported wheel's source
and fails when a line, flag or endpoint named here is not in it.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import compare, is_version, release

# The first release with each feature. Sources: the PyPI wheels (file named beside each).
GATES = {
    # entrypoints/http_server.py: GET /ready, 200 once warm, 503 while starting or draining
    "ready": "0.5.20",
    # server_args.py: --speculative-adaptive (speculative/adaptive_spec_params.py reads its JSON config)
    "adaptive": "0.5.11",
    # adaptive config keyed by batch-size slots instead of one flat candidate list
    "adaptive_slots": "0.5.13",
    # slots may hold step 0 (drafting off above a batch size)
    "adaptive_zero": "0.5.14",
    # SGLANG_ENABLE_PCIE_IPC_ALLREDUCE: FlashInfer's PCIe-IPC all-reduce
    "pcie_ipc_allreduce": "0.5.21",
    # distributed/bootstrap.py logs "Init parallel begin/ends." instead of "Init torch distributed begin/ends."
    "init_parallel_log": "0.5.21",
    # the start-up settings line is server_args={...} (ServerArgs.resolved_dict()), not a ServerArgs(...) repr
    "server_args_dict": "0.5.20",
    # arg_groups/fields/*.py: the renamed cuda-graph flags, allreduce fusion as a backend choice
    "new_cli": "0.5.23",
    # managers/: the load collector takes a sixth port after the DP-attention rendezvous (sglang/ports.py)
    "load_collector_port": "0.5.13",
    # SGLang picks its NCCL port below the ephemeral range (22000-29999) itself (sglang/ports.py)
    "nccl_port_below_ephemeral": "0.5.22",
    # utils: third_party_cache_defaults() redirects Triton, Inductor, CUDA and FlashInfer caches under
    # SGLANG_CACHE_DIR (sglang/caches.py)
    "cache_redirect": "0.5.20",
    # server_args.py: --weight-loader-prefetch-checkpoints (each rank prefetches a share of the shards; in the
    # 0.5.15.post1 and 0.5.23 wheels, not in 0.5.9's or 0.5.10.post1's; the plan applies it on network filesystems)
    "weight_prefetch": "0.5.15.post1",
    # entrypoints/http_server.py health_generate, one handler for /health and /health_generate: a 1-token
    # generation that passes on any output within SGLANG_HEALTH_CHECK_TIMEOUT (int, default 20); a timeout logs
    # "Health check failed. ..." and latches server_status UnHealthy (/ready 503, a SIGTERM no longer drains) until a
    # later check passes; SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=0 makes /health (not /health_generate) a status
    # check. In every wheel read (0.5.9, the oldest, to 0.5.23; sglang#22511)
    "health_latch": "0.5.9",
}

# Versions whose flags, log lines and endpoints were read from the wheel and are exercised by the tests
# (tests/real_parser, tests/sglang_wheels), with the lowest Python each installs on.
VERIFIED = {
    "0.5.9": {"python_min": "3.10"},
    "0.5.10.post1": {"python_min": "3.10"},
    "0.5.15.post1": {"python_min": "3.10"},  # torch==2.11.0: the torch of NGC-style hosts such as the lent H200
    "0.5.23": {"python_min": "3.11"},
}
VERIFIED_VERSIONS = tuple(VERIFIED)
# The release roles/sglang installs when sglang_version is not set, and the SGLang double impersonates by default:
# roles/sglang's defaults and argument spec are generated from it (tools/versions/sync_versions.py; a unit test fails
# when they are stale), the double's is its newest flag table.
DEFAULT_VERSION = "0.5.23"
PYTHON_MIN_DEFAULT = "3.10"

# SGLang answers /health within its own 1 s budget, so a probe that gives it 1 s flaps on a busy server
# (modelplane#206). The one home of how long a probe of SGLang waits: every probe the collection makes (the client's
# readiness call, the waiter's probe) or configures (roles/router's --health-check-timeout-secs, refused below it
# through the _sglang_limit filter) gives at least MIN_PROBE_TIMEOUT_S.
SGLANG_HEALTH_BUDGET_S = 1.0
MIN_PROBE_TIMEOUT_S = 2.0 * SGLANG_HEALTH_BUDGET_S
# the waiter gives a probe this many of its intervals (a probe that outlasts them only delays the next one)
PROBE_INTERVALS = 5
# what the YAML side may ask of this file (the _sglang_limit filter)
LIMITS = {"min_probe_timeout": MIN_PROBE_TIMEOUT_S}


def probe_timeout(interval):
    """Seconds a probe made every ``interval`` seconds waits for its answer: :data:`PROBE_INTERVALS` intervals, never
    less than :data:`MIN_PROBE_TIMEOUT_S`."""
    return max(MIN_PROBE_TIMEOUT_S, PROBE_INTERVALS * float(interval or 0))


# -- The health latch: who probes what (roles/router, roles/server, roles/monitoring; docs/health.md) ----------------
HEALTH_CHECK_TIMEOUT_DEFAULT_S = 20  # SGLang's own SGLANG_HEALTH_CHECK_TIMEOUT
HEALTH_LATCH_LINE = "Health check failed. Server couldn't get a response from detokenizer"
HEALTH_CHECK_TIMEOUT_ENV = "SGLANG_HEALTH_CHECK_TIMEOUT"
HEALTH_GENERATION_ENV = "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION"
# The liveness probe's timeout: SGLang schedules prefill before decode (managers/scheduler.py "Run prefill first if
# possible"), so while the longest prompt the instance admits (context_length tokens, chunked_prefill_size at a time)
# is prefilled nothing comes out, and a health check asked meanwhile fails. Seconds = MARGIN x tokens / a floor of the
# prefill rate of a large model under load, never under SGLang's 20 s; the model's own context length when the
# settings give none is not known here, so 128k tokens stands for it.
PREFILL_FLOOR_TOKENS_PER_S = 4000.0
HEALTH_TIMEOUT_MARGIN = 2.0
CONTEXT_FALLBACK_TOKENS = 131072
# consecutive failures of the liveness probe (/health_generate) before anything acts on it
LIVENESS_FAILURES = 3


def longest_prefill_tokens(args):
    """(tokens of the longest prompt the instance admits, tokens per forward) from launch args (snake_case keys)."""
    args = args or {}
    ctx = args.get("context_length")
    tokens = int(ctx) if _positive_int(ctx) else CONTEXT_FALLBACK_TOKENS
    chunk = args.get("chunked_prefill_size")
    per_forward = min(int(chunk), tokens) if _positive_int(chunk) else tokens  # -1: chunking off, one forward
    return tokens, per_forward


def health_check_timeout(args, override=0):
    """SGLANG_HEALTH_CHECK_TIMEOUT for an instance: ``override`` (s) when > 0, else derived from its longest prefill."""
    if _positive_int(override):
        return int(override)
    tokens, _per_forward = longest_prefill_tokens(args)
    derived = -(-HEALTH_TIMEOUT_MARGIN * tokens // PREFILL_FLOOR_TOKENS_PER_S)  # ceil
    return max(HEALTH_CHECK_TIMEOUT_DEFAULT_S, int(derived))


def health_env(version, args, env=None, status_check=True, timeout_override=0):
    """The server's health variables SGLang ``version`` reads, where ``env`` (what the user set) does not set them:
    SGLANG_HEALTH_CHECK_TIMEOUT fitted to the longest prefill, and SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=0 when
    ``status_check`` (a balancer or monitoring may probe /health: it must not be able to latch the server)."""
    env = env or {}
    if not has("health_latch", version):
        return {}
    out = {}
    if HEALTH_CHECK_TIMEOUT_ENV not in env:
        out[HEALTH_CHECK_TIMEOUT_ENV] = str(health_check_timeout(args, timeout_override))
    if status_check and HEALTH_GENERATION_ENV not in env:
        out[HEALTH_GENERATION_ENV] = "0"
    return out


def probes(version, status_check=True):
    """Who probes what on an SGLang ``version`` server: ``gateway`` (roles/router's --health-check-endpoint: /ready
    where it exists, it never generates), ``liveness`` (the one probe allowed to generate, LIVENESS_FAILURES in a row
    before action), ``health_generates`` (does /health run a generation), ``latched`` (how the latched state shows)."""
    ready = has("ready", version)
    return {
        "gateway": "/ready" if ready else "/health",
        "liveness": "/health_generate",
        "liveness_failures": LIVENESS_FAILURES,
        "health_generates": not status_check,
        "latch": has("health_latch", version),
        "latched": ("/ready 503 while the process serves, log: %s" % HEALTH_LATCH_LINE) if ready
                   else ("/health_generate 503, log: %s" % HEALTH_LATCH_LINE),
    }


def _positive_int(value):
    try:
        return not isinstance(value, bool) and int(value) > 0 and int(value) == float(value)
    except (TypeError, ValueError):
        return False


# Start-up log lines by version: {name: ((first version, text), ...)}, newest last. A reader that does not know the
# version matches every text (stage_patterns); the SGLang double prints the one of its version (line_for).
STARTUP_LINES = {
    # the resolved settings at start: a ServerArgs repr up to 0.5.15.post1, a dict (resolved_dict()) from 0.5.20
    "server_args": ((None, "server_args=ServerArgs("), ("0.5.20", "server_args={")),
    "dist_init_begin": ((None, "Init torch distributed begin."), ("0.5.21", "Init parallel begin.")),
    "dist_init_end": ((None, "Init torch distributed ends."), ("0.5.21", "Init parallel ends.")),
}


# Gates compared as pip orders versions (a pre-release of the first version predates it); the others on the release
# (X.Y.Z: 0.5.23rc1 has the 0.5.23 command line, 0.5.10.post1 the 0.5.10 one).
PEP440_GATES = ("ready", "load_collector_port", "nccl_port_below_ephemeral", "cache_redirect", "weight_prefetch")


def has(gate, version):
    """True when SGLang ``version`` has ``gate`` (a key of :data:`GATES`); False for an unknown version."""
    if not version or not is_version(str(version)):
        return False
    if gate in PEP440_GATES:
        return compare(str(version), GATES[gate]) >= 0
    return release(str(version)) >= release(GATES[gate])


def first(gate):
    """The first release with ``gate`` as a (major, minor, patch) tuple."""
    return release(GATES[gate])


def health_path(versions):
    """'/ready' when every version is known and has it, else '/health' (which every version answers)."""
    versions = [str(v) for v in versions or []]
    if versions and all(has("ready", v) for v in versions):
        return "/ready"
    return "/health"


def line_for(name, version):
    """The text SGLang ``version`` logs for start-up line ``name`` (the oldest wording for an unknown version)."""
    text = STARTUP_LINES[name][0][1]
    for since, candidate in STARTUP_LINES[name]:
        if since is None or (version and is_version(str(version)) and release(str(version)) >= release(since)):
            text = candidate
    return text


def lines(name):
    """Every wording of start-up line ``name`` across versions."""
    return tuple(text for _since, text in STARTUP_LINES[name])


def python_min(version):
    """The lowest Python ``version`` installs on (the verified table, else the default)."""
    return (VERIFIED.get(str(version)) or {}).get("python_min", PYTHON_MIN_DEFAULT)
