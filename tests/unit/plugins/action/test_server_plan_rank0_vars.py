# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known bugs of the server_plan action, found by the mutation room ``actions`` (issue 47) and left to the lead:
each test states the behaviour users need and is expected to fail until the action is mended (strict: a mend makes
it pass, and the mark must then go)."""
import pytest
from ansible.template import trust_as_template

from test_server_plan_action import good, plan_of


@pytest.mark.xfail(strict=True, raises=Exception,
                   reason="server_plan templates all of rank 0's hostvars (self._templar.template(rank0)), not only "
                          "the three addresses it reads: one variable of rank 0 that cannot render fails every peer")
def test_a_peer_reads_rank0s_addresses_whatever_else_rank0_holds():
    broken = {"broken": trust_as_template("{{ no_such_variable }}"), "ansible_host": "gpu1.example"}
    pl = good(plan_of(inventory_hostname="gpu2", server_tp=16, server_tp_group="tp",
                      groups={"all": ["gpu1", "gpu2"], "tp": ["gpu1", "gpu2"]}, hostvars={"gpu1": broken, "gpu2": {}}))
    argv = pl["argv"]
    assert argv[argv.index("--dist-init-addr") + 1].split(":")[0] == "gpu1.example"


@pytest.mark.xfail(strict=True, raises=IndexError,
                   reason="server_plan reads nodes[0] of an empty list when server_tp_group names no group of the "
                          "inventory (or an empty one): a traceback instead of the plan's refusal naming the setting")
@pytest.mark.parametrize("groups", [{"all": ["gpu1"]}, {"all": ["gpu1"], "tp": []}])
def test_a_replica_group_the_inventory_lacks_is_refused_by_name(groups):
    res = plan_of(server_tp_group="tp", groups=groups, hostvars={"gpu1": {}})
    assert res["failed"] is True and "server_tp_group" in res["msg"]
