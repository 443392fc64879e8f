# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/server's plan (plugin_utils/_server_plan.py): refusals, files, fingerprint, action, replica."""

import testpaths
import copy
import json
import os

import pytest
import yaml

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_view import SETTINGS

REPO = testpaths.REPO


def defaults():
    with open(os.path.join(REPO, "roles", "server", "defaults", "main.yml")) as f:
        d = yaml.safe_load(f)
    s = dict((k[len("server_"):], v) for k, v in d.items())
    # the defaults that are Jinja (they follow roles/sglang): what they template to without it
    s.update(python="/opt/sglang/venv/bin/python", sglang_version="", patches=[], patch_state="", base_env={},
             peer_watch_port="50009")
    s.update(model_path="/models/Kimi-K2.5-int4", tp=8)
    s["speculative"] = dict(s["speculative"], draft_model_path="/models/Kimi-K2.5-EAGLE3")
    return s


RTX = {"present": True, "count": 8, "gpus": [{"index": i, "compute_cap": "12.0", "compute_major": 12} for i in range(8)],
       "topology": {"pcie_only": True}}


def host(**kw):
    h = {"name": "gpu1", "service_mgr": "systemd", "version": "0.5.23", "gpu": RTX, "state": {}, "files": {},
         "dirs": {}, "fingerprint": "", "user_exists": True, "group_exists": True,
         "helpers": {"sglang_supervise.py": "# sup\n", "sglang_peer_watch.py": "# watch\n"}}
    h.update(kw)
    return h


def running(pl, pid=4242):
    """The host after pl was carried out: files on disk, fingerprint recorded, the server up."""
    return host(state={"active_state": "active", "sub_state": "running", "pid": pid, "load_state": "loaded"},
                files=dict((f["path"], f["sha256"]) for f in pl["files"]),
                dirs=dict((d["path"], True) for d in pl["dirs"]), fingerprint=pl["fingerprint"])


def test_settings_table_is_the_argument_spec():
    with open(os.path.join(REPO, "roles", "server", "meta", "argument_specs.yml")) as f:
        spec = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    assert sorted("server_" + n for n in SETTINGS) == sorted(spec)
    for name, kind in SETTINGS.items():
        assert spec["server_" + name]["type"] == kind, name


def test_fresh_host_starts_and_writes_everything():
    pl = sp.plan(sp.validate(defaults()), host())
    assert pl["refusals"] == []
    assert pl["action"] == "start"
    assert pl["manager"] == "systemd"
    paths = [f["path"] for f in pl["files"]]
    assert "/etc/systemd/system/sglang-default.service" in paths
    assert set(pl["write"]) == set(paths)
    unit = next(f for f in pl["files"] if f["path"].endswith(".service"))["content"]
    assert "ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server \\\n   --model-path /models/Kimi-K2.5-int4" in unit
    assert "--tp-size 8" in unit and "--disable-custom-all-reduce" in unit  # 8 PCIe-only GPUs
    assert pl["env"]["SGLANG_ENABLE_JIT_DEEPGEMM"] == "0"  # SM120
    assert pl["daemon_reload"]


@pytest.mark.parametrize("preflight, verify, model, expected", [
    (True, True, "/models/Kimi-K2.5-int4", True),
    (True, "false", "/models/Kimi-K2.5-int4", False),
    (False, True, "/models/Kimi-K2.5-int4", False),   # the preflight off turns every host check off
    (True, True, "moonshotai/Kimi-K2.5", False),       # a Hub name is not a local checkpoint to check
])
def test_model_check_runs_with_the_preflight_on_a_local_path(preflight, verify, model, expected):
    s = dict(defaults(), preflight=preflight, verify_model=verify, model_path=model)
    pl = sp.plan(sp.validate(s), host())
    assert pl["refusals"] == []
    assert pl["preflight"]["verify_model"] is expected
    assert pl["ready"]["sglang_version"] == "0.5.23"  # the waiter picks /ready or /health without a probe


