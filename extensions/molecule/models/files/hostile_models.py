# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the hostile model directories of the models scenario on a fleet host (issue 33): copies of the staged
target and draft (without their manifest, so the check reads their files) each holding one hostile entry, and a
link to /etc for a server_home.

  /models/hostile-fifo/        a FIFO in place of a shard
  /models/hostile-zero/        a shard that links to /dev/zero
  /models/hostile-json/        config.json of the wrong type (a list)
  /models/hostile-draft-link/  the draft, a shard linking out of the tree (to /etc/shadow)
  /srv/mol-home-link           -> /etc (a server_home that is /etc once resolved)
"""
import glob
import os
import shutil
import sys


def copy(src, dest):
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, dest)
    os.unlink(os.path.join(dest, ".llmserve-manifest.json"))
    return dest


def shard(tree, n=0):
    return sorted(glob.glob(os.path.join(tree, "*.safetensors")))[n]


def main(target, draft):
    fifo = shard(copy(target, "/models/hostile-fifo"), 1)
    os.unlink(fifo)
    os.mkfifo(fifo)
    zero = shard(copy(target, "/models/hostile-zero"), 1)
    os.unlink(zero)
    os.symlink("/dev/zero", zero)
    with open(os.path.join(copy(target, "/models/hostile-json"), "config.json"), "w") as f:
        f.write("[1, 2, 3]\n")
    out = shard(copy(draft, "/models/hostile-draft-link"))
    os.unlink(out)
    os.symlink("/etc/shadow", out)
    if not os.path.lexists("/srv/mol-home-link"):
        os.symlink("/etc", "/srv/mol-home-link")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
