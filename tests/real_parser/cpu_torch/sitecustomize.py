# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test seam, never shipped: CUDA and NCCL for a CPU build of torch, so gpu_health's all-reduce probe runs unchanged.

Python imports this file at start-up when its folder is on PYTHONPATH (tests/real_parser/test_probe_torch.py puts it
there for the probe and the ranks it spawns). With LLMSERVE_TEST_CPU_RANKS=N set, torch "sees" N CUDA devices whose
tensors live on the CPU, and the NCCL process group is gloo's: everything else - the spawn, the process group, the
all-reduce and its check of the sum, the JSON - is the real torch running the shipped script.
"""
import os

RANKS = int(os.environ.get("LLMSERVE_TEST_CPU_RANKS") or 0)

if RANKS:
    import torch
    import torch.distributed as dist

    _ones = torch.ones
    _init_process_group = dist.init_process_group

    def _ones_on_cpu(*args, **kwargs):
        if str(kwargs.get("device") or "").startswith("cuda"):
            kwargs["device"] = "cpu"
        return _ones(*args, **kwargs)

    def _gloo_for_nccl(backend=None, *args, **kwargs):
        return _init_process_group("gloo" if backend == "nccl" else backend, *args, **kwargs)

    torch.cuda.device_count = lambda: RANKS
    torch.cuda.set_device = lambda device: None
    torch.cuda.synchronize = lambda device=None: None
    torch.cuda.nccl.version = lambda: (0, 0, 0)  # no NCCL in a CPU build: a version no real NCCL has
    torch.ones = _ones_on_cpu
    dist.init_process_group = _gloo_for_nccl
