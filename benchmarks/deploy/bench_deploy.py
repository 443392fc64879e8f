#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A deploy with nothing to change: wall time, tasks per host and SSH round trips, for 1 and 8 hosts.

Brings up a local fleet (tools/fleet, podman + systemd + sshd), makes its hosts stand-ins for GPU hosts
(playbooks/demo/prepare.yml: the SGLang double and the fake nvidia-smi), deploys once on every host, then times
``--runs`` further deploys that have nothing to change, on the first host alone and on all of them.

What is deployed (``--playbook``):
  server          roles/server alone (the molecule server scenario's instance)
  deploy_eagle3   the whole ``playbooks/deploy_eagle3.yml`` of the checkout, with the demo's inventory
                  (``playbooks/demo/inventory.yml``: the seed deployment on the double; roles/cuda and roles/sglang
                  are off there, as on every fleet host: no driver, no GPUs) - GPU facts, the GPU health gate,
                  roles/models (no models listed) and roles/server

Measured per run:
  wall       seconds of the ansible-playbook process
  tasks      tasks that ran on a host (ok + changed; skipped ones listed apart) - from the json callback
  ssh        ssh processes ansible started (an ``ssh_executable`` wrapper counts them): one per module run with
             pipelining, so this is the number of round trips to the hosts
  cpu        CPU seconds (user + system) of the controller (ansible-playbook and every process it waited for: its
             workers, ssh) and of the deployed hosts (their containers' cgroups: sshd, the modules, nvidia-smi
             stand-ins, the double), the hosts' idle rate (measured before the runs) taken out; with the machine's
             cores this gives the floor no scheduling can beat: (controller + hosts) / cores

``--collection`` points at another checkout of the collection (e.g. main) so that before and after are measured with
the same fleet, playbook and settings in one sitting; its figures are printed side by side, with the ratio.

  python3 benchmarks/deploy/bench_deploy.py [--hosts 1,8] [--runs 3] [--collection /path/to/other/checkout]
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The same instance as the molecule server scenario: the double, TP 8, EAGLE-3.
PLAYBOOK = """---
- name: Deploy roles/server (benchmark)
  hosts: "{{ bench_hosts }}"
  become: true
  gather_facts: false
  roles:
    - role: llmserve.sglang.server
      vars:
        server_instance: bench
        server_python: /opt/sglang/venv/bin/python
        server_model_path: /models/Kimi-K2.5-int4
        server_served_model_name: kimi-k2.5
        server_tp: 8
        server_port: 30000
        server_speculative:
          algorithm: EAGLE3
          draft_model_path: /models/Kimi-K2.5-EAGLE3
          num_steps: 3
          eagle_topk: 1
          num_draft_tokens: 4
        server_args:
          trust-remote-code: true
          cuda-graph-max-bs: 128
        server_env:
          SGLANG_DOUBLE_SCENARIO: ready
          SGLANG_DOUBLE_PACE: "0.1"
        server_api_key: bench-key-1
        server_ready_timeout: 300
        server_progress_interval: 30
"""

WHOLE_ENV = {"SGLANG_DOUBLE_SCENARIO": "ready", "SGLANG_DOUBLE_PACE": "0.1"}

SSH_WRAPPER = """#!/bin/sh
echo x >> "{log}"
exec ssh "$@"
"""


def sh(argv, env=None, cwd=None, check=True):
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    if check and proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit("failed (rc %d): %s" % (proc.returncode, " ".join(argv)))
    return proc


def _cgroup_file(container):
    """The file that holds a container's CPU time (cgroup v1 cpuacct, ns; or v2 cpu.stat, us), or None."""
    path = sh(["podman", "inspect", "-f", "{{.State.CgroupPath}}", container], check=False).stdout.strip()
    if not path:
        return None
    for candidate in ("/sys/fs/cgroup/cpuacct%s/cpuacct.usage" % path, "/sys/fs/cgroup/cpu,cpuacct%s/cpuacct.usage" % path,
                      "/sys/fs/cgroup%s/cpu.stat" % path, "/sys/fs/cgroup/unified%s/cpu.stat" % path):
        if os.path.exists(candidate):
            return candidate
    return None


def cpu_seconds(path):
    """CPU seconds a cgroup has used (0.0 when it cannot be read)."""
    try:
        with open(path) as f:
            text = f.read()
    except (OSError, TypeError):
        return 0.0
    if path.endswith("cpuacct.usage"):
        return int(text.strip()) / 1e9
    for line in text.splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    return 0.0


class HostCpu(object):
    """The fleet hosts' CPU time, read from their containers' cgroups, and their idle rate."""

    def __init__(self, hosts):
        self.files = dict((h, _cgroup_file(h)) for h in hosts)
        self.idle = dict((h, 0.0) for h in hosts)  # CPU seconds per second with no deploy running

    def read(self):
        return dict((h, cpu_seconds(f)) for h, f in self.files.items())

    def measure_idle(self, seconds):
        before, t0 = self.read(), time.time()
        time.sleep(seconds)
        after, span = self.read(), time.time() - t0
        self.idle = dict((h, max(0.0, (after[h] - before[h]) / span)) for h in before)

    def readable(self):
        return all(self.files.values())


class Bench(object):
    def __init__(self, collection, inventory, workdir, label, playbook="server", host_cpu=None):
        self.label = label
        self.host_cpu = host_cpu
        self.whole = playbook == "deploy_eagle3"
        self.workdir = workdir
        coll = os.path.join(workdir, "collections-" + label)
        os.makedirs(os.path.join(coll, "ansible_collections", "llmserve"), exist_ok=True)
        link = os.path.join(coll, "ansible_collections", "llmserve", "sglang")
        if not os.path.islink(link):
            os.symlink(os.path.abspath(collection), link)
        if self.whole:
            self.playbook = os.path.join(os.path.abspath(collection), "playbooks", "deploy_eagle3.yml")
            self.inventories = [inventory, os.path.join(os.path.abspath(collection), "playbooks", "demo", "inventory.yml")]
        else:
            self.playbook = os.path.join(workdir, "deploy.yml")
            with open(self.playbook, "w") as f:
                f.write(PLAYBOOK)
            self.inventories = [inventory]
        self.ssh_log = os.path.join(workdir, "ssh-%s.log" % label)
        wrapper = os.path.join(workdir, "ssh-count-" + label)
        with open(wrapper, "w") as f:
            f.write(SSH_WRAPPER.format(log=self.ssh_log))
        os.chmod(wrapper, 0o755)
        self.inventory = inventory
        self.env = dict(os.environ)
        self.env.update({
            "ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
            "ANSIBLE_COLLECTIONS_PATH": coll,
            "ANSIBLE_ROLES_PATH": os.path.join(collection, "roles"),
            "ANSIBLE_SSH_EXECUTABLE": wrapper,
            "ANSIBLE_HOST_KEY_CHECKING": "False",
        })

    def deploy(self, hosts, timed=True):
        env = dict(self.env)
        count = os.path.join(self.workdir, "count-%s.json" % self.label)
        env["ANSIBLE_CALLBACK_PLUGINS"] = os.path.join(REPO, "benchmarks", "deploy", "callback")
        env["ANSIBLE_CALLBACKS_ENABLED"] = "bench_count"
        env["LLMSERVE_BENCH_COUNT"] = count
        if os.path.exists(self.ssh_log):
            os.unlink(self.ssh_log)
        argv = [os.path.join(REPO, ".venv", "bin", "ansible-playbook"), self.playbook]
        for inv in self.inventories:
            argv += ["-i", inv]
        if self.whole:
            # the demo's seed deployment, the double paced as in the server benchmark
            argv += ["-e", "llmserve_hosts=" + ",".join(hosts), "-e", json.dumps({"server_env": WHOLE_ENV})]
        else:
            argv += ["-e", "bench_hosts=" + ",".join(hosts)]
        load = os.getloadavg()[0]
        own0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        hosts0 = self.host_cpu.read() if self.host_cpu else {}
        t0 = time.time()
        proc = sh(argv, env=env, check=False)
        wall = time.time() - t0
        hosts1 = self.host_cpu.read() if self.host_cpu else {}
        own1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_controller = (own1.ru_utime - own0.ru_utime) + (own1.ru_stime - own0.ru_stime)
        # the deployed hosts' CPU time, less what they use idle (the double's own loop, systemd) over the run
        cpu_hosts = sum(hosts1[h] - hosts0[h] - self.host_cpu.idle[h] * wall for h in hosts if h in hosts1)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-6000:] + proc.stderr[-3000:])
            raise SystemExit("%s: the deploy on %d host(s) failed" % (self.label, len(hosts)))
        with open(count) as f:
            per_host = json.load(f)
        task_times = per_host.pop("_tasks", [])
        with open(self.ssh_log) as f:
            ssh = sum(1 for _ in f)
        changed = sum(r["changed"] for r in per_host.values())
        return {"wall": wall, "tasks": max(r["ran"] for r in per_host.values()),
                "skipped": max(r["skipped"] for r in per_host.values()), "ssh": ssh, "changed": changed,
                "load": load, "hosts": len(hosts), "task_seconds": task_times,
                "cpu_controller": cpu_controller, "cpu_hosts": cpu_hosts, "cpu": cpu_controller + cpu_hosts}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--hosts", default="1,8", help="host counts to measure (comma separated, default 1,8)")
    ap.add_argument("--runs", type=int, default=3, help="timed no-change deploys per host count (median reported)")
    ap.add_argument("--collection", help="another checkout of the collection to measure in the same sitting (baseline)")
    ap.add_argument("--fleet", default=os.environ.get("LLMSERVE_FLEET_NAME", "bench") + "-deploy",
                    help="fleet name (default $LLMSERVE_FLEET_NAME-deploy)")
    ap.add_argument("--playbook", choices=("server", "deploy_eagle3"), default="server",
                    help="roles/server alone (default) or the whole playbooks/deploy_eagle3.yml")
    ap.add_argument("--no-this", action="store_true",
                    help="measure only --collection (e.g. the baseline alone, before this checkout has changed)")
    ap.add_argument("--raw", help="write every timed run (wall, tasks, skipped, ssh, load) to this JSON file")
    ap.add_argument("--keep", action="store_true", help="leave the fleet up afterwards")
    ap.add_argument("--idle", type=float, default=20.0,
                    help="seconds to measure the hosts' idle CPU rate before the timed runs (default 20)")
    args = ap.parse_args()
    counts = [int(n) for n in args.hosts.split(",")]
    fleet_py = os.path.join(REPO, "tools", "fleet", "fleet.py")
    up = json.loads(sh([sys.executable, fleet_py, "up", "-n", str(max(counts)), "--name", args.fleet, "--json"]).stdout)
    inventory = os.path.join(REPO, ".fleet", args.fleet, "inventory.yml")
    hosts = [h["host"] for h in up["hosts"]]
    workdir = tempfile.mkdtemp(prefix="bench-deploy-")
    try:
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"))
        print("preparing %d fleet host(s) (the double, the fake nvidia-smi)..." % len(hosts), flush=True)
        sh([os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", inventory,
            os.path.join(REPO, "playbooks", "demo", "prepare.yml")], env=env, cwd=REPO)
        host_cpu = HostCpu(hosts)
        if not host_cpu.readable():
            print("warning: the hosts' cgroup CPU time cannot be read (%s): host CPU reported as 0" % ", ".join(
                h for h, f in host_cpu.files.items() if not f), flush=True)
        cores = os.cpu_count() or 1
        benches = [] if args.no_this else [Bench(REPO, inventory, workdir, "this", args.playbook, host_cpu)]
        if args.collection:
            benches.insert(0, Bench(args.collection, inventory, workdir, "baseline", args.playbook, host_cpu))
        if not benches:
            raise SystemExit("--no-this needs --collection")
        results, raw = {}, []
        for bench in benches:
            # each checkout deploys once on every host first (its own files, its own fingerprint)
            first = bench.deploy(hosts)
            print("%-8s first deploy on %d hosts: %.1f s, %d changed task results" % (
                bench.label, len(hosts), first["wall"], first["changed"]), flush=True)
            if args.idle > 0:
                host_cpu.measure_idle(args.idle)
                print("hosts idle: %.3f CPU s/s in all (%d hosts)" % (sum(host_cpu.idle.values()), len(hosts)),
                      flush=True)
            for n in counts:
                runs = [bench.deploy(hosts[:n]) for _ in range(args.runs)]
                if any(r["changed"] for r in runs):
                    raise SystemExit("%s: a no-change deploy on %d host(s) changed something" % (bench.label, n))
                raw.extend(dict(r, checkout=bench.label) for r in runs)
                res = {k: statistics.median(r[k] for r in runs)
                       for k in ("wall", "tasks", "skipped", "ssh", "load", "cpu_controller", "cpu_hosts", "cpu")}
                results[(bench.label, n)] = res
                print("%-8s %d host(s): wall %.1f s  tasks/host %d (+%d skipped)  ssh %d  load %.1f  cpu %.1f s "
                      "(controller %.1f, hosts %.1f)  (median of %d; walls %s)" % (
                          bench.label, n, res["wall"], res["tasks"], res["skipped"], res["ssh"], res["load"],
                          res["cpu"], res["cpu_controller"], res["cpu_hosts"], args.runs,
                          ", ".join("%.1f" % r["wall"] for r in runs)), flush=True)
        print("\nno-change deploy of %s" % ("playbooks/deploy_eagle3.yml" if args.playbook == "deploy_eagle3"
                                            else "roles/server"))
        print("| checkout | hosts | wall s | tasks/host | skipped/host | ssh round trips | load (1 min) "
              "| CPU s controller + hosts | floor s (CPU / %d cores) |" % cores)
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for (label, n), r in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            print("| %s | %d | %.1f | %d | %d | %d | %.1f | %.1f + %.1f | %.1f |" % (
                label, n, r["wall"], r["tasks"], r["skipped"], r["ssh"], r["load"], r["cpu_controller"],
                r["cpu_hosts"], r["cpu"] / cores))
        for label in sorted({label for label, _ in results}):
            if (label, 1) in results and (label, max(counts)) in results and max(counts) > 1:
                print("%s: %d hosts / 1 host wall x%.2f" % (
                    label, max(counts), results[(label, max(counts))]["wall"] / results[(label, 1)]["wall"]))
        if args.raw:
            with open(args.raw, "w") as f:
                json.dump(raw, f, indent=1)
        if args.collection and not args.no_this:
            for n in counts:
                b, t = results[("baseline", n)], results[("this", n)]
                print("%d host(s): wall x%.2f, tasks x%.2f, ssh x%.2f (this / baseline)" % (
                    n, t["wall"] / b["wall"], t["tasks"] / float(b["tasks"]), t["ssh"] / float(b["ssh"])))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            sh([sys.executable, fleet_py, "down", "--name", args.fleet], check=False)


if __name__ == "__main__":
    main()
