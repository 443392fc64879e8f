# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/replica.py: which hosts form a replica and which is rank 0 (plan, monitoring and router ask here)."""
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _replica as replica

GROUPS = {"replica_a": ["gpu1", "gpu2"], "replica_b": ["gpu4", "gpu3"], "empty": []}


def test_nodes_in_inventory_order():
    assert replica.replica_nodes("gpu2", "replica_a", GROUPS) == (["gpu1", "gpu2"], None)
    assert replica.replica_nodes("gpu3", "replica_b", GROUPS) == (["gpu4", "gpu3"], None)
    assert replica.replica_nodes("solo", "", GROUPS) == (["solo"], None)


def test_misfits():
    assert replica.replica_nodes("gpu1", "nope", GROUPS) == (["gpu1"], replica.NOT_A_GROUP)
    assert replica.replica_nodes("gpu9", "replica_a", GROUPS) == (["gpu9"], replica.NOT_A_MEMBER)
    assert replica.replica_nodes("gpu1", "empty", GROUPS) == (["gpu1"], replica.NOT_A_MEMBER)


def test_rank0():
    assert replica.is_rank0("gpu1", "replica_a", GROUPS)
    assert not replica.is_rank0("gpu2", "replica_a", GROUPS)
    assert replica.is_rank0("gpu4", "replica_b", GROUPS)    # first in the group, not first by name
    assert replica.is_rank0("solo", None, GROUPS)
    assert not replica.is_rank0("gpu9", "replica_a", GROUPS)


def test_worker_urls_one_per_replica():
    workers = [{"name": "gpu1", "tp_group": "replica_a", "address": "10.0.0.1"},
               {"name": "gpu2", "tp_group": "replica_a", "address": "10.0.0.2"},
               {"name": "solo", "tp_group": "", "address": "fd00::5", "port": 30001},
               {"name": "gpu3", "tp_group": "replica_b"}, {"name": "gpu4", "tp_group": "replica_b"}]
    assert replica.worker_urls(workers, GROUPS, "http", 30000) == [
        "http://10.0.0.1:30000", "http://[fd00::5]:30001", "http://gpu4:30000"]