def test_the_model_check_is_on_by_default_and_judges_as_the_launch_reads():
    pl = sp.plan(sp.validate(defaults()), host())
    assert pl["preflight"]["verify_model"] is True  # roles/server's default, whoever put the weights there
    mc = pl["preflight"]["model_check"]
    assert mc == {"python": "/opt/sglang/venv/bin/python", "env": pl["env"], "user": "sglang",
                  "cache_dir": "/run/llmserve-sglang/model-check",
                  "trust_remote_code": False, "model_impl": "auto", "tokenizer_path": None,
                  "skip_tokenizer_init": False, "unknown": "refuse", "chat_template": None}
    # where servability cannot be judged: refused unless the inventory says warn; no third word
    assert sp.plan(sp.validate(dict(defaults(), model_check_unknown="warn")), host())["preflight"]["model_check"]["unknown"] == "warn"
    assert any("model_check_unknown" in r for r in sp.plan(sp.validate(dict(defaults(), model_check_unknown="ignore")),
                                                           host())["refusals"])
    s = dict(defaults(), args={"tokenizer_path": "/models/tok", "trust-remote-code": True, "skip-tokenizer-init": "true",
                               "chat-template": "chatml"})
    mc = sp.plan(sp.validate(s), host())["preflight"]["model_check"]
    assert (mc["tokenizer_path"], mc["trust_remote_code"], mc["skip_tokenizer_init"]) == ("/models/tok", True, True)
    assert mc["chat_template"] == "chatml"  # chat requests use it: the model's own template is not rendered
    assert pl["ready"]["chat_probe"] is True
    assert sp.plan(sp.validate(dict(defaults(), ready_chat_probe=False)), host())["ready"]["chat_probe"] is False
    # check mode before the user exists: no user to judge for
    assert sp.plan(sp.validate(defaults()), host(check_mode=True, user_exists=False))["preflight"]["model_check"]["user"] is None


NFS = {"mount": "/data", "fstype": "nfs4", "source": "10.0.0.5:/export", "network": True}


@pytest.mark.parametrize("version, applied", [("0.5.23", True), ("0.5.15.post1", True), ("0.5.10.post1", False)])
def test_weights_on_a_network_filesystem_get_what_the_sglang_offers(version, applied):
    s = dict(defaults(), model_path="/data/kimi")
    pl = sp.plan(sp.validate(s), host(version=version, model_fs={"/data/kimi": NFS}))
    assert pl["refusals"] == []
    assert pl["model_storage"]["network"] == ["/data/kimi"]
    assert ("--weight-loader-prefetch-checkpoints" in pl["argv"]) is applied
    text = " ".join(pl["warnings"])
    assert "/data/kimi is on a network filesystem (nfs4 10.0.0.5:/export at /data)" in text
    assert ("applied" in text) is applied and ("stage the weights to a local disk" in text) is not applied


def test_a_local_model_or_the_users_own_choice_is_left_alone():
    pl = sp.plan(sp.validate(defaults()), host(model_fs={"/models/Kimi-K2.5-int4": dict(NFS, fstype="xfs", network=False)}))
    assert pl["model_storage"] == {"network": [], "apply": {}, "notes": []}
    assert "--weight-loader-prefetch-checkpoints" not in pl["argv"]
    s = dict(defaults(), model_path="/data/kimi", args={"weight-loader-prefetch-checkpoints": False})
    pl = sp.plan(sp.validate(s), host(model_fs={"/data/kimi": NFS}))
    assert "--weight-loader-prefetch-checkpoints" not in pl["argv"] and "left as given" in " ".join(pl["warnings"])


@pytest.mark.parametrize("user, become, method, error", [
    ("sglang", {"euid": 0, "sudo": None, "su": "/bin/su"}, "sudo", "this host has no sudo"),
    ("sglang", {"euid": 0, "sudo": None, "su": "/bin/su"}, "su", None),
    ("sglang", {"euid": 0, "sudo": "/usr/bin/sudo", "su": "/bin/su"}, None, None),
    ("root", {"euid": 0, "sudo": None, "su": None}, "sudo", None),
    ("sglang", {"euid": 0, "sudo": "/usr/bin/sudo", "su": None}, "ansible.builtin.su", "has no su"),
])
def test_a_become_the_host_cannot_do_is_named_with_the_fix(user, become, method, error):
    s = dict(defaults(), user=user)
    got = sp.plan(sp.validate(s), host(become=become, become_method=method))["preflight"]["become_error"]
    if error is None:
        assert got is None
    else:
        assert error in got
    if error == "this host has no sudo":
        assert "ansible_become_method: su" in got and "ansible_become_flags: '-s /bin/sh'" in got


