# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scenario, pace and token-rate settings read from SGLANG_DOUBLE_* environment variables."""
import json
import os

STAGES = ("init", "dist_init", "load_weights", "kv_cache", "cuda_graph", "http", "warmup", "ready")
# Seconds per stage at PACE 1.0: about 6 s from launch to ready.
BASE_DURATIONS = {"init": 0.3, "dist_init": 0.5, "load_weights": 2.0, "kv_cache": 0.4,
                  "cuda_graph": 1.4, "http": 0.4, "warmup": 0.8, "ready": 0.0}
SCENARIOS = ("ready", "crash_oom_cuda_graph", "crash_oom_kv", "crash_oom_weights", "crash_nccl",
             "crash_import", "crash_scheduler", "crash_scheduler_sigquit_first", "crash_warmup",
             "crash_port_in_use", "crash_arch", "crash_driver", "crash_model_not_found",
             "child_dies", "generate_fails")
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
        perf = env.get("SGLANG_DOUBLE_PERF")
        self.perf = json.loads(perf) if perf else (data.get("perf") or DEFAULT_PERF)
        self.hang_stage = None
        self.busy_seconds = 0.0
        name = self.scenario
        if name.startswith("hang:"):
            self.hang_stage = name.split(":", 1)[1]
            if self.hang_stage not in STAGES:
                raise SystemExit("sglang double: unknown hang stage %r (stages: %s)" % (self.hang_stage, ", ".join(STAGES)))
        elif name.startswith("busy:"):
            self.busy_seconds = float(name.split(":", 1)[1])
        elif name not in SCENARIOS:
            raise SystemExit("sglang double: unknown scenario %r" % name)

    def duration(self, stage):
        return float(self.durations.get(stage, 0.0))

    def mode_perf(self, speculative):
        key = "eagle3" if speculative else "baseline"
        merged = dict(DEFAULT_PERF[key])
        merged.update(self.perf.get(key) or {})
        return merged
