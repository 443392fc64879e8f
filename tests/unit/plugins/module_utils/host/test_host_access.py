# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/host/access.py: can the server user read the model? As root (CI runs as root) the kernel is asked
in a child that drops to the user's uid and groups; the mode-bit rule is tested on its own for every case."""
import os
import pwd
import shutil
import stat
import subprocess
import tempfile

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import access

ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody").pw_uid


@pytest.mark.parametrize("mode, owner, group, uid, gids, want, ok", [
    (0o600, 0, 0, 1000, [1000], access.READ, False),      # root's file, other user
    (0o644, 0, 0, 1000, [1000], access.READ, True),
    (0o640, 0, 50, 1000, [1000, 50], access.READ, True),  # through a supplementary group
    (0o640, 0, 50, 1000, [1000], access.READ, False),
    (0o400, 1000, 0, 1000, [1000], access.READ, True),    # owner bits, whatever the others'
    (0o044, 1000, 0, 1000, [1000], access.READ, False),   # the owner's bits count, not the group's
    (0o711, 0, 0, 1000, [1000], access.ENTER, True),
    (0o711, 0, 0, 1000, [1000], access.LIST, False),
    (0o700, 0, 0, 1000, [1000], access.ENTER, False),
    (0o755, 0, 0, 1000, [1000], access.LIST, True),
    (0o000, 5, 5, 0, [0], access.READ, True),              # root
])
def test_mode_bits(mode, owner, group, uid, gids, want, ok):
    assert access.mode_allows(stat.S_IFREG | mode, owner, group, uid, gids, want) is ok


@pytest.fixture
def tree():
    # not under pytest's tmp_path: that is 0700, which no other user may enter
    root = tempfile.mkdtemp(prefix="llmserve-access-")
    os.chmod(root, 0o755)
    model = os.path.join(root, "model")
    os.mkdir(model, 0o755)
    for name, mode in (("config.json", 0o644), ("model.safetensors", 0o600)):
        with open(os.path.join(model, name), "w") as f:
            f.write("{}")
        os.chmod(os.path.join(model, name), mode)
    yield root, model
    shutil.rmtree(root)


@pytest.mark.skipif(not ROOT, reason="dropping to another uid needs root (CI runs as root)")
def test_as_root_the_kernel_is_asked_as_the_user(tree):
    root, model = tree
    checks = [(root, access.ENTER), (model, access.LIST), (os.path.join(model, "config.json"), access.READ),
              (os.path.join(model, "model.safetensors"), access.READ)]
    denied, method = access.denied("nobody", checks)
    assert method == "kernel"
    assert denied == [(os.path.join(model, "model.safetensors"), access.READ, "Permission denied")]
    os.chmod(root, 0o700)  # a directory on the way closes everything below it
    denied = access.denied("nobody", checks)[0]
    assert [d[0] for d in denied] == [root, model, os.path.join(model, "config.json"),
                                      os.path.join(model, "model.safetensors")]


@pytest.mark.skipif(not ROOT, reason="needs root")
@pytest.mark.skipif(not shutil.which("setfacl"), reason="missing host tool: setfacl, from the Debian package acl "
                    "(apt-get install acl, or make system-deps): an ACL grant to the server user is not tested")
def test_an_acl_grant_counts(tree):
    model = tree[1]
    shard = os.path.join(model, "model.safetensors")
    if subprocess.run(["setfacl", "-m", "u:nobody:r", shard], check=False).returncode != 0:
        pytest.skip("the filesystem has no POSIX ACLs")
    assert access.denied("nobody", [(shard, access.READ)])[0] == []


def test_the_same_user_is_asked_directly(tree):
    model = tree[1]
    denied, method = access.denied(os.geteuid(), [(os.path.join(model, "config.json"), access.READ)])
    assert method == "self" and denied == []


def test_ancestors_and_description(tree):
    root, model = tree
    assert access.ancestors(model)[-1] == root and access.ancestors(model)[0] == "/"
    assert access.describe(os.path.join(model, "model.safetensors")).startswith("mode 0600 ")
    assert access.identity("nobody")[0] == NOBODY
    with pytest.raises(KeyError):
        access.identity("no-such-user-here")
