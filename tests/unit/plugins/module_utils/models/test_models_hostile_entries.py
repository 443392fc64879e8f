# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""models/contain.hostile_entries: what in a model tree no reader may open, found by lstat alone, on real trees
(FIFOs, links out of the tree, to /dev/zero, dangling, within the tree), both sides of each rule."""
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from tinymodels import tiny

SHARD = "model-00001-of-00002.safetensors"


@pytest.fixture
def tree(tmp_path):
    return tiny.write_target(str(tmp_path / "t"), shards=2)


def test_a_real_checkpoint_has_none(tree):
    assert contain.hostile_entries(tree) == []


@pytest.mark.parametrize("make, needle", [
    (lambda p, tmp: os.mkfifo(p), "%s is a FIFO, not a plain file" % SHARD),
    (lambda p, tmp: os.symlink("/etc/shadow", p), "%s is a symbolic link that leaves the model's tree (to /etc/shadow)"
     % SHARD),
    (lambda p, tmp: os.symlink("/dev/zero", p), "leaves the model's tree (to /dev/zero)"),
    (lambda p, tmp: os.symlink("../outside", p), "leaves the model's tree (to ../outside)"),
    (lambda p, tmp: os.symlink("missing", p), "%s is a symbolic link to nothing" % SHARD),
])
def test_each_hostile_kind_is_named(tree, tmp_path, make, needle):
    path = os.path.join(tree, SHARD)
    os.unlink(path)
    (tmp_path / "outside").write_text("x")
    make(path, tmp_path)
    problems = contain.hostile_entries(tree)
    assert len(problems) == 1 and needle in problems[0], problems


def test_links_inside_the_tree_to_plain_files_and_directories_pass(tree):
    os.makedirs(os.path.join(tree, "sub"))
    os.rename(os.path.join(tree, SHARD), os.path.join(tree, "sub", SHARD))
    os.symlink("sub/" + SHARD, os.path.join(tree, SHARD))
    os.symlink("sub", os.path.join(tree, "alias"))
    assert contain.hostile_entries(tree) == []


def test_a_link_inside_the_tree_to_a_fifo_is_named(tree):
    os.mkfifo(os.path.join(tree, "pipe"))
    os.unlink(os.path.join(tree, SHARD))
    os.symlink("pipe", os.path.join(tree, SHARD))
    problems = contain.hostile_entries(tree)
    assert sorted(p.split(" ")[0] for p in problems) == sorted(["pipe", SHARD])


def test_the_walk_is_bounded(tree):
    for i in range(20):
        os.mkfifo(os.path.join(tree, "p%02d" % i))
    assert len(contain.hostile_entries(tree, limit=10)) == 10
    assert len(contain.hostile_entries(tree, max_entries=3)) <= 3
