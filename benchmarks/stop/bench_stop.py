#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stopping what failed, before and after server_stop_grace_unready and the GPU sweep (pid-file mode, real processes).

The SGLang double runs under the real pid-file supervisor (module_utils/server/supervise.py) and registers its
schedulers' fake GPU memory with tools/fake_nvidia's nvidia-smi (SGLANG_DOUBLE_GPU_MIB), which lists a process
while it lives - as the driver lists a process until its memory is released.

  frozen   a start-up frozen in load_weights that ignores SIGTERM (scenario frozen:load_weights), stopped the moment
           the waiter would give its stall verdict. Time until the process tree is gone and nvidia-smi lists
           nothing of it: before = the stop bounded by server_stop_timeout (what the clean-up did), after = the
           instance controller's action=recover (server_stop_grace_unready).
  orphans  --cycles start/ready/stop cycles of a double whose rank-0 scheduler leaves a detached process on the GPU
           (SGLANG_DOUBLE_DETACH=1, setsid + double fork). Processes of the instance still on the GPU after them:
           before = the supervisor's stop alone (its process-group kill), after = action=stop (with the sweep).

Runs on a checkout (python3 benchmarks/stop/bench_stop.py; pid-file mode needs no root) or on a fleet host
(copy the checkout there; --manager systemd needs root and systemd as PID 1).

Usage: python3 benchmarks/stop/bench_stop.py [--manager pidfile|systemd] [--stop-timeout 120] [--grace 10] [--cycles 20]
"""
import argparse
import json
import os
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stop-timeout", type=int, default=120)
    ap.add_argument("--grace", type=int, default=10)
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--python", default=sys.executable, help="the python the double runs with")
    ap.add_argument("--only", choices=["frozen", "orphans"])
    ap.add_argument("--manager", choices=["pidfile", "systemd"], default="pidfile",
                    help="systemd: a unit sglang-NAME.service (root, systemd as PID 1; KillMode=control-group)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(REPO, "collections"))
    from ansible_collections.llmserve.sglang.plugins.module_utils.server import instance as si
    from ansible_collections.llmserve.sglang.plugins.module_utils.server import orphans
    from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
    from ansible_collections.llmserve.sglang.plugins.module_utils.server import supervise

    work = tempfile.mkdtemp(prefix="bench-stop-")
    apps = os.path.join(work, "apps")
    os.mkdir(apps)
    os.environ["FAKE_NVIDIA_APPS"] = apps
    os.environ["PATH"] = os.path.join(REPO, "tools", "fake_nvidia") + os.pathsep + os.environ["PATH"]

    def run(argv):
        import subprocess
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
        return p.returncode, p.stdout, p.stderr

    def make(name, scenario, extra=None):
        p = layout.paths({"instance": name, "config_dir": os.path.join(work, "etc"), "log_dir": os.path.join(work, "log")})
        p.update(run_dir=os.path.join(work, "run", name), pid_file=os.path.join(work, "run", name, "server.pid"),
                 supervisor=supervise.__file__)
        dirs = [{"path": d, "owner": None, "group": None, "mode": "0750"}
                for d in (p["instance_dir"], p["previous_dir"], os.path.dirname(p["log"]), p["run_dir"])]
        if a.manager == "systemd":
            p["unit"] = "/etc/systemd/system/" + p["unit_name"]
        inst = si.Instance({"manager": a.manager, "paths": p, "dirs": dirs, "log_keep": 1,
                            "stop_timeout": a.stop_timeout, "stop_grace_unready": a.grace}, run, python=sys.executable)
        inst.ensure_dirs()
        env = {"PYTHONPATH": os.path.join(REPO, "tools", "sglang_double"), "SGLANG_DOUBLE_SCENARIO": scenario,
               "SGLANG_DOUBLE_PACE": "0.05", "SGLANG_DOUBLE_GPU_MIB": "70000", "FAKE_NVIDIA_APPS": apps,
               "SGLANG_DOUBLE_EVENTS": os.path.join(work, name + ".events"), orphans.MARKER: name}
        env.update(extra or {})
        with open(p["env"], "w") as f:
            f.write("".join("%s=%s\n" % (k, json.dumps(v)) for k, v in env.items()))
        port = 31000 + len(os.listdir(os.path.join(work, "run")))
        with open(p["launch_spec"], "w") as f:
            json.dump({"pid_file": p["pid_file"], "log": p["log"], "env_file": p["env"], "timeout": a.stop_timeout,
                       "command": [a.python, "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2",
                                   "--host", "127.0.0.1", "--port", str(port)]}, f)
        if a.manager == "systemd":
            with open(p["launch_spec"]) as f:
                command = json.load(f)["command"]
            with open(p["unit"], "w") as f:
                f.write("[Service]\nType=simple\nEnvironmentFile=%s\nExecStart=%s\nStandardOutput=append:%s\n"
                        "StandardError=append:%s\nTimeoutStopSec=%d\nKillMode=control-group\nRestart=on-failure\n"
                        "[Install]\nWantedBy=multi-user.target\n"
                        % (p["env"], " ".join(command), p["log"], p["log"], a.stop_timeout))
            run(["systemctl", "daemon-reload"])
        return inst, p, env["SGLANG_DOUBLE_EVENTS"]

    def stop_before(p):
        """What the clean-up did before: the manager's stop, bounded by server_stop_timeout, and nothing after it."""
        if a.manager == "systemd":
            run(["systemctl", "stop", p["unit_name"]])
        else:
            supervise.stop_server(p["pid_file"], a.stop_timeout)

    def running(inst, p):
        return inst.state()["active_state"] not in ("inactive", "failed")

    def ours_on_gpu(name):
        return [x["pid"] for x in orphans.gpu_processes() or [] if orphans.why_ours(x["pid"], name)]

    def wait(pred, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return True
            time.sleep(0.02)
        return False

    def ready(events):
        return os.path.exists(events) and '"ready"' in open(events).read()

    out = {}
    if a.only in (None, "frozen"):
        for label in ("before", "after"):
            name = "frozen-" + label
            inst, p, events = make(name, "frozen:load_weights")
            si.act(inst, {"action": "start", "fingerprint": "x"})
            wait(lambda: len(ours_on_gpu(name)) == 2)
            t0 = time.time()  # the stall verdict
            if label == "before":
                stop_before(p)
            else:
                si.act(inst, {"action": "recover", "on_failure": "stop", "stop_grace_unready": a.grace})
            wait(lambda: not ours_on_gpu(name) and not running(inst, p), a.stop_timeout + 30)
            out["frozen_" + label] = round(time.time() - t0, 2)
            print("frozen start-up, verdict to GPU free, %s: %.2f s" % (label, out["frozen_" + label]), flush=True)
        print("ratio after/before: %.3f" % (out["frozen_after"] / out["frozen_before"]))
    if a.only in (None, "orphans"):
        for label in ("before", "after"):
            name = "detach-" + label
            inst, p, events = make(name, "ready", {"SGLANG_DOUBLE_DETACH": "1"})
            for _ in range(a.cycles):
                open(events, "w").close()
                si.act(inst, {"action": "start", "fingerprint": "x"})
                wait(lambda: ready(events))
                if label == "before":
                    stop_before(p)
                else:
                    si.act(inst, {"action": "stop"})
            time.sleep(1)
            left = ours_on_gpu(name)
            out["orphans_" + label] = len(left)
            print("after %d stop/start cycles, %s: %d process(es) of the instance on the GPU (%d MiB)"
                  % (a.cycles, label, len(left), 70000 * len(left)), flush=True)
            orphans.sweep(name, grace=2)  # leave the host clean
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
