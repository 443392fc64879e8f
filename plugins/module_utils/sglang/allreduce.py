# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""FlashInfer's PCIe-IPC all-reduce (``SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1``): where it applies, refused elsewhere.

Read from the wheels (``sglang/srt/distributed/device_communicators/pcie_ipc_ar.py``, ``environ.py``): absent in
0.5.20, present from 0.5.21 (read: 0.5.21, 0.5.23). Built for hosts where every peer transfer crosses the CPU root
complex (no NVLink, no multicast: the users' 8x RTX PRO 6000, SM120); IPC channels for world sizes 2, 4 and 8
only; bf16 only (other dtypes stay on NCCL with a warning); decode-sized workspace. Its module docstring reports,
on one 8x SM120 host at TP8, time per output token 21.1 ms with NCCL and 13.6 ms with it. The kernels' tactics are
autotuned at start and cached under ``SGLANG_CACHE_DIR`` (default ``~/.cache/sglang``, i.e. the service user's
home: roles/server sets HOME to ``server_home`` for systemd units and pid-file supervision alike), so the cache
must be on persistent disk or every start tunes again.

Not run here: no SM120 GPU is lent to this project (docs/benchmark.md).
"""

from __future__ import annotations

import re

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import release

ENV = "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE"
FIRST = gates.first("pcie_ipc_allreduce")
WORLD_SIZES = (2, 4, 8)
VOLATILE = ("/tmp", "/dev/shm", "/run", "/var/run")
_TRUE = ("1", "true", "yes", "on")


# What a start did with the tuning, from its log (SGLang 0.5.23 pcie_ipc_ar.py; FlashInfer 0.7.2's autotuner logs
# through flashinfer.jit at INFO to stderr, i.e. the server log).
ENABLED_LINE = "FlashInfer PCIe-IPC all-reduce enabled"
TUNED_LINE = "FlashInfer PCIe-IPC all-reduce autotuned"
SEED_LINES = ("--disable-flashinfer-autotune is", "skipping autotune and keeping the seed",
              "has no host group to autotune on", "FlashInfer PCIe-IPC autotune failed",
              "FlashInfer PCIe-IPC autotune covered no shapes")
_SAVED = re.compile(r"\[Autotuner\]: Saved (\d+) configs to (\S+) \((\d+) new, (\d+) from previous config\)")
_LOADED = re.compile(r"\[Autotuner\]: Loaded (\d+) configs from (\S+)")
START_MARK = "server_args="  # the first line of every start (sglang/gates.STARTUP_LINES["server_args"])


def tuning_from_log(text):
    """What the last start in ``text`` did with the PCIe-IPC all-reduce tuning: None when it did not use the
    all-reduce, else ``{state, line, path}`` - ``tuned`` (FlashInfer measured new shapes and saved them),
    ``reused`` (it loaded them and measured nothing new), ``seed`` (no tuning: the seed policy), ``unknown``
    (autotuned, without FlashInfer's own lines to tell which)."""
    text = text or ""
    start = text.rfind(START_MARK)
    text = text[start:] if start >= 0 else text
    if ENABLED_LINE not in text:
        return None
    lines = text.splitlines()

    def last(pred):
        return next((line.strip() for line in reversed(lines) if pred(line)), None)
    seed = last(lambda line: any(s in line for s in SEED_LINES))
    if seed:
        return {"state": "seed", "line": seed, "path": None}
    saved = [m for m in (_SAVED.search(line) for line in lines) if m]
    if saved and any(int(m.group(3)) > 0 for m in saved):
        m = [m for m in saved if int(m.group(3)) > 0][-1]
        return {"state": "tuned", "line": m.group(0), "path": m.group(2)}
    loaded = [m for m in (_LOADED.search(line) for line in lines) if m]
    if saved or loaded:
        m = (saved or loaded)[-1]
        return {"state": "reused", "line": m.group(0), "path": m.group(2)}
    return {"state": "unknown", "line": last(lambda line: TUNED_LINE in line), "path": None}


def enabled(env):
    return str((env or {}).get(ENV, "")).strip().lower() in _TRUE


def rules(env, version, majors, pcie_only, tp, args):
    """(errors, warnings) of the PCIe-IPC all-reduce for one launch; nothing when it is not asked for.

    majors: compute-capability majors of the visible GPUs (empty when unknown); pcie_only: the GPU topology has no
    NVLink between them (None when unknown); args: the SGLang options (snake_case).
    """
    errors, warnings = [], []
    if not enabled(env):
        return errors, warnings
    fix = "or set %s to 0 (NCCL all-reduce)" % ENV
    if release(version) < FIRST:
        errors.append("%s=1 needs SGLang 0.5.21 or later (FlashInfer PCIe-IPC all-reduce); %s has none: upgrade "
                      "sglang (roles/sglang sglang_version) %s" % (ENV, version, fix))
    if tp not in WORLD_SIZES:
        errors.append("%s=1 serves tensor-parallel groups of 2, 4 or 8 GPUs (its IPC channels); tp is %s: change tp "
                      "%s" % (ENV, tp, fix))
    if majors and majors != {12}:
        errors.append("%s=1 is for PCIe-only SM120 groups (RTX PRO 6000 class); these GPUs are compute capability "
                      "%s: leave it off (their custom all-reduce or NCCL over NVLink serves them) %s"
                      % (ENV, "/".join(str(m) for m in sorted(majors)), fix))
    if pcie_only is False:
        errors.append("%s=1 is for GPUs that reach each other only through the CPU root complex; this host has "
                      "NVLink between them: leave it off %s" % (ENV, fix))
    dtype = str((args or {}).get("dtype") or "auto").lower()
    if dtype not in ("auto", "bfloat16", "bf16"):
        errors.append("%s=1 reduces bf16 only and args.dtype is %s (every reduction would stay on NCCL): use "
                      "dtype bfloat16 %s" % (ENV, dtype, fix))
    cache = str((env or {}).get("SGLANG_CACHE_DIR") or "")
    if cache and any(cache == v or cache.startswith(v + "/") for v in VOLATILE):
        errors.append("SGLANG_CACHE_DIR=%s is not persistent: FlashInfer's all-reduce tuning cache lives under it "
                      "and would be tuned again at every start; point it at the service user's home or another "
                      "persistent disk (or leave it unset: ~/.cache/sglang in server_home)" % cache)
    if str((env or {}).get("SGLANG_FLASHINFER_AUTOTUNE_CACHE", "1")).strip().lower() in ("0", "false", "no", "off"):
        warnings.append("SGLANG_FLASHINFER_AUTOTUNE_CACHE is off: the PCIe-IPC all-reduce tactics are tuned again "
                        "at every start")
    if (env or {}).get("FLASHINFER_AUTOTUNE_DIR"):
        warnings.append("FLASHINFER_AUTOTUNE_DIR=%s keeps the all-reduce tuning flat (pcie_ipc_all_reduce_ws<N>.json, "
                        "no FlashInfer version or GPU architecture in its path): after a FlashInfer upgrade or on "
                        "another GPU the old tactics are read. Leave it unset - the compile cache keys it "
                        "(sglang/caches.py) - or put the version and architecture in the path"
                        % env["FLASHINFER_AUTOTUNE_DIR"])
    if (args or {}).get("enable_deterministic_inference"):
        warnings.append("%s=1 with deterministic inference: SGLang keeps NCCL (tactics are chosen per shape)" % ENV)
    return errors, warnings
