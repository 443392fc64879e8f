# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two bugs of the server_plan action the mutation room ``actions`` found (issue 47), mended: a peer renders only rank
0's addresses (one variable of rank 0 that cannot render no longer fails every peer), and a replica group the
inventory lacks, or an empty one, is the plan's refusal naming the setting, not an IndexError."""
import pytest
from ansible.template import trust_as_template

from test_server_plan_action import good, plan_of


def test_a_peer_reads_rank0s_addresses_whatever_else_rank0_holds():
    broken = {"broken": trust_as_template("{{ no_such_variable }}"), "ansible_host": "gpu1.example"}
    pl = good(plan_of(inventory_hostname="gpu2", server_tp=16, server_tp_group="tp",
                      groups={"all": ["gpu1", "gpu2"], "tp": ["gpu1", "gpu2"]}, hostvars={"gpu1": broken, "gpu2": {}}))
    argv = pl["argv"]
    assert argv[argv.index("--dist-init-addr") + 1].split(":")[0] == "gpu1.example"


@pytest.mark.parametrize("groups", [{"all": ["gpu1"]}, {"all": ["gpu1"], "tp": []}])
def test_a_replica_group_the_inventory_lacks_is_refused_by_name(groups):
    res = plan_of(server_tp_group="tp", groups=groups, hostvars={"gpu1": {}})
    assert res["failed"] is True and "server_tp_group" in res["msg"]


def test_rank0_meets_its_peers_on_its_own_rendered_address():
    # rank 0 reads its own address from its variables, rendered as a peer renders them (an inventory template)
    own = {"ansible_host": trust_as_template("{{ my_address }}"), "my_address": "10.0.0.7"}
    pl = good(plan_of(inventory_hostname="gpu1", server_tp=16, server_tp_group="tp",
                      groups={"all": ["gpu1", "gpu2"], "tp": ["gpu1", "gpu2"]}, hostvars={"gpu1": own, "gpu2": {}},
                      **own))
    argv = pl["argv"]
    assert argv[argv.index("--dist-init-addr") + 1].split(":")[0] == "10.0.0.7"
