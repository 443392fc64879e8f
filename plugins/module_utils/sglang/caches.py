# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where an SGLang instance keeps its compiled kernels, so a restart does not compile them again.

Read in the wheels (tests/unit/plugins/module_utils/sglang/test_sglang_caches.py checks it against each one):

- ``SGLANG_CACHE_DIR`` (default ``~/.cache/sglang``) is read by every supported version (0.5.9 and 0.5.10 in
  ``srt/compilation/backend.py``; 0.5.15 adds the FlashInfer autotune cache and the FA3 lock under it).
- From 0.5.20, ``sglang/__init__.py`` calls ``environ.redirect_third_party_caches()``, which *setdefaults*
  ``TRITON_CACHE_DIR``, ``TORCHINDUCTOR_CACHE_DIR``, ``CUDA_CACHE_PATH`` and ``FLASHINFER_WORKSPACE_BASE`` (and in
  later versions more, e.g. ``TILELANG_CACHE_DIR``) to folders under ``SGLANG_CACHE_DIR``.
- Before 0.5.20 nothing redirects them: Triton, Inductor, the CUDA JIT and FlashInfer use the service user's
  ``~`` (a trap: the user's home may be read-only, shared or wiped).

So every version gets ``SGLANG_CACHE_DIR`` and the four third-party variables explicitly, with the layout 0.5.20
itself uses; on 0.5.20+ that is exactly what the redirect would have set. The folder is per instance and per
SGLang version (kernels compiled by one torch/Triton are no use to another, and an upgrade must not evict the
cache a rollback would need), on persistent disk under the service user's home (``server_home``).

FlashInfer's PCIe-IPC all-reduce tuning (SGLang 0.5.21+, ``sglang/allreduce.py``) is one of these caches. Read in
flashinfer-python 0.7.2 (``comm/pcie_ipc_tuning.default_cache_path``, ``jit/env.py``): without
``FLASHINFER_AUTOTUNE_DIR`` the file is ``<FLASHINFER_WORKSPACE_BASE>/.cache/flashinfer/<flashinfer version>/<archs,
e.g. 120>/autotune/pcie_ipc_all_reduce_ws<N>.json`` - with the base set here, under this instance's compile cache,
keyed by FlashInfer version and GPU architecture (an upgrade or another GPU tunes again, a restart reuses it). A
``FLASHINFER_AUTOTUNE_DIR`` holds ``pcie_ipc_all_reduce_ws<N>.json`` flat, with neither key: it is not set here,
and a user's one is warned about (allreduce.rules). :func:`autotune_dir` names the folder; the server log says whether
a start tuned or reused it (allreduce.tuning_from_log).
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

REDIRECT_SINCE = gates.GATES["cache_redirect"]
# The third-party caches and their folder under SGLANG_CACHE_DIR, as 0.5.20's third_party_cache_defaults() has them.
# FLASHINFER_WORKSPACE_BASE is a base: FlashInfer appends .cache/flashinfer itself.
THIRD_PARTY = (
    ("TRITON_CACHE_DIR", "triton"),
    ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ("CUDA_CACHE_PATH", "nv"),
    ("FLASHINFER_WORKSPACE_BASE", ""),
)


def root(home, instance):
    """The instance's compile-cache folder (one sub-folder per SGLang version)."""
    return "%s/compile-cache/%s" % (str(home).rstrip("/"), instance)


def version_dir(home, instance, version):
    return "%s/%s" % (root(home, instance), str(version))


def autotune_dir(home, instance, version, flashinfer_version, archs):
    """The folder FlashInfer's PCIe-IPC tuning of this instance lands in (``archs``: e.g. ``120``, or ``90_120``)."""
    return "%s/.cache/flashinfer/%s/%s/autotune" % (version_dir(home, instance, version), flashinfer_version, archs)


def env(home, instance, version):
    """The environment that puts every compile cache of this instance's SGLang under one persistent folder."""
    return under(version_dir(home, instance, version))


def under(base):
    """Every compile-cache variable pointed below ``base``: importing SGLang makes these folders (with the process
    umask), so a process that is not the server itself (the preflight's parse) gets a throwaway ``base``."""
    out = {"SGLANG_CACHE_DIR": base}
    for name, sub in THIRD_PARTY:
        out[name] = "%s/%s" % (base, sub) if sub else base
    return out
