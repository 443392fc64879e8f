# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server_plan action in process (tests/unit/actionkit.py): roles/server's settings as the play gives them (the
role's defaults and vars, the inventory's values), what server_info read (``info``, in the shape of its RETURN) and
the inventory's facts become the plan roles/server carries out. What users depend on: a refusal names the host, the
count and each refusal and hands back nothing to carry out; the plan hides the API key file; a TP replica meets at
rank 0's address (server_dist_init_host over the default IPv4 over ansible_host); check mode reaches the plan; the
helper scripts shipped are the collection's own sources."""
import re

import pytest
from ansible.template import trust_as_template

import actionkit
from ansible_collections.llmserve.sglang.plugins.module_utils.host import pidfile
from ansible_collections.llmserve.sglang.plugins.module_utils.server import peer_watch, supervise

RTX = {"present": True, "count": 8, "gpus": [{"index": i, "compute_cap": "12.0", "compute_major": 12} for i in range(8)],
       "topology": {"pcie_only": True}}
HELPER_DIR = "/usr/local/lib/llmserve-sglang/"


def info(**kw):
    """What llmserve.sglang.server_info returns for a host with SGLang installed and no instance yet."""
    out = {"service_mgr": "systemd", "manager": "systemd", "state": {}, "files": {}, "dirs": {}, "fingerprint": "",
           "version": "0.5.23", "user_exists": True, "group_exists": True, "model_fs": {},
           "become": {"euid": 0, "sudo": True, "su": True}, "ansible_facts": {"gpu": RTX}}
    out.update(kw)
    return out


def task_vars(**kw):
    """A task of roles/server on gpu1: the role's defaults and vars, a model and its draft over 8 GPUs."""
    out = dict(actionkit.role_vars("server"), inventory_hostname="gpu1", server_model_path="/models/m", server_tp=8,
               server_speculative={"algorithm": "EAGLE3", "draft_model_path": "/models/d"})
    out.update(kw)
    return out


def plan_of(host_info=None, **kw):
    check_mode = kw.pop("check_mode", False)
    become_method = kw.pop("become_method", None)
    return actionkit.run("server_plan", {"info": info() if host_info is None else host_info}, task_vars(**kw),
                         check_mode=check_mode, become_method=become_method)


def good(res):
    assert not res.get("failed"), res.get("msg")
    assert res["changed"] is False and res["plan"]["refusals"] == []
    return res["plan"]


def files(pl):
    return dict((f["path"], f) for f in pl["files"])


# ---- the plan and its refusals

def test_a_good_plan_starts_a_fresh_host_and_changes_nothing_itself():
    res = plan_of()
    pl = good(res)
    assert pl["action"] == "start" and pl["manager"] == "systemd" and pl["nodes"] == ["gpu1"]
    assert "/etc/systemd/system/sglang-default.service" in pl["write"]
    assert "_ansible_no_log" not in res and "msg" not in res


def test_the_refusal_names_the_host_the_count_and_each_refusal_and_hands_back_no_plan():
    one = plan_of(server_port="http")
    assert one["failed"] is True and one["changed"] is False
    assert one["msg"].startswith("gpu1: 1 setting(s) refused, nothing was changed:\n- server_port=")
    assert one["plan"] == {"refusals": [one["msg"].split("\n- ", 1)[1]]}
    two = plan_of(server_port="http", server_restart="sometimes", inventory_hostname="gpu7")
    refusals = two["plan"]["refusals"]
    assert len(refusals) == 2 and list(two["plan"]) == ["refusals"]
    assert two["msg"] == "gpu7: 2 setting(s) refused, nothing was changed:\n- %s\n- %s" % tuple(refusals)
    assert any(r.startswith("server_port=") for r in refusals) and any(r.startswith("server_restart=") for r in refusals)
    assert "peer_token" not in two["plan"] and "files" not in two["plan"]


