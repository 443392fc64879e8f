# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler child process: distributed init, weight loading, KV cache, CUDA graph capture.

Started by the parent (launch_server) with its settings in SGLANG_DOUBLE_CHILD; reports readiness
over an inherited pipe like SGLang's scheduler pipe, and signals SIGQUIT to the parent on failure.
SGLANG_DOUBLE_GPU_MIB makes it show on the fake nvidia-smi; SGLANG_DOUBLE_DETACH leaves a process behind (below).
"""
import json
import os
import signal
import time

from sglang.version import at_least
from sglang._double import texts
from sglang._double.config import Settings
from sglang._double.out import Bar, Events, capture_bar_text, log, raw, weights_bar_text


def _die_with_parent():
    # SGLang's children die with their parent (PR_SET_PDEATHSIG); so do ours.
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except Exception:
        pass


def idle_forever():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


class Child(object):
    def __init__(self, cfg, settings):
        self.cfg, self.s = cfg, settings
        self.events = Events(settings.events)
        self.ranks = cfg["ranks"]
        self.tp = cfg["tp"]
        self.lead = 0 in self.ranks and cfg.get("node_rank", 0) == 0

    def prefix(self, rank):
        return (" TP%d" % rank) if self.tp > 1 else ""

    def log_all(self, msg):
        for r in self.ranks:
            log(msg, self.prefix(r))

    def stage(self, name, hang_now=True):
        if self.lead:
            self.events.emit("stage", stage=name)
        if hang_now:
            self.hang_if(name)

    def hang_if(self, name):
        if self.s.hang_stage == name:
            if self.lead:
                self.events.emit("hang_start", stage=name)
            idle_forever()

    def fail(self, scenario):
        """Scheduler hit an exception: log it, SIGQUIT the parent (run_scheduler_process)."""
        if scenario == "crash_shm":
            for r in self.ranks:  # NCCL's own warning comes first, from every local rank
                raw(texts.SHM_WARN.format(host="gpu-host", pid=os.getpid(), rank=r))
        text = "Scheduler hit an exception: " + texts.scheduler_exception(scenario)
        if scenario == "crash_scheduler_sigquit_first":
            # Newer multi-process order: the parent's banner lands before the child's cause.
            os.kill(os.getppid(), signal.SIGQUIT)
            time.sleep(0.05)
            log(text, self.prefix(self.ranks[0]))
        else:
            log(text, self.prefix(self.ranks[0]))
            os.kill(os.getppid(), signal.SIGQUIT)
        idle_forever()

    def watchdog_if(self, name):
        """watchdog:<stage>: the step never returns; after the watchdog timeout the scheduler's watchdog logs it and
        SIGQUITs the parent (the other ranks stay blocked in the collective)."""
        if self.s.watchdog_stage != name:
            return
        if self.lead:
            self.events.emit("hang_start", stage=name)
            time.sleep(self.s.duration("watchdog"))
            log(texts.WATCHDOG, self.prefix(self.ranks[0]))
            os.kill(os.getppid(), signal.SIGQUIT)
        idle_forever()

    def sigbus(self):
        """crash_sigbus: a page of a mapped weight file is gone (the file was truncated): the kernel sends SIGBUS,
        faulthandler reports it, the process dies of the signal; the launcher, blocked on its ready pipe, lingers."""
        try:
            import resource
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file from the double
        except Exception:
            pass
        raw(texts.SIGBUS_FATAL)
        os.kill(os.getpid(), signal.SIGBUS)
        time.sleep(5)

    def maybe_fail(self, name):
        if self.lead and self.s.scenario == name:
            self.fail(name)

    def sleep(self, stage):
        time.sleep(self.s.duration(stage))

    def run(self, ready_fd):
        s = self.s
        self.stage("dist_init", hang_now=False)
        self.log_all(texts.startup_line("dist_init_begin"))
        # A real NCCL hang (PCIe ACS/IOMMU) sits after the begin line, spinning in init.
        self.hang_if("dist_init")
        self.watchdog_if("dist_init")
        self.sleep("dist_init")
        if self.lead and s.scenario == "crash_driver":
            self.fail("crash_driver")
        self.maybe_fail("crash_nccl")
        self.maybe_fail("crash_shm")
        self.maybe_fail("crash_p2p")
        self.log_all(texts.dist_init_end_line(s.duration("dist_init")))

        self.stage("load_weights")
        self.log_all("Load weight begin. avail mem=94.17 GB")
        self.watchdog_if("load_weights")
        if s.busy_seconds and self.lead:
            self.events.emit("busy_start", stage="load_weights", seconds=s.busy_seconds)
            cpu0 = time.process_time()
            end = cpu0 + s.busy_seconds
            deadline = time.time() + s.busy_seconds * 4  # bounded even when starved of CPU
            while time.process_time() < end and time.time() < deadline:
                sum(range(20000))  # deliberately CPU-bound and silent, like a slow checkpoint conversion
            self.events.emit("busy_end", stage="load_weights", cpu=time.process_time() - cpu0,
                             bounded=time.process_time() < end)
        shards = s.shards
        step = s.duration("load_weights") / max(shards, 1)
        bar = Bar(weights_bar_text, shards, newline_each=not at_least("0.5.10")) if self.lead else None
        for i in range(shards):
            time.sleep(step)
            if i == shards // 2 and self.lead and s.scenario == "crash_sigbus":
                if bar and not bar.newline_each:
                    raw("\n")
                self.sigbus()
            if i == shards // 2 and self.lead:
                if s.scenario in ("crash_oom_weights", "crash_scheduler", "crash_scheduler_sigquit_first"):
                    if bar and not bar.newline_each:
                        raw("\n")
                    self.fail(s.scenario)
            if i == shards // 2 and self.cfg.get("dies"):
                self.events.emit("child_died", stage="load_weights", rank=self.ranks[0])
                raw(texts.CHILD_FATAL)
                os.kill(os.getpid(), signal.SIGKILL)
            if bar:
                bar.update()
        if bar:
            bar.close()
        self.log_all(texts.load_weight_end(s.duration("load_weights")))

        self.stage("kv_cache")
        self.watchdog_if("kv_cache")
        self.sleep("kv_cache")
        self.maybe_fail("crash_oom_kv")
        if texts.kv_cache_line():
            self.log_all(texts.kv_cache_line())
        self.log_all("Memory pool end. avail mem=8.93 GB")

        # --disable-cuda-graph: real SGLang logs no capture at all, and the stages go kv_cache -> http.
        if not self.cfg.get("disable_cuda_graph"):
            self.stage("cuda_graph")
            bss = self.capture_bs()
            if at_least("0.5.15"):
                self.log_all("Capture target decode CUDA graph begin. backend=full, avail mem=8.93 GB")
            else:
                self.log_all("Capture cuda graph begin. This can take up to several minutes. avail mem=8.93 GB")
            self.watchdog_if("cuda_graph")
            desc = "Capturing batches (bs=%d avail_mem=%.2f GB)"
            t0 = time.time()
            step = s.duration("cuda_graph") / len(bss)
            if self.lead:
                raw("\r" + capture_bar_text(desc % (bss[0], 8.93), 0, len(bss), 0))
            for i, bs in enumerate(bss):
                time.sleep(step)
                if i == len(bss) // 3 and self.lead and (s.scenario == "crash_oom_cuda_graph"
                                                         or s.scenario.startswith("crash_arch")):
                    raw("\n")
                    self.fail(s.scenario)
                if self.lead:
                    raw("\r" + capture_bar_text(desc % (bs, 8.93 - 0.02 * i), i + 1, len(bss), time.time() - t0))
            if self.lead:
                raw("\n")
            if at_least("0.5.15"):
                self.log_all("Capture target decode CUDA graph end. elapsed=%.2f s, mem usage=1.52 GB, avail mem=7.41 GB."
                             % s.duration("cuda_graph"))
            else:
                self.log_all("Capture cuda graph end. Time elapsed: %.2f s. mem usage=1.52 GB. avail mem=7.41 GB."
                             % s.duration("cuda_graph"))
            for what in (("draft decode", "draft extend") if self.cfg.get("spec") else ()):
                if at_least("0.5.15"):  # the spec-v2 worker (eagle_worker_v2)
                    self.log_all("Capture %s CUDA graph begin. backend=full, avail mem=7.41 GB" % what)
                    self.log_all("Capture %s CUDA graph end. elapsed=%.2f s, mem usage=0.31 GB, avail mem=7.10 GB."
                                 % (what, s.duration("cuda_graph") / 4))
                else:
                    what = what.replace(" decode", "")
                    self.log_all("Capture %s cuda graph begin. This can take up to several minutes. avail mem=7.41 GB"
                                 % what)
                    self.log_all("Capture %s cuda graph end. Time elapsed: %.2f s. mem usage=0.31 GB. avail mem=7.10 GB."
                                 % (what, s.duration("cuda_graph") / 4))
        self.log_all("max_total_num_tokens=412160, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                     "max_running_requests=%d, context_len=262144, available_gpu_mem=7.10 GB"
                     % self.cfg["max_running_requests"])
        if texts.tree_cache_line():
            self.log_all(texts.tree_cache_line())
        os.write(ready_fd, (json.dumps({"status": "ready", "ranks": self.ranks}) + "\n").encode())
        os.close(ready_fd)
        idle_forever()

    def capture_bs(self):
        top = self.cfg["cuda_graph_max_bs"]
        bss = [b for b in [1, 2, 4, 8] if b <= top] + list(range(16, top + 1, 8))
        return list(reversed(bss))  # SGLang captures the largest batch first


def hold_gpu_memory(pid):
    """SGLANG_DOUBLE_GPU_MIB=N: pid holds N MiB on the fake GPU (tools/fake_nvidia lists it while it lives)."""
    mib = os.environ.get("SGLANG_DOUBLE_GPU_MIB")
    folder = os.environ.get("FAKE_NVIDIA_APPS") or "/run/fake-nvidia/apps"
    if not mib or not os.path.isdir(folder):
        return
    with open(os.path.join(folder, str(pid)), "w") as f:
        json.dump({"used_memory": int(mib), "process_name": "sglang::scheduler"}, f)


def detach_a_leftover():
    """SGLANG_DOUBLE_DETACH=1: a process of the scheduler leaves its session (setsid, double fork) and keeps GPU
    memory after the server is gone, as the schedulers of sglang#23627 outlived their launcher."""
    if os.environ.get("SGLANG_DOUBLE_DETACH") != "1" or os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    hold_gpu_memory(os.getpid())
    for fd in (0, 1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        time.sleep(3600)


def main():
    _die_with_parent()
    cfg = json.loads(os.environ["SGLANG_DOUBLE_CHILD"])
    settings = Settings()
    if settings.frozen:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    hold_gpu_memory(os.getpid())
    if cfg.get("node_rank", 0) == 0 and 0 in cfg["ranks"]:
        detach_a_leftover()
    Child(cfg, settings).run(cfg["ready_fd"])


if __name__ == "__main__":
    main()