def test_no_change_does_nothing_and_writes_nothing():
    first = sp.plan(sp.validate(defaults()), host())
    again = sp.plan(sp.validate(defaults()), running(first))
    assert (again["action"], again["write"], again["remove"], again["dirs_missing"]) == ("none", [], [], [])
    assert not again["changed"] and not again["daemon_reload"]
    assert again == sp.plan(sp.validate(defaults()), running(first))  # deterministic


def test_changed_flag_restarts_and_policy_never_only_writes():
    first = sp.plan(sp.validate(defaults()), host())
    s = defaults()
    s["args"] = dict(s["args"], **{"mem-fraction-static": 0.8})
    pl = sp.plan(sp.validate(s), running(first))
    assert pl["action"] == "restart" and pl["changed"]
    assert "--mem-fraction-static" in pl["argv"]
    assert pl["write"] == ["/etc/sglang/default/argv.json", "/etc/systemd/system/sglang-default.service"]
    s["restart"] = "never"
    pl = sp.plan(sp.validate(s), running(first))
    assert pl["action"] == "none" and pl["write"] and pl["daemon_reload"]
    assert any("server_restart is 'never'" in w for w in pl["warnings"])
    s["restart"] = "always"
    assert sp.plan(sp.validate(defaults() | {"restart": "always"}), running(first))["action"] == "restart"


def test_crash_looping_unit_counts_as_not_running():
    first = sp.plan(sp.validate(defaults()), host())
    h = running(first)
    h["state"] = {"active_state": "activating", "sub_state": "auto-restart", "pid": 0}
    assert sp.plan(sp.validate(defaults()), h)["action"] == "start"