def test_an_api_key_hides_the_result_and_a_refusal_shows_it_again():
    pl = plan_of(server_api_key="sk-secret-1")
    assert pl["_ansible_no_log"] is True and not pl.get("failed")
    assert any(f["secret"] for f in pl["plan"]["files"])  # the key file's text travels in the plan: hidden
    assert "_ansible_no_log" not in plan_of(server_api_key="")
    refused = plan_of(server_api_key="sk-secret-1", server_port="http")
    # the refusal must be read: it carries no key file, and it is shown
    assert refused["failed"] is True and "_ansible_no_log" not in refused
    assert "sk-secret-1" not in repr(refused)


def test_each_plan_has_a_fresh_peer_token():
    one, two = good(plan_of()), good(plan_of())
    assert re.match(r"^[0-9a-f]{32}$", one["peer_token"]) and re.match(r"^[0-9a-f]{32}$", two["peer_token"])
    assert one["peer_token"] != two["peer_token"]


# ---- check mode, helpers, the host's answers

@pytest.mark.parametrize("check_mode", [True, False])
def test_check_mode_reaches_the_plan(check_mode):
    # a service user that does not exist yet is created by the run; in check mode it never is, so the preflight
    # cannot become it
    pl = good(plan_of(info(user_exists=False), check_mode=check_mode))
    assert pl["user_pending"] is check_mode
    assert pl["preflight"]["become_user"] == ("root" if check_mode else "sglang")


@pytest.mark.parametrize("name, module", [("sglang_supervise.py", supervise), ("sglang_peer_watch.py", peer_watch),
                                          ("sglang_pidfile.py", pidfile)])
def test_the_helpers_shipped_are_the_collections_sources(name, module):
    with open(module.__file__) as handle:
        source = handle.read()
    shipped = files(good(plan_of()))[HELPER_DIR + name]
    assert shipped["content"] == source and shipped["mode"] == "0755"


def test_the_service_manager_the_host_runs_picks_the_instances():
    assert good(plan_of(info(service_mgr="systemd")))["manager"] == "systemd"
    pl = good(plan_of(info(service_mgr="openrc")))
    assert pl["manager"] == "pidfile" and "/etc/systemd/system/sglang-default.service" not in files(pl)


def test_the_gpus_server_info_saw_win_over_the_gathered_facts():
    four = dict(RTX, count=4, gpus=RTX["gpus"][:4])
    assert good(plan_of(info(), ansible_facts={"gpu": four}))["preflight"]["gpu_count"] == 8
    assert good(plan_of(info(ansible_facts={}), ansible_facts={"gpu": four}))["preflight"]["gpu_count"] == 4
    assert good(plan_of(info(ansible_facts={})))["preflight"]["gpu_count"] is None


def test_no_sglang_is_refused_with_the_reason_the_host_gave():
    res = plan_of(info(version=None, version_error="No module named sglang"))
    assert res["failed"] is True and "No module named sglang" in res["msg"] and "run roles/sglang first" in res["msg"]
    assert good(plan_of(info(version="0.5.23", version_error="No module named sglang")))["version"] == "0.5.23"


def test_what_runs_and_what_is_on_disk_make_the_plan_idempotent():
    first = good(plan_of())
    on_disk = info(state={"active_state": "active", "sub_state": "running", "pid": 4242},
                   files=dict((f["path"], f["sha256"]) for f in first["files"]),
                   dirs=dict((d["path"], True) for d in first["dirs"]), fingerprint=first["fingerprint"])
    again = good(plan_of(on_disk))
    assert again["action"] == "none" and again["running"] is True and again["pid"] == 4242
    assert again["write"] == [] and again["dirs_missing"] == [] and again["changed"] is False
    assert first["write"] and first["dirs_missing"] and first["running"] is False


@pytest.mark.parametrize("user, group, create", [(True, True, False), (True, None, True), (None, True, True),
                                                 (False, True, True)])
