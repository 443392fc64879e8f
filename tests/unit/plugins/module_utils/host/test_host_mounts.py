# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/host/mounts.py: the filesystem holding a model path, from mountinfo lines as the kernel writes them."""
import os

from ansible_collections.llmserve.sglang.plugins.module_utils.host import mounts

MOUNTINFO = """\
22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
30 22 0:45 / /data rw,relatime shared:5 - nfs4 10.0.0.5:/export/data rw,vers=4.2
31 30 259:3 / /data/local rw,relatime shared:6 - xfs /dev/nvme1n1 rw
32 22 0:50 / /mnt/lustre rw - lustre 10.0.0.9@o2ib:/fs rw
33 22 0:51 / /mnt/s3\\040bucket rw - fuse.s3fs s3fs rw
34 22 0:52 / /mnt/share rw - cifs //nas/share rw
"""


def test_the_longest_mount_point_holds_the_path():
    assert mounts.filesystem("/data/eagle3/kimi", MOUNTINFO)["fstype"] == "nfs4"
    local = mounts.filesystem("/data/local/kimi", MOUNTINFO)
    assert local["fstype"] == "xfs" and not local["network"]
    assert mounts.filesystem("/database", MOUNTINFO)["fstype"] == "ext4"  # a prefix of the name is not a parent


def test_network_types_and_escaped_names():
    assert mounts.filesystem("/mnt/lustre/m", MOUNTINFO)["network"]
    fuse = mounts.filesystem("/mnt/s3 bucket/m", MOUNTINFO)
    assert fuse["fstype"] == "fuse.s3fs" and fuse["network"] and fuse["mount"] == "/mnt/s3 bucket"
    assert mounts.filesystem("/mnt/share/x", MOUNTINFO)["network"]
    assert mounts.filesystem("/data/m", MOUNTINFO)["source"] == "10.0.0.5:/export/data"


def test_this_host():
    here = mounts.filesystem(os.getcwd())
    assert here is not None and here["mount"].startswith("/")