@pytest.mark.parametrize("name,value,needle", [
    ("tp", 0, "server_tp=0 is out of range"),
    ("tp", "eight", "server_tp=\"eight\" is not a whole number"),
    ("port", 0, "server_port=0 is out of range: give a value from 1 to 65535"),
    ("port", 70000, "server_port=70000 is out of range"),
    ("dist_init_port", 65534, "server_dist_init_port=65534 is out of range"),
    ("env", {"BAD NAME": "x"}, 'server_env={"BAD NAME": "x"} has a name that is not an environment variable name'),
    ("env", {"OK": {"nested": 1}}, "has a value that is not a string or number"),
    ("env", {"OK": "a\nb"}, "has a value with a newline"),
    ("base_env", {"1X": "y"}, "server_base_env="),
    ("instance", "../etc", "cannot name a systemd unit"),
    ("instance", "", "cannot name a systemd unit"),
    ("user", "Root User", "is not a valid user or group name"),
    ("config_dir", "etc/sglang", "is not an absolute path"),
    ("log_dir", "/var/log", "is a system directory or holds one"),
    ("python", "python3", "is not an absolute path"),
    ("host", "", "is not an address to listen on"),
    ("model_path", "", "server_model_path=\"\" is empty"),
    ("model_path", "models/x y", "is neither an absolute path nor a hub id"),
    ("state", "running", "is not one of started, stopped"),
    ("restart", "sometimes", "is not one of always, changed, never"),
    ("service_manager", "upstart", "is not one of auto, systemd, pidfile"),
    ("restart_policy", "never", "is not one of no, on-failure"),
    ("wait", "maybe", "is not a boolean"),
    ("ready_interval", 0, "out of range"),
    ("cuda_visible_devices", [0, 0], "must list distinct GPU indexes"),
    ("cuda_visible_devices", [-1], "must list distinct GPU indexes"),
    ("args", {"bad flag!": 1}, "is not an SGLang option name"),
    ("unit_extra", {"lower": "x"}, "is not a systemd setting name"),
    ("unit_extra", {"Nice": "1\nExecStartPre=/bin/evil"}, "is not one line"),
    ("sglang_version", "latest", "is not a version"),
    ("sglang_record", "/etc/ansible/facts.d/x.fact", "is not the name of a local facts record"),
    ("stage_timeouts", {"load_weights": -1}, "not a positive number"),
    ("speculative", {"algorithm": "NEXTN", "draft_model_path": "/d"}, "names an algorithm this role does not render"),
    ("speculative", {"algorithm": "EAGLE3", "draft_model_path": ""}, "has no draft model"),
    ("speculative", {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": -1}, "is not a valid count"),
])
def test_bad_setting_is_refused_with_its_fix(name, value, needle):
    s = defaults()
    s[name] = value
    pl = sp.plan(sp.validate(s), running(sp.plan(sp.validate(defaults()), host())))
    assert pl["action"] == "none"
    assert any(needle in r for r in pl["refusals"]), pl["refusals"]
    # each refusal says what to do
    assert all(": " in r for r in pl["refusals"])
    assert "argv" not in pl and "files" not in pl or not pl["files"]


def test_every_refusal_at_once():
    s = defaults()
    s.update(tp=0, port=0, env={"BAD NAME": "x"})
    pl = sp.plan(sp.validate(s), host())
    assert len(pl["refusals"]) == 3, pl["refusals"]


def test_strings_from_the_inventory_are_numbers_and_booleans():
    s = defaults()
    s.update(tp="8", port="30001", wait="yes", ready_interval="2.5")
    pl = sp.plan(sp.validate(s), host())
    assert pl["refusals"] == []
    assert pl["argv"][pl["argv"].index("--port") + 1] == "30001"
    assert pl["ready"]["interval"] == 2.5


def test_api_key_is_never_shown_and_lands_in_a_yaml_that_yaml_reads_back():
    s = defaults()
    key = 'k"ey\\with\\"quotes\' and: colon #hash'
    s["api_key"] = key
    pl = sp.plan(sp.validate(s), host())
    f = next(f for f in pl["files"] if f["path"].endswith("api-key.yaml"))
    assert f["secret"] and f["mode"] == "0640" and f["group"] == "sglang"
    assert yaml.safe_load(f["content"]) == {"api-key": key}
    assert key not in json.dumps(pl["argv"]) and "--config" in pl["argv"]
    s["api_key"] = ["not", "a", "string"]
    refused = sp.plan(sp.validate(s), host())["refusals"]
    assert refused and "(hidden)" in refused[0]


def test_removing_the_api_key_removes_its_file():
    s = defaults()
    s["api_key"] = "k"
    first = sp.plan(sp.validate(s), host())
    pl = sp.plan(sp.validate(defaults()), running(first))
    assert pl["remove"] == ["/etc/sglang/default/api-key.yaml"]
    assert pl["action"] == "restart"


def test_pidfile_host_gets_a_launch_spec_not_a_unit():
    pl = sp.plan(sp.validate(defaults()), host(service_mgr="other"))
    assert pl["manager"] == "pidfile"
    paths = [f["path"] for f in pl["files"]]
    assert "/etc/sglang/default/launch.json" in paths and not any(p.endswith(".service") for p in paths)
    spec = json.loads(next(f for f in pl["files"] if f["path"].endswith("launch.json"))["content"])
    assert spec["command"][:3] == ["/opt/sglang/venv/bin/python", "-m", "sglang.launch_server"]
    assert pl["ready"]["pid_file"] == "/run/llmserve-sglang/default/server.pid" and pl["ready"]["unit"] is None
    s = defaults()
    s["service_manager"] = "systemd"
    assert any("not systemd" in r for r in sp.plan(sp.validate(s), host(service_mgr="other"))["refusals"])


def test_no_sglang_in_the_venv_is_refused_with_the_fix():
    pl = sp.plan(sp.validate(defaults()), host(version=None, version_error="ModuleNotFoundError: No module named 'sglang'"))
    assert any("run roles/sglang first" in r and "No module named" in r for r in pl["refusals"])


def test_renderer_errors_become_refusals():
    s = defaults()
    s["args"] = {"enable-torch-symm-mem": True}  # SM120 without roles/sglang's patch
    pl = sp.plan(sp.validate(s), host())
    assert any("sm120-symm-mem" in r for r in pl["refusals"])


def test_stopped_state():
    first = sp.plan(sp.validate(defaults()), host())
    s = defaults()
    s.update(state="stopped", model_path="")
    pl = sp.plan(sp.validate(s), running(first))
    assert (pl["action"], pl["refusals"]) == ("stop", [])
    assert pl["watch"] is None  # tasks/main.yml's act step reads it (the molecule server scenario stops mol2 so)
    assert sp.plan(sp.validate(s), host())["action"] == "none"


def multinode(name, **kw):
    s = defaults()
    s.update(tp=16, tp_group="pair", host="0.0.0.0", **kw)
    h = host(name=name, groups={"pair": ["n0", "n1"]},
             rank0={"default_ipv4": "10.0.0.1", "ansible_host": "127.0.0.1"},
             own={"default_ipv4": "10.0.0.%d" % (1 + int(name[1])), "ansible_host": "127.0.0.1"})
    return s, h


def test_multinode_rank_and_rendezvous():
    s, h = multinode("n1")
    pl = sp.plan(sp.validate(s), h)
    assert pl["refusals"] == []
    a = pl["argv"]
    assert a[a.index("--nnodes") + 1] == "2" and a[a.index("--node-rank") + 1] == "1"
    assert a[a.index("--dist-init-addr") + 1] == "10.0.0.1:50000"
    assert pl["watch"]["endpoint"] == "10.0.0.2:50009" and pl["watch"]["timeout"] == 1860
    s["dist_init_host"] = None
    s["tp"] = 15
    assert any("does not divide over the 2 hosts" in r for r in sp.plan(sp.validate(s), h)["refusals"])


def replica_pair():
    """Plans of a two-host replica: rank 0 (n0) fresh, n1 already running; their peer tokens t0 and t1."""
    s0, h0 = multinode("n0")
    s1, h1 = multinode("n1")
    p0 = sp.plan(sp.validate(s0), h0)
    p1 = sp.plan(sp.validate(s1), running(sp.plan(sp.validate(s1), h1)) | {"name": "n1", "groups": h1["groups"], "rank0": h1["rank0"], "own": h1["own"]})
    p0["peer_token"], p1["peer_token"] = "t0", "t1"
    return p0, p1


def test_replica_restarts_as_a_whole_and_shares_rank0s_token():
    p0, p1 = replica_pair()
    assert (p0["action"], p1["action"]) == ("start", "none")
    settled = sp.settle(p1, {"n0": p0})
    assert settled["action"] == "restart" and "n0" in settled["why"]
    assert settled["watch"]["token"] == "t0" and settled["watch"]["peers"] == ["n0=10.0.0.1:50009"]
    assert sp.settle(p0, {"n1": p1})["watch"]["token"] == "t0"
    never = dict(p1, restart="never")
    assert sp.settle(never, {"n0": p0})["action"] == "none"


def test_failure_message_is_the_waiters_plus_what_became_of_the_old_server():
    first = sp.plan(sp.validate(defaults()), host())
    assert first["action"] == "start"
    assert "Nothing ran before this deploy" in sp.failure_message(first, {"failed": True}, {}, None, [], "rollback")
    changed = defaults()
    changed["args"] = {"mem-fraction-static": 0.8}
    pl = sp.plan(sp.validate(changed), running(first))
    assert pl["action"] == "restart"
    ready = {"failed": True, "msg": "server process exited (code 1) in stage cuda_graph after 4s | oom_cuda_graph -> try: x"}
    msg = sp.failure_message(pl, ready, {"rolled_back": True}, {"failed": False, "elapsed": 7.25}, ["gpu1"], "rollback")
    assert msg.startswith("sglang-default.service is not ready: server process exited"), msg
    assert "oom_cuda_graph" in msg and "Log kept: /var/log/sglang/default.log" in msg
    assert "Rolled back: the previous configuration came back and is ready (in 7.2 s)" in msg
    back_but_broken = sp.failure_message(pl, ready, {"rolled_back": True}, {"failed": True, "msg": "stalled"}, [], "rollback")
    assert "did NOT come back: stalled" in back_but_broken
    assert "Nothing to roll back to" in sp.failure_message(pl, ready, {"rolled_back": False}, None, [], "rollback")
    msg = sp.failure_message(pl, ready, {}, None, ["gpu1"], "stop")
    assert "Left stopped (server_on_failure=stop)" in msg and "/etc/sglang/default/previous" in msg
    peer = {"peer_failure": {"node": "n1", "detail": "unit gone", "sent": 10.0, "time": 10.4}}
    assert "node n1 of the replica failed (unit gone)" in sp.failure_message(pl, ready, peer, None, ["gpu1"], "stop")


def test_failure_message_says_a_frozen_start_was_killed_and_what_it_left_on_the_gpus():
    pl = sp.plan(sp.validate(defaults()), host())
    ready = {"failed": True, "msg": "stalled in load_weights"}
    step = {"stopped": {"seconds": 10.3, "grace": 10, "killed": True},
            "orphans": {"checked": True, "ended": [{"pid": 4711, "used_memory_mib": 80000}], "left": []}}
    msg = sp.failure_message(pl, ready, step, None, [], "stop")
    assert "did not act on SIGTERM: killed after 10 s (server_stop_grace_unready)" in msg
    assert "Ended 1 process(es) it left on the GPUs: pid 4711 (80000 MiB)" in msg


def test_report_says_what_was_decided():
    first = sp.plan(sp.validate(defaults()), host())
    lines = sp.report(sp.plan(sp.validate(defaults()), running(first)))
    assert lines[0].startswith("sglang-default.service: none (running, unchanged)")
    assert lines[-1] == "running, pid 4242"


def test_plan_does_not_touch_its_inputs():
    s, h = defaults(), host()
    s0, h0 = copy.deepcopy(s), copy.deepcopy(h)
    sp.plan(sp.validate(s), h)
    assert (s, h) == (s0, h0)


# -- issue 38: one failure block per host, printed once -------------------------------------------------------------
READY_FAILED = {"ready": False, "failed": False, "reason": "crashed", "category": "oom_cuda_graph",
                "key_line": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                "remedy": "CUDA graph capture ran out of GPU memory: lower --mem-fraction-static",
                "msg": "server process 292 exited (exit status -9) in stage cuda_graph after 5s | log: x | oom -> try: y",
                "gpu": {"gpus": [{"index": i} for i in range(8)]}, "log_tail": ["l"] * 80}


def test_the_failure_block_has_one_line_each_and_not_the_whole_result():
    pl = sp.plan(sp.validate(defaults()), host())
    msg = sp.failure_message(pl, READY_FAILED, {"stopped": {"killed": True, "at_once": True}}, None, ["gpu1"], "stop")
    lines = msg.split("\n")
    assert lines[0] == "sglang-default.service is not ready: server process 292 exited (exit status -9) in stage " \
                       "cuda_graph after 5s."
    assert lines[1:4] == ["  category: oom_cuda_graph",
                          "  key line: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                          "  remedy: CUDA graph capture ran out of GPU memory: lower --mem-fraction-static"]
    assert "  Its processes were stopped (state T, deaf to SIGTERM): killed at once." in lines
    assert "  Log kept: /var/log/sglang/default.log." in lines
    assert lines[-1].startswith("  Nothing ran before this deploy")
    assert len(lines) == 7 and "log_tail" not in msg and "gpus" not in msg


def test_a_failed_wait_is_told_by_ready_false_even_when_ansible_set_failed_false():
    assert sp.wait_failed(READY_FAILED) and not sp.came_up(READY_FAILED)
    assert sp.came_up({"ready": True, "failed": False, "elapsed": 3}) and not sp.wait_failed({"ready": True})
    # results of before the ready key: failed decides; skipped or absent is neither
    assert sp.wait_failed({"failed": True}) and sp.came_up({"failed": False})
    assert not sp.wait_failed({"skipped": True}) and not sp.came_up({"skipped": True}) and not sp.came_up(None)


def test_replica_failures_read_ready_false():
    from ansible_collections.llmserve.sglang.plugins.filter._server import server_replica_failures
    pl = sp.plan(sp.validate(defaults()), host())
    hv = {"gpu1": {"__server_ready": READY_FAILED}}
    assert server_replica_failures(pl, hv, ["gpu1"], "gpu1") == ["gpu1"]
    hv = {"gpu1": {"__server_ready": {"ready": True, "failed": False}}}
    assert server_replica_failures(pl, hv, ["gpu1"], "gpu1") == []