def test_the_service_user_is_created_unless_the_host_has_user_and_group(user, group, create):
    host = info()
    for key, value in (("user_exists", user), ("group_exists", group)):
        if value is None:
            del host[key]  # server_info did not say: not there
        else:
            host[key] = value
    assert good(plan_of(host))["create_user"] is create


def test_weights_on_a_network_filesystem_reach_the_plan():
    nfs = {"/models/m": {"mount": "/models", "fstype": "nfs4", "source": "nas:/models", "network": True}}
    assert good(plan_of(info(model_fs=nfs)))["model_storage"]["network"] == ["/models/m"]
    assert good(plan_of(info(model_fs={})))["model_storage"]["network"] == []


@pytest.mark.parametrize("task_method, play_method, error", [
    (None, "sudo", True), (None, "su", False), ("su", "sudo", False),
    (trust_as_template("{{ 'sud' ~ 'o' }}"), "su", True),  # the inventory's value is templated
])
def test_the_become_method_of_the_inventory_over_the_plays(task_method, play_method, error):
    no_sudo = info(become={"euid": 0, "sudo": False, "su": True})
    kw = {} if task_method is None else {"ansible_become_method": task_method}
    err = good(plan_of(no_sudo, become_method=play_method, **kw))["preflight"]["become_error"]
    assert (err is not None and "no sudo" in err) is error


# ---- a TP replica over several hosts: rank 0's address, and one's own

def tp(name, hostvars, own=None, host_info=None):
    """The plan of ``name`` in the replica tp = [gpu1, gpu2] (16 GPUs), with the inventory's ``hostvars``."""
    kw = dict(own or {})
    return good(plan_of(host_info or info(), inventory_hostname=name, server_tp=16, server_tp_group="tp",
                        groups={"all": ["gpu1", "gpu2", "other"], "tp": ["gpu1", "gpu2"], "other": ["other"]},
                        hostvars=hostvars, **kw))


def dist_addr(pl):
    argv = pl["argv"]
    return argv[argv.index("--dist-init-addr") + 1]


RANK0 = {"server_dist_init_host": "10.9.0.1", "ansible_facts": {"default_ipv4": {"address": "192.168.0.1"}},
         "ansible_host": "gpu1.example"}


@pytest.mark.parametrize("drop, addr", [((), "10.9.0.1"), (("server_dist_init_host",), "192.168.0.1"),
                                        (("server_dist_init_host", "ansible_facts"), "gpu1.example"),
                                        (("server_dist_init_host", "ansible_facts", "ansible_host"), "gpu1")])
def test_a_peer_meets_at_rank0s_address_in_its_order(drop, addr):
    rank0 = dict((k, v) for k, v in RANK0.items() if k not in drop)
    pl = tp("gpu2", {"gpu1": rank0, "gpu2": {"ansible_host": "gpu2.example"}},
            own={"ansible_host": "gpu2.example"})
    assert pl["node_rank"] == 1 and pl["nodes"] == ["gpu1", "gpu2"]
    assert dist_addr(pl).split(":")[0] == addr
    assert pl["peer_endpoint"].split(":")[0] == "gpu2.example"  # its own address, not rank 0's


def test_rank0s_address_is_templated_as_the_inventory_gives_it():
    rank0 = {"ansible_host": trust_as_template("{{ '10.1.' ~ '2.3' }}")}
    pl = tp("gpu2", {"gpu1": rank0, "gpu2": {}})
    assert dist_addr(pl).split(":")[0] == "10.1.2.3"


def test_a_peer_without_rank0s_variables_meets_at_its_inventory_name():
    pl = tp("gpu2", {"gpu2": {"ansible_host": "gpu2.example"}})
    assert dist_addr(pl).split(":")[0] == "gpu1"


