#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Staging and verification against the machine's own limits, measured in one run on the same disk.

Writes a sharded checkpoint (tools/models/tiny_checkpoint.py: ``--shards`` shards of ``--shard-mib`` MiB, an index,
config and tokenizer) into ``--dir``, then times, each the best of ``--runs``:

  stage      roles/models' dir staging (copy into <dest>.partial hashing every byte on the way, structure check,
             manifest, publish)
  transfer   the same copy-and-hash alone (stage.fetch), without the structure check and the manifest
  cp -a      coreutils' copy of the same tree           - the copy baseline
  rsync -a   rsync of the same tree (when installed)    - the baseline of the fan-out path
  verify 1   full verify (sha256 of every file) on one thread
  verify N   full verify on every core (threads, one file each)
  sha256sum  coreutils' sha256sum of the same files, one process - the single-core hashing limit
  sha256sum xN  sha256sum over every core (xargs -P)    - the all-core hashing limit
  openssl    openssl dgst -sha256 of the same files, one process (when installed) - OpenSSL's SHA-256, one core
  cheap      the re-check of a staged tree (size + mtime of every file and the checkpoint's structure)

and prints throughputs and the ratios against the baselines, with the floor this machine puts under staging: a
verified copy has to hash every byte, so it cannot take less than ``verify N`` (sha256 on every core) however the
copy is done; ``verify N / cp -a`` is the best ``stage / cp -a`` can be here. Page cache: the source is read once before timing, so
copies and hashes run from memory on both sides of each ratio (both sides read the same cached bytes).

  python3 benchmarks/models/bench_staging.py [--shards 64] [--shard-mib 16] [--runs 3] [--dir /var/tmp/x]
"""

from __future__ import absolute_import, division, print_function

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "collections"))

from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.models import stage  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_tree  # noqa: E402

_spec = importlib.util.spec_from_file_location("tiny_checkpoint",
                                               os.path.join(REPO, "tools", "models", "tiny_checkpoint.py"))
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)


def best(runs, fn, reset=None):
    times = []
    for _ in range(runs):
        if reset:
            reset()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--shard-mib", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="scratch directory (default: a new one under /var/tmp)")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="bench-staging-", dir=args.dir or "/var/tmp")
    cores = os.cpu_count() or 1
    try:
        src = tiny.write_target(os.path.join(scratch, "src"), shards=args.shards, shard_mib=args.shard_mib)
        files = mf.list_files(src)
        size = sum(os.path.getsize(os.path.join(src, f)) for f in files)
        gib = size / float(1 << 30)
        mf.hash_files(src, files)  # warm the page cache
        dest = os.path.join(scratch, "dest")
        model = {"name": "bench", "kind": "dir", "path": src, "dest": dest, "role": "target"}
        expected, _, _ = stage.expected(model)

        def clear():
            for path in (dest, stage.partial_of(dest)):
                if os.path.exists(path):
                    shutil.rmtree(path)

        def staged():
            partial = stage.partial_of(dest)
            stage.fetch_and_verify(model, partial, expected, "bench")(lambda *a, **k: None)
            stage.publish(partial, dest)

        t = {}
        t["stage"] = best(args.runs, staged, clear)
        t["transfer"] = best(args.runs, lambda: stage.fetch(model, stage.partial_of(dest), expected), clear)
        t["cp -a"] = best(args.runs, lambda: subprocess.run(["cp", "-a", src, dest], check=True), clear)
        if shutil.which("rsync"):
            t["rsync -a"] = best(args.runs, lambda: subprocess.run(["rsync", "-a", src + "/", dest + "/"],
                                                                   check=True), clear)
        staged()
        manifest = mf.load(dest)
        t["verify 1"] = best(args.runs, lambda: mf.verify(dest, manifest, full=True, workers=1))
        t["verify N"] = best(args.runs, lambda: mf.verify(dest, manifest, full=True, workers=cores))
        paths = [os.path.join(dest, f) for f in files]
        t["sha256sum"] = best(args.runs, lambda: subprocess.run(["sha256sum"] + paths, check=True,
                                                                stdout=subprocess.DEVNULL))
        t["sha256sum xN"] = best(args.runs, lambda: subprocess.run(
            ["xargs", "-0", "-P", str(cores), "-n", "1", "sha256sum"], input="\0".join(paths).encode(),
            check=True, stdout=subprocess.DEVNULL))
        if shutil.which("openssl"):
            t["openssl"] = best(args.runs, lambda: subprocess.run(["openssl", "dgst", "-sha256"] + paths, check=True,
                                                                  stdout=subprocess.DEVNULL))
        t["cheap"] = best(max(args.runs, 5), lambda: verify_tree(dest, "cheap"))
        assert verify_tree(dest, "cheap")["hashed"] == 0

        print("tree: %d shards, %.2f GiB, %d files; %d cores; best of %d runs" % (args.shards, gib, len(files), cores,
                                                                               args.runs))
        for name, secs in t.items():
            print("  %-13s %8.3f s  %7.2f GiB/s" % (name, secs, gib / secs))
        print("ratios (>1: ours is slower than the baseline):")
        print("  stage / cp -a            %.2f  (copy + sha256 of every file + structure + manifest)"
              % (t["stage"] / t["cp -a"]))
        print("  transfer / cp -a         %.2f  (the copy, hashed on the way)" % (t["transfer"] / t["cp -a"]))
        print("  verify N / cp -a         %.2f  (the floor: sha256 of every byte on every core, no copy)"
              % (t["verify N"] / t["cp -a"]))
        if "rsync -a" in t:
            print("  stage / rsync -a         %.2f" % (t["stage"] / t["rsync -a"]))
        print("  verify 1 / sha256sum     %.2f  (one core against coreutils, one core)" % (t["verify 1"] / t["sha256sum"]))
        if "openssl" in t:
            print("  verify 1 / openssl dgst  %.2f  (one core against OpenSSL's SHA-256, one core)"
                  % (t["verify 1"] / t["openssl"]))
        print("  verify N / sha256sum xN  %.2f  (all cores against coreutils on all cores)"
              % (t["verify N"] / t["sha256sum xN"]))
        print("  verify 1 / verify N      %.2f  (speed-up over cores)" % (t["verify 1"] / t["verify N"]))
        print("  cheap / verify N         %.4f (the re-check on every start against a full hash; %.1f ms for %d "
              "shards)" % (t["cheap"] / t["verify N"], t["cheap"] * 1000, args.shards))
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