def test_the_default_ipv4_server_info_read_counts_where_facts_were_not_gathered():
    # roles/server registers server_info's answer as __server_info: a peer reads rank 0's, after its facts
    rank0 = {"__server_info": {"default_ipv4": "172.16.0.1"}, "ansible_host": "gpu1.example"}
    assert dist_addr(tp("gpu2", {"gpu1": rank0, "gpu2": {}})).split(":")[0] == "172.16.0.1"
    rank0["ansible_facts"] = {"default_ipv4": {"address": "192.168.0.1"}}
    assert dist_addr(tp("gpu2", {"gpu1": rank0, "gpu2": {}})).split(":")[0] == "192.168.0.1"
    # rank 0 itself reads what server_info returned to this task
    own = tp("gpu1", {"gpu1": {}, "gpu2": {}}, own={"ansible_host": "gpu1.example"},
             host_info=info(default_ipv4="172.16.0.1"))
    assert dist_addr(own).split(":")[0] == "172.16.0.1" and own["peer_endpoint"].split(":")[0] == "172.16.0.1"


@pytest.mark.parametrize("own, addr", [
    ({"server_dist_init_host": "10.9.0.1", "ansible_facts": {"default_ipv4": {"address": "192.168.0.1"}},
      "ansible_host": "gpu1.example"}, "10.9.0.1"),
    ({"ansible_facts": {"default_ipv4": {"address": "192.168.0.1"}}, "ansible_host": "gpu1.example"}, "192.168.0.1"),
    ({"ansible_host": "gpu1.example"}, "gpu1.example"),
    ({}, "gpu1"),
])
def test_rank0_meets_at_its_own_address_in_the_same_order(own, addr):
    # what hostvars say of rank 0 is not read for rank 0 itself: its own variables are
    pl = tp("gpu1", {"gpu1": {"server_dist_init_host": "10.255.0.9"}, "gpu2": {}}, own=own)
    assert pl["node_rank"] == 0
    assert dist_addr(pl).split(":")[0] == addr and pl["peer_endpoint"].split(":")[0] == addr
    assert pl["watch"]["name"] == "gpu1" and pl["watch"]["endpoint"] == pl["peer_endpoint"]


def test_the_facts_ipv4_wins_over_server_infos():
    own = {"ansible_facts": {"default_ipv4": {"address": "192.168.0.1"}}}
    pl = tp("gpu1", {"gpu1": {}, "gpu2": {}}, own=own, host_info=info(default_ipv4="172.16.0.1"))
    assert dist_addr(pl).split(":")[0] == "192.168.0.1"


def test_one_host_without_a_replica_group_has_no_rendezvous():
    pl = good(plan_of(groups={"all": ["gpu1"], "tp": ["gpu1", "gpu2"]}, hostvars={"gpu1": RANK0},
                      server_dist_init_host="10.9.0.1"))
    assert pl["nodes"] == ["gpu1"] and pl["nnodes"] == 1 and "--dist-init-addr" not in pl["argv"]
    assert pl["watch"] is None and pl["peer_endpoint"].split(":")[0] == "10.9.0.1"


@pytest.mark.parametrize("name, tp_group", [("gpu1", "tp"), ("gpu1", "")])
def test_a_variable_that_cannot_render_fails_no_plan_that_does_not_read_it(name, tp_group):
    # rank 0 (and a host outside any replica) reads its own addresses: the inventory's other variables of the host,
    # one that cannot render among them, are not templated
    broken = {"broken": trust_as_template("{{ no_such_variable }}"), "ansible_host": "gpu1.example"}
    pl = good(plan_of(inventory_hostname=name, server_tp=16 if tp_group else 8, server_tp_group=tp_group,
                      groups={"all": ["gpu1", "gpu2"], "tp": ["gpu1", "gpu2"]},
                      hostvars={"gpu1": broken, "gpu2": {}}, ansible_host="gpu1.example"))
    assert pl["peer_endpoint"].split(":")[0] == "gpu1.example"
    assert pl["nnodes"] == (2 if tp_group else 1)
