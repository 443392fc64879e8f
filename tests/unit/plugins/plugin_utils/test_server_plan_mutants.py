# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/plan word for word (issue 37): the files the plan writes (unit, environment, API-key config, launch spec)
and the role's closing words (report, failure block, become errors) compared whole; a refused value as shown
(sorted, cut at 80 characters, a YAML date as its text, a secret hidden); the example each refusal gives; the
replica's settle; what the plan hands the waiter and the model check."""
import datetime
import json

import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_view import SETTINGS

from test_server_plan import defaults, host, multinode, replica_pair, running  # pylint: disable=import-error


# --- refusals ------------------------------------------------------------------------------------------------------

def test_a_refused_value_is_json_sorted_cut_after_80_characters_and_a_secret_is_hidden():
    bad = sp.Refusals()
    bad.add("env", {"B": 1, "A": 2}, "is bad", "fix it")
    bad.add("x", "a" * 78, "p", "f")                     # shown with its quotes: 80 characters, whole
    bad.add("x", "a" * 79, "p", "f")                     # 81: the first 77 and "..."
    bad.add("tp", datetime.date(2026, 1, 2), "p", "f")   # what YAML makes of server_tp: 2026-01-02
    bad.add("api_key", "s3cret", "p", "f", secret=True)
    assert bad.items == ['server_env={"A": 2, "B": 1} is bad: fix it',
                         'server_x="%s" p: f' % ("a" * 78),
                         'server_x="%s... p: f' % ("a" * 76),
                         'server_tp="2026-01-02" p: f',
                         "server_api_key=(hidden) p: f"]


@pytest.mark.parametrize("name, fix", [
    ("tp", "give an integer, e.g. server_tp: 8"),
    ("port", "give an integer, e.g. server_port: 30000"),
    ("ready_interval", "give a number of seconds, e.g. server_ready_interval: 2"),
    ("progress_interval", "give a number of seconds, e.g. server_progress_interval: 15"),
    ("log_keep", "give an integer, e.g. server_log_keep: 1"),
])
def test_a_number_that_is_none_names_its_example(name, fix):
    s = dict(defaults(), **{name: "lots"})
    refused = [r for r in sp.plan(sp.validate(s), host())["refusals"] if r.startswith("server_%s=" % name)]
    assert refused == ['server_%s="lots" is not %s: %s' % (name, "a whole number" if "integer" in fix else "a number", fix)]


# --- the files ----------------------------------------------------------------------------------------------------

UNIT_S = {"python": "/opt/v/bin/python", "instance": "i1", "start_limit_interval": 600, "start_limit_burst": 4,
          "user": "svc", "group": "grp", "home": "/srv/i1", "restart_policy": "always", "restart_sec": 7,
          "stop_timeout": 90, "unit_limits": {"LimitNOFILE": 65536}, "unit_hardening": {"NoNewPrivileges": True, "PrivateTmp": False},
          "unit_extra": {"Nice": 5}, "stop_grace_unready": 10}
UNIT_P = {"log": "/var/log/i1.log", "env": "/etc/i1/server.env", "pid_file": "/run/i1/server.pid",
          "supervisor": "/usr/local/lib/sup.py"}


def test_the_unit_file_word_for_word():
    text = sp.unit_text(UNIT_S, UNIT_P, ["--model-path", "/m", "--tp-size", 8, "--chat-template", "a b"], 1, 2)
    assert text == """# Managed by llmserve.sglang.server: changes here are overwritten.
# SGLang server instance 'i1' (node 1 of 2).
# Log: /var/log/i1.log (previous runs rotated beside it).
[Unit]
Description=SGLang server i1
Documentation=https://github.com/llmserve/sglang/tree/main/docs/roles/server.md
After=network-online.target
Wants=network-online.target
StartLimitIntervalSec=600
StartLimitBurst=4

[Service]
Type=simple
User=svc
Group=grp
WorkingDirectory=/srv/i1
Environment=HOME=/srv/i1
EnvironmentFile=/etc/i1/server.env
ExecStart=/opt/v/bin/python -m sglang.launch_server \\
   --model-path /m \\
   --tp-size 8 \\
   --chat-template "a b"
StandardOutput=append:/var/log/i1.log
StandardError=append:/var/log/i1.log
Restart=always
RestartSec=7
TimeoutStopSec=90
KillMode=control-group
LimitNOFILE=65536
NoNewPrivileges=yes
PrivateTmp=no
ReadWritePaths=/srv/i1
Nice=5

[Install]
WantedBy=multi-user.target
"""


def test_the_environment_file_word_for_word():
    assert sp.env_text({"instance": "i1"}, {"B": "x y", "A": 1, "C": 'q"'}) == (
        "# Managed by llmserve.sglang.server: changes here are overwritten.\n"
        "# Environment of SGLang instance 'i1' (the API key, if any, is in api-key.yaml, read by SGLang via --config).\n"
        'A="1"\nB="x y"\nC="q\\""\n')


def test_the_api_key_config_word_for_word():
    assert sp.api_key_text({"instance": "i1", "api_key": "k'1"}) == (
        "# SGLang --config file of instance 'i1': SGLang merges it inside the process (prepare_server_args),\n"
        "# so the API key stays out of the server's argv (ps, /proc/PID/cmdline). "
        "Managed by llmserve.sglang.server: changes here are overwritten.\n"
        "api-key: \"k'1\"\n")


def test_the_launch_spec_word_for_word():
    text = sp.launch_spec_text(UNIT_S, UNIT_P, ["--tp-size", 8])
    assert text == """{
    "_comment": "SGLang instance i1 on a host without systemd: read by /usr/local/lib/sup.py (start --spec). \
Managed by llmserve.sglang.server: changes here are overwritten.",
    "command": [
        "/opt/v/bin/python",
        "-m",
        "sglang.launch_server",
        "--tp-size",
        "8"
    ],
    "cwd": "/srv/i1",
    "env_file": "/etc/i1/server.env",
    "log": "/var/log/i1.log",
    "pid_file": "/run/i1/server.pid",
    "timeout": 90,
    "user": "svc"
}
"""


def test_a_file_of_the_plan_is_its_path_text_mode_owner_and_hash():
    assert sp._file("/p", "t", "0640", "root", "grp") == {
        "path": "/p", "content": "t", "mode": "0640", "owner": "root", "group": "grp", "secret": False,
        "sha256": "e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8"}
    assert sp._file("/p", "t", "0640", "root", "grp", secret=True)["secret"] is True


# --- the closing words --------------------------------------------------------------------------------------------

def _started():
    pl = sp.plan(sp.validate(dict(defaults(), args={})), host())
    pl["warnings"] = ["w1", "w2"]
    return pl


def test_the_report_of_a_start_that_came_up():
    pl = _started()
    ready = {"ready": True, "elapsed": 12.34, "server": {"version": "0.5.23.post1", "served_model": "kimi"},
             "stages": [{"stage": "load_weights"}, {}, {"stage": "ready"}]}
    assert sp.report(pl, ready) == [
        "sglang-default.service: start (not running (never started)); sglang 0.5.23, node 0 of 1",
        "/opt/sglang/venv/bin/python -m sglang.launch_server " + " ".join(pl["argv"]),
        "WARNING: w1", "WARNING: w2",
        "READY in 12.3 s (sglang 0.5.23.post1; model kimi; http://127.0.0.1:30000; stages load_weights > ? > ready; "
        "speculation: static EAGLE3, from the inventory)"]
    # what the server did not say: the plan's version, '?' for the model, no stages
    assert sp.report(pl, {"ready": True, "elapsed": 1})[-1] == \
        "READY in 1.0 s (sglang 0.5.23; model ?; http://127.0.0.1:30000; stages ; speculation: static EAGLE3, from the inventory)"
    # not up, or up without a time: no READY line
    assert sp.report(pl, {"ready": False, "elapsed": 1})[-1] == "WARNING: w2"
    assert sp.report(pl, {"ready": True})[-1] == "WARNING: w2"
    assert sp.report(pl, None)[-1] == "WARNING: w2"


def test_the_ready_line_names_the_speculation_applied_and_its_source():
    spec = {"algorithm": "EAGLE3", "draft_model_path": "/m/draft", "adaptive": True, "eagle_topk": 1, "num_steps": 3,
            "num_draft_tokens": 4, "adaptive_config": {"1": {"candidate_steps": [3]}, "57": {"candidate_steps": [0]}},
            "source": "benchmark run /r of 2026-12-07T17:00"}
    pl = sp.plan(sp.validate(dict(defaults(), args={}, speculative=spec)), host())
    assert not pl.get("refusals"), pl.get("refusals")
    assert sp.report(pl, {"ready": True, "elapsed": 1})[-1].endswith(
        "; speculation: adaptive EAGLE3 (threshold 56: 3 steps from batch 1, 0 steps from batch 57), from benchmark "
        "run /r of 2026-12-07T17:00)")
    assert "source" not in " ".join(pl["argv"]) and "2026-12-07" not in " ".join(pl["argv"])


def test_the_report_of_a_worker_node_names_rank_0():
    s, h = multinode("n1")
    pl = sp.plan(sp.validate(s), h)
    lines = sp.report(pl, {"ready": True, "elapsed": 2, "stages": []})
    assert lines[0].endswith("; sglang 0.5.23, node 1 of 2")
    assert lines[-1] == ("READY in 2.0 s (sglang 0.5.23; model ?; worker of n0; stages ; speculation: static EAGLE3, "
                         "from the inventory)")


def test_the_report_of_what_did_not_start():
    assert sp.report({}) == ["None: None (None); sglang None, node 0 of 1"]
    assert sp.report({"action": "none", "running": True, "pid": 0}) == [
        "None: none (None); sglang None, node 0 of 1", "running, pid ?"]
    assert sp.report({"action": "none", "running": True, "pid": 7})[-1] == "running, pid 7"
    assert sp.report({"action": "none", "running": False, "pid": 7}) == ["None: none (None); sglang None, node 0 of 1"]
    assert sp.report({"action": "stop", "running": True, "pid": 7}) == ["None: stop (None); sglang None, node 0 of 1"]


OWN = {"label": "sglang-i1.service", "node_rank": 1, "action": "restart",
       "paths": {"log": "/var/log/i1.log", "previous_dir": "/etc/i1/previous"}}
READY = {"ready": False, "msg": "exited in stage cuda_graph... | log: x", "category": "oom_cuda_graph",
         "key_line": "E" * 301, "remedy": "lower --mem-fraction-static"}


def test_the_failure_block_of_a_peer_that_failed_first():
    peer = {"peer_failure": {"node": "n0", "detail": "unit gone", "sent": 10.0, "time": 12.5},
            "stopped": {"killed": True, "grace": 10}, "rolled_back": True}
    assert sp.failure_message(OWN, READY, peer, {"ready": True, "elapsed": 3.21}, ["n0"]).split("\n") == [
        "sglang-i1.service is not ready: node n0 of the replica failed (unit gone), so this node (rank 1) was stopped "
        "2.5 s later instead of waiting for a timeout.",
        "  It did not act on SIGTERM: killed after 10 s (server_stop_grace_unready).",
        "  Log kept: /var/log/i1.log.",
        "  Rolled back: the previous configuration came back and is ready (in 3.2 s)."]
    # the times missing (0 s), or only when it was seen (sent = seen)
    for times in ({}, {"time": 12.5}):
        peer["peer_failure"] = dict({"node": "n0", "detail": "d"}, **times)
        assert " was stopped 0.0 s later " in sp.failure_message(OWN, READY, peer, None, [])
    peer["peer_failure"] = {"node": "n0", "detail": "d", "sent": 2.0}
    assert " was stopped -2.0 s later " in sp.failure_message(OWN, READY, peer, None, [])


def test_the_failure_block_of_this_nodes_wait_in_its_parts():
    step = {"stopped": {"at_once": True, "killed": True},
            "orphans": {"ended": [{"pid": 1, "used_memory_mib": 2}, {"pid": 3, "used_memory_mib": 4}]}}
    assert sp.failure_message(OWN, READY, step, None, [], "stop").split("\n") == [
        "sglang-i1.service is not ready: exited in stage cuda_graph.",
        "  category: oom_cuda_graph",
        "  key line: " + "E" * 300,
        "  remedy: lower --mem-fraction-static",
        "  Its processes were stopped (state T, deaf to SIGTERM): killed at once.",
        "  Ended 2 process(es) it left on the GPUs: pid 1 (2 MiB), pid 3 (4 MiB).",
        "  Log kept: /var/log/i1.log.",
        "  Left stopped (server_on_failure=stop); the previous configuration is kept in /etc/i1/previous "
        "(server_on_failure=rollback puts it back on a failed deploy)."]
    # a category without a remedy (or none at all): the whole message, its trailing dots gone, no parts
    for ready in (dict(READY, remedy=None), dict(READY, category=None)):
        lines = sp.failure_message(OWN, ready, {}, None, [], "stop").split("\n")
        assert lines[0] == "sglang-i1.service is not ready: exited in stage cuda_graph... | log: x."
        assert lines[1] == "  Log kept: /var/log/i1.log."
    # no key line: the three others; no message: 'no diagnosis'
    lines = sp.failure_message(OWN, dict(READY, key_line=""), {}, None, [], "stop").split("\n")
    assert lines[1:3] == ["  category: oom_cuda_graph", "  remedy: lower --mem-fraction-static"]
    assert sp.failure_message(OWN, {"ready": False}, {}, None, []).startswith(
        "sglang-i1.service is not ready: no diagnosis.\n")


def test_the_failure_block_of_a_replica_whose_other_node_failed():
    assert sp.failure_message({}, {"ready": True}, None, None, ["n0", "n2"]).split("\n") == [
        "the server is not ready: node(s) n0, n2 of the replica failed (see their messages).",
        "  Log kept: ?.",
        "  Nothing to roll back to (no previous configuration in ?): the instance stays stopped."]
    assert sp.failure_message({}, None, None, None, None).splitlines()[0] == \
        "the server is not ready: node(s)  of the replica failed (see their messages)."


@pytest.mark.parametrize("own, step, rollback, last", [
    (dict(OWN, action="start"), {"rolled_back": True}, {"ready": True, "elapsed": 1},
     "Nothing ran before this deploy, so nothing is rolled back: the instance stays stopped."),
    (OWN, {"rolled_back": False}, None, "Nothing to roll back to (no previous configuration in /etc/i1/previous): "
     "the instance stays stopped."),
    (OWN, {"rolled_back": True}, {"ready": False, "msg": "stalled"},
     "Rolled back to the previous configuration, but it did NOT come back: stalled"),
    (OWN, {"rolled_back": True}, None, "Rolled back to the previous configuration, but it did NOT come back: not waited on"),
    (OWN, {"rolled_back": True}, {"ready": True}, "Rolled back: the previous configuration came back and is ready (in 0.0 s)."),
])
def test_the_failure_block_says_what_became_of_the_previous_configuration(own, step, rollback, last):
    assert sp.failure_message(own, READY, step, rollback, []).splitlines()[-1] == "  " + last
    assert sp.failure_message(own, READY, step, rollback, [], "rollback") == sp.failure_message(own, READY, step, rollback, [])


def test_become_errors_word_for_word():
    assert sp.become_error("svc", {"euid": 0, "sudo": None}, None) == (
        "the preflight runs SGLang's parser as the server user svc (become_user) and become_method is sudo, but this "
        "host has no sudo: install sudo, or set ansible_become_method: su with ansible_become_flags: '-s /bin/sh' for "
        "this host (as root su needs no password; the flag gives the nologin service user a shell), or "
        "server_preflight: false to skip the preflight")
    assert sp.become_error("svc", {"euid": 0, "sudo": None}, "") == sp.become_error("svc", {"euid": 0}, "sudo")
    assert sp.become_error("svc", {"euid": 0, "su": None}, "su") == (
        "become_method is su but this host has no su: install it (util-linux) or sudo, or set ansible_become_method "
        "to a method the host has")
    assert sp.become_error("svc", {"euid": None, "sudo": None}, None) is None  # nothing known of the host
    assert sp.become_error("", {"euid": 0}, None) is None and sp.become_error("root", {"euid": 0}, None) is None
    assert sp.become_error("svc", {"euid": 0}, "community.general.doas") is None


# --- the replica, the waiter, the model check -------------------------------------------------------------------

def test_settle_raises_a_node_to_restart_when_a_peer_starts_or_restarts():
    p0, p1 = replica_pair()
    for action in ("start", "restart"):
        peers = {"n0": dict(p0, action=action), "n2": dict(p0, action=action, peer_endpoint=None)}
        settled = sp.settle(p1, peers)
        assert (settled["action"], settled["why"]) == ("restart", "node n0, n2 of the replica (re)starts")
        assert settled["watch"] == dict(p1["watch"], token="t0", peers=["n0=10.0.0.1:50009"])
    assert sp.settle(p1, {"n0": dict(p0, action="none")})["action"] == "none"
    assert sp.settle(p1, {"n0": dict(p0, action="stop")})["action"] == "none"


def test_settle_leaves_a_refused_or_single_node_plan_alone():
    p0, p1 = replica_pair()
    moving = {"n0": dict(p0, action="start")}
    assert sp.settle(dict(p1, refusals=["x"]), moving) == dict(p1, refusals=["x"])
    assert sp.settle(dict(p1, nnodes=1), moving) == dict(p1, nnodes=1)
    single = dict(p1)
    del single["nnodes"]
    assert sp.settle(single, moving) == single  # a plan without a node count is one node
    assert sp.settle(dict(p1, nnodes=2), moving)["action"] == "restart"


def test_settle_takes_rank_0s_token_else_its_own():
    p0, p1 = replica_pair()
    assert sp.settle(p1, {"n0": p0})["watch"]["token"] == "t0"
    assert sp.settle(p1, {})["watch"]["token"] == "t1"                     # rank 0 not in the play
    assert sp.settle(p1, {"n0": dict(p0, peer_token=None)})["watch"]["token"] == "t1"
    assert sp.settle(p0, {"n1": p1})["watch"]["token"] == "t0"             # rank 0 keeps its own
    assert sp.settle(dict(p1, node_rank=0), {"n0": p0})["watch"]["token"] == "t1"


def test_what_the_waiter_is_told_of_the_host():
    gpu = {"compute_caps": ["9.0", 9.0], "gpus": [{"name": "H200"}, {"name": "H200"}, {"name": ""}, {}],
           "topology": {"pcie_only": False, "all_nvlink": True}}
    assert sp.ready_host({"tp": 8}, 2, 8, gpu) == {"tp_size": 8, "nnodes": 2, "gpu_count": 8, "compute_caps": ["9.0", "9.0"],
                                                   "gpu_names": ["H200"], "pcie_only": False, "all_nvlink": True}
    assert sp.ready_host({"tp": 0}, 1, None, None) == {"tp_size": 1, "nnodes": 1}
    assert sp.ready_host({}, 1, 0, {"topology": None}) == {"tp_size": 1, "nnodes": 1, "gpu_count": 0}


@pytest.mark.parametrize("ready, failed, up", [
    ({"ready": False, "failed": False}, True, False), ({"ready": True, "failed": True}, False, True),
    ({"failed": True}, True, False), ({"failed": False}, False, True), ({}, False, False),
    ({"skipped": True}, False, False), ({"skipped": True, "ready": True}, False, False),
    ({"changed": False}, False, False),  # neither ready nor failed: not known to be up
    (None, False, False), (["ready"], False, False), ("ready", False, False),
])
def test_a_wait_failed_or_came_up(ready, failed, up):
    assert (sp.wait_failed(ready), sp.came_up(ready)) == (failed, up)


def test_the_model_check_reads_every_spelling_of_the_options():
    for spelling in ("model-impl", "model_impl", "--model-impl"):
        s = dict(defaults(), args={spelling: "transformers", "--tokenizer-path": "/t"})
        mc = sp.plan(sp.validate(s), host())["preflight"]["model_check"]
        assert (mc["model_impl"], mc["tokenizer_path"]) == ("transformers", "/t")


NFS = {"mount": "/data", "fstype": "nfs4", "source": "10.0.0.5:/export", "network": True}


@pytest.mark.parametrize("version, args, note", [
    ("0.5.23", {}, "SGLang 0.5.23: --weight-loader-prefetch-checkpoints applied (each rank prefetches a share of the "
     "shards into the page cache: one read of the checkpoint over the network instead of one per rank); set "
     "server_args: {weight-loader-prefetch-checkpoints: false} to leave it off"),
    ("0.5.10.post1", {}, "SGLang 0.5.10.post1 has no --weight-loader-prefetch-checkpoints (first seen in 0.5.15.post1): "
     "stage the weights to a local disk (roles/models, models_list) for faster starts"),
    ("0.5.23", {"weight_loader_prefetch_checkpoints": False}, "server_args sets weight-loader-prefetch-checkpoints: left as given"),
])
def test_weights_on_a_network_filesystem_word_for_word(version, args, note):
    s = {"model_path": "/data/kimi", "args": args}
    got = sp.model_storage(s, {"draft_model_path": ""}, {"/data/kimi": NFS, "": NFS}, version)
    assert got["network"] == ["/data/kimi"]  # an empty draft path is no path to look up
    assert got["notes"] == ["/data/kimi is on a network filesystem (nfs4 10.0.0.5:/export at /data): every start reads "
                            "the weights over the network", note]


@pytest.mark.parametrize("state, up", [
    ({"active_state": "active"}, True), ({"active_state": "reloading"}, True),
    ({"active_state": "activating", "sub_state": "start"}, True), ({"active_state": "activating", "sub_state": "auto-restart"}, False),
    ({"active_state": "failed"}, False), ({}, False), ({"active_state": None}, False),
])
def test_what_counts_as_running(state, up):
    assert sp._running(state) is up


# --- every refusal of validate(), word for word, in its order ---------------------------------------------------
GOLDEN = [
    ("kinds", dict(tp="eight", ready_interval="soon", wait="maybe", served_model_name=["x"], api_key={"k": 1}, env=["A=1"],
                   cuda_visible_devices="0,1"), [
        'server_tp="eight" is not a whole number: give an integer, e.g. server_tp: 8',
        'server_served_model_name=["x"] is not a string: give a plain string',
        'server_env=["A=1"] is not a mapping: give a YAML mapping ({key: value})',
        'server_api_key=(hidden) is not a string: give a plain string',
        'server_cuda_visible_devices="0,1" is not a list: give a YAML list ([a, b])',
        'server_wait="maybe" is not a boolean: give true or false',
        'server_ready_interval="soon" is not a number: give a number of seconds, e.g. server_ready_interval: '
        '2',
    ]),
    ("choices_ranges", dict(state="up", restart="x", port=65536, dist_init_port=65531, lock_stale_after=59, spec_min_accept_length=0.99,
                            ready_interval=0.09), [
        'server_state="up" is not one of started, stopped: pick one of them',
        'server_restart="x" is not one of always, changed, never: pick one of them',
        'server_port=65536 is out of range: give a value from 1 to 65535',
        'server_lock_stale_after=59 is out of range: give a value >= 60',
        'server_ready_interval=0.09 is out of range: give a value >= 0.1',
        'server_dist_init_port=65531 is out of range: give a value from 1 to 65530',
        'server_spec_min_accept_length=0.99 is out of range: give a value >= 1.0',
    ]),
    ("names_paths", dict(instance="a b", sglang_record="x-y", user="Root", group="-g", home="/var/lib/s g", config_dir="/etc/sglang/../x",
                         log_dir="/var/log/sglang/..", python="bin/python", host="a b", dist_init_host=""), [
        'server_instance="a b" cannot name a systemd unit or a directory: use letters, digits, \'.\', \'_\' or '
        "'-' (at most 64), e.g. server_instance: kimi-tp8",
        'server_sglang_record="x-y" is not the name of a local facts record: give roles/sglang\'s '
        "sglang_local_fact (letters, digits, '_'), e.g. llmserve_sglang, or '' for none",
        'server_user="Root" is not a valid user or group name: use lower-case letters, digits, \'_\' or \'-\' '
        '(at most 32), e.g. sglang',
        'server_group="-g" is not a valid user or group name: use lower-case letters, digits, \'_\' or \'-\' (at '
        'most 32), e.g. sglang',
        'server_home="/var/lib/s g" is not an absolute path without spaces: give an absolute path, e.g. '
        '/var/lib/sglang',
        'server_config_dir="/etc/sglang/../x" is not an absolute path without spaces: give an absolute path, '
        'e.g. /var/lib/sglang',
        'server_log_dir="/var/log/sglang/.." is not an absolute path without spaces: give an absolute path, '
        'e.g. /var/lib/sglang',
        'server_python="bin/python" is not an absolute path without spaces: give a path like '
        '/opt/sglang/venv/bin/python',
        'server_host="a b" is not an address to listen on: give an IP address or host name, e.g. 127.0.0.1 '
        'or 0.0.0.0',
        'server_dist_init_host="" is not an address: give the IP address other nodes reach this host on',
    ]),
    ("model", dict(model_path="./models/x", speculative={"algorithm": ""}), [
        'server_model_path="./models/x" is neither an absolute path nor a hub id (org/name): give the '
        'checkpoint directory, e.g. /models/Kimi-K2.5-int4',
    ]),
    ("env_args", dict(env={"1A": "x", "B": [1], "C": "a\x01b", "D": None}, base_env={"E F": 1},
                      args={"bad key": 1, "chat-template": "a\nb", "mem-fraction-static": 1.01, "schedule_conservativeness": 0,
                            "--max-running-requests": 0, "context-length": True, "page-size": None}), [
        'server_env={"1A": "x"} has a name that is not an environment variable name (systemd would ignore '
        "it): use letters, digits and '_', not starting with a digit, e.g. NCCL_DEBUG",
        'server_env={"B": [1]} has a value that is not a string or number: give a plain value, e.g. "1"',
        'server_env={"C": "..."} has a value with control character 0x01: give a one-line value',
        'server_base_env={"E F": 1} has a name that is not an environment variable name (systemd would '
        "ignore it): use letters, digits and '_', not starting with a digit, e.g. NCCL_DEBUG",
        'server_args={"--max-running-requests": 0} is out of range (SGLang does not check it before loading '
        'the model): give a value >= 1, e.g. --max-running-requests: 256',
        'server_args={"bad key": 1} has a key that is not an SGLang option name: give option names like '
        'mem-fraction-static',
        'server_args={"chat-template": "a\\nb"} has a value that contains a newline: give it on one line '
        'without control characters (| trim a looked-up value)',
        'server_args={"mem-fraction-static": 1.01} is out of range (SGLang does not check it before loading '
        'the model): give a value > 0.0 and <= 1.0, e.g. mem-fraction-static: 0.85',
        'server_args={"schedule_conservativeness": 0} is out of range (SGLang does not check it before '
        'loading the model): give a value > 0.0, e.g. schedule_conservativeness: 1.0',
    ]),
    ("text", dict(api_key="k\n", served_model_name="m\t", speculative={"algorithm": "EAGLE3\n", "draft_model_path": "/d\r"}), [
        'server_api_key=(hidden) contains a newline: remove it (a stray line break from a vault or a file '
        'lookup: use | trim)',
        'server_served_model_name="m\\t" contains a tab: remove it (a stray line break from a vault or a file '
        'lookup: use | trim)',
        'server_speculative={"draft_model_path": "/d\\r"} contains a carriage return: remove it (a stray line '
        'break from a vault or a file lookup: use | trim)',
        'server_speculative={"algorithm": "EAGLE3\\n"} contains a newline: remove it (a stray line break from '
        'a vault or a file lookup: use | trim)',
    ]),
    ("unit", dict(unit_hardening={"lower": 1}, unit_limits={"LimitNOFILE": [1]}, unit_extra={"Nice": "1\n2", "CPUWeight": 5}), [
        'server_unit_hardening={"lower": 1} has a key that is not a systemd setting name: use names like '
        'LimitNOFILE',
        'server_unit_limits={"LimitNOFILE": [1]} has a value that is not one line: give a single-line value',
        'server_unit_extra={"Nice": "1\\n2"} has a value that is not one line: give a single-line value',
    ]),
    ("misc", dict(cuda_visible_devices=[0, "1", "x"], patches=["a", 1], sglang_version="latest",
                  stage_timeouts={"load": 0, "graph": "x", "ok": 5}, home="/usr"), [
        'server_home="/usr" is a system directory or holds one: the role would chmod and chown it: give a '
        'directory of its own, e.g. /var/lib/sglang, /etc/sglang and /var/log/sglang',
        'server_cuda_visible_devices=[0, "1", "x"] must list distinct GPU indexes >= 0: e.g. '
        'server_cuda_visible_devices: [0, 1, 2, 3]',
        'server_patches=["a", 1] must be a list of patch ids: leave it to roles/sglang '
        '(sglang_patches_applied)',
        'server_sglang_version="latest" is not a version: give it as X.Y.Z (e.g. 0.5.23), or leave it empty '
        'to ask the venv',
        'server_stage_timeouts={"graph": "x"} has a timeout that is not a positive number: give seconds, '
        'e.g. {load_weights: 900}',
        'server_stage_timeouts={"load": 0} has a timeout that is not a positive number: give seconds, e.g. '
        '{load_weights: 900}',
    ]),
]


@pytest.mark.parametrize("case, settings, refused", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_every_refusal_word_for_word(case, settings, refused):
    _s, bad = sp.validate(dict(defaults(), **settings))
    assert bad.items == refused, case


def test_a_refused_value_is_replaced_by_its_kinds_empty_value():
    s, _bad = sp.validate(dict(defaults(), tp="eight", ready_interval="soon", wait="maybe", served_model_name=["x"],
                               api_key={"k": 1}, env=["A=1"], cuda_visible_devices="0,1"))
    assert (s["tp"], s["ready_interval"], s["wait"]) == (None, None, None)
    assert (s["served_model_name"], s["api_key"], s["env"], s["cuda_visible_devices"]) == ("", "", {}, [])
    s, bad = sp.validate(dict(defaults(), served_model_name=None, env=None, patches=None, dist_init_host=None))
    assert (s["served_model_name"], s["env"], s["patches"], s["dist_init_host"]) == ("", {}, [], None)
    assert bad.items == []  # null is the empty value of its kind, not a wrong one


@pytest.mark.parametrize("value", [None, ""])
def test_no_speculation_is_written_null_or_empty(value):
    s, bad = sp.validate(dict(defaults(), speculative=value))
    assert bad.items == [] and s["speculative"] == {"algorithm": ""} and s["spec_on"] is False


@pytest.mark.parametrize("value, got", [
    (True, True), (1, True), (0, False), ("yes", True), (" Off ", False), ("", False),
    (2, None), (-1, None), (1.0, None), ("maybe", None), ([1], None),
])
def test_what_reads_as_a_boolean(value, got):
    assert sp._to_bool(value) is got


@pytest.mark.parametrize("value, got", [
    (8, 8), (8.0, 8), (" -3 ", -3), ("8", 8), (8.5, None), ("8.0", None), (True, None), (None, None), ("x", None),
])
def test_what_reads_as_a_whole_number(value, got):
    assert sp._to_int(value) == got and (got is None or isinstance(sp._to_int(value), int))


@pytest.mark.parametrize("path, ok", [
    ("/var/lib/sglang", True), ("/var/lib/sglang/", True), ("/var/lib/../sglang", False), ("/var/lib/sglang/..", False),
    ("/var/lib/s g", False), ("/var/lib/s\tg", False), ("/var/lib/..x", True), ("var/lib", False), (None, False),
])
def test_what_is_an_absolute_path(path, ok):
    assert sp._abs_path(path) is ok


@pytest.mark.parametrize("name", sorted(sp.RANGES))
def test_every_range_at_below_and_above_its_bounds(name):
    lo, hi = sp.RANGES[name]
    step = 1 if SETTINGS[name] == "int" else 0.01

    def refused(value):
        _s, bad = sp.validate(dict(defaults(), **{name: value}))
        return [r for r in bad.items if r.startswith("server_%s=" % name)]
    assert refused(lo) == [] and refused(lo + step) == []
    assert refused(lo - step) == ["server_%s=%s is out of range: give a value %s" % (
        name, lo - step, ">= %s" % lo if hi is None else "from %s to %s" % (lo, hi))]
    if hi is not None:
        assert refused(hi) == [] and refused(hi - step) == []
        assert refused(hi + step) == ["server_%s=%s is out of range: give a value from %s to %s" % (name, hi + step, lo, hi)]


def test_a_number_that_is_none_leaves_the_other_ranges_checked():
    _s, bad = sp.validate(dict(defaults(), tp="eight", port=0, tail_lines=-1))
    assert bad.items == ['server_tp="eight" is not a whole number: give an integer, e.g. server_tp: 8',
                         "server_port=0 is out of range: give a value from 1 to 65535",
                         "server_tail_lines=-1 is out of range: give a value >= 0"]


@pytest.mark.parametrize("check, adaptive, run, mode, requests", [
    ("warn", False, True, "warn", 3), ("fail", False, True, "fail", 3),
    ("off", False, False, "warn", 0), ("off", True, True, "warn", 0),  # off still checks that adaptive runs adaptive
])
def test_the_spec_check_the_tasks_pass(check, adaptive, run, mode, requests):
    spec = dict(defaults()["speculative"], adaptive=adaptive)
    pl = sp.plan(sp.validate(dict(defaults(), args={}, spec_check=check, speculative=spec)), host())
    assert (pl["spec_check"]["run"], pl["spec_check"]["mode"], pl["spec_check"]["requests"]) == (run, mode, requests)


def test_a_stop_carries_what_its_tasks_pass():
    # tasks/deploy.yml takes the lock and stops with the plan's values: a stopped instance's plan has them too
    pl = sp.plan(sp.validate(dict(defaults(), args={}, state="stopped", stop_timeout="30", lock_stale_after=600)), host())
    assert pl["service"]["stop_timeout"] == 30 and pl["service"]["lock_stale_after"] == 600


# --- what plan() decides, key by key ------------------------------------------------------------------------------

def test_a_fresh_systemd_host_key_by_key():
    pl = sp.plan(sp.validate(dict(defaults(), args={})), host())
    assert (pl["action"], pl["why"], pl["label"], pl["manager"], pl["running"], pl["pid"]) == (
        "start", "not running (never started)", "sglang-default.service", "systemd", False, 0)
    assert (pl["changed"], pl["needs_write"], pl["daemon_reload"], pl["create_user"], pl["user_pending"]) == (
        True, True, True, False, False)
    assert (pl["instance"], pl["restart"], pl["nodes"], pl["node_rank"], pl["nnodes"]) == ("default", "changed", ["gpu1"], 0, 1)
    assert pl["service"] == {"user": "sglang", "group": "sglang", "home": "/var/lib/sglang", "adopt_dirs": [],
                             "stop_timeout": 120, "stop_grace_unready": 10, "log_keep": 5, "on_failure": "rollback",
                             "lock_stale_after": 7200, "preflight": True, "wait": True}
    assert pl["spec_check"] == {"run": True, "mode": "warn", "requests": 3, "max_new_tokens": 48,
                                "request_timeout": 30.0}
    assert (pl["peer_endpoint"], pl["watch"], pl["remove"]) == ("gpu1:50009", None, [])
    assert pl["write"] == [f["path"] for f in pl["files"]]
    assert pl["dirs_missing"] == [d["path"] for d in pl["dirs"]]
    assert [(f["path"], f["mode"], f["owner"], f["group"], f["secret"]) for f in pl["files"]] == [
        ("/etc/sglang/default/server.env", "0644", "root", "root", False),
        ("/etc/sglang/default/argv.json", "0644", "root", "root", False),
        ("/etc/systemd/system/sglang-default.service", "0644", "root", "root", False),
        ("/usr/local/lib/llmserve-sglang/sglang_peer_watch.py", "0755", "root", "root", False),
        ("/usr/local/lib/llmserve-sglang/sglang_supervise.py", "0755", "root", "root", False)]
    argv_json = json.loads(pl["files"][1]["content"])
    assert (argv_json["python"], argv_json["argv"], argv_json["version"]) == ("/opt/sglang/venv/bin/python", pl["argv"], "0.5.23")
    pf = dict((k, v) for k, v in pl["preflight"].items() if k not in ("argv", "env", "model_check"))
    assert pf == {"python": "/opt/sglang/venv/bin/python", "model_path": "/models/Kimi-K2.5-int4", "tp": 8, "nnodes": 1,
                  "gpu_count": 8, "host": "127.0.0.1", "port": 30000, "owner_unit": "sglang-default.service",
                  "owner_pid": None, "become_user": "sglang", "verify_model": True, "become_error": None}
    assert (pl["preflight"]["argv"], pl["preflight"]["env"]) == (pl["argv"], pl["env"])
    assert pl["ready"] == {"url": "http://127.0.0.1:30000", "log_path": "/var/log/sglang/default.log",
                           "unit": "sglang-default.service", "pid_file": None, "node_rank": 0, "timeout": 1800,
                           "stall_timeout": 600, "stage_timeouts": None, "interval": 2.0, "tail_lines": 30,
                           "progress_interval": 15.0, "sglang_version": "0.5.23", "chat_probe": True,
                           "host": {"tp_size": 8, "nnodes": 1, "gpu_count": 8, "pcie_only": True}}


def test_a_running_pidfile_host_with_restart_never_key_by_key():
    s = dict(defaults(), args={})
    h = running(sp.plan(sp.validate(s), host(service_mgr="other")))
    h["service_mgr"] = "other"
    h["files"]["/etc/systemd/system/sglang-default.service"] = "old"   # a unit left from systemd days: removed
    h["files"]["/etc/sglang/default/secret.env"] = "old"               # the key file of old releases: removed
    pl = sp.plan(sp.validate(dict(s, restart="never", args={"mem-fraction-static": 0.8}, stage_timeouts={"load_weights": 900})), h)
    label = "sglang-default (pid file /run/llmserve-sglang/default/server.pid)"
    assert (pl["action"], pl["why"], pl["label"], pl["running"], pl["pid"], pl["changed"]) == (
        "none", "running an older configuration; server_restart is never", label, True, 4242, True)
    assert (pl["needs_write"], pl["daemon_reload"], pl["dirs_missing"]) == (True, False, [])
    assert pl["write"] == ["/etc/sglang/default/argv.json", "/etc/sglang/default/launch.json"]
    assert pl["remove"] == ["/etc/sglang/default/secret.env", "/etc/systemd/system/sglang-default.service"]
    assert pl["warnings"][-1] == ("%s runs an older configuration and server_restart is 'never': the new one is written "
                                  "and takes effect at the next restart (playbooks/restart.yml)" % label)
    assert (pl["preflight"]["owner_unit"], pl["preflight"]["owner_pid"]) == (None, 4242)
    assert (pl["ready"]["unit"], pl["ready"]["pid_file"]) == (None, "/run/llmserve-sglang/default/server.pid")
    assert pl["ready"]["stage_timeouts"] == {"load_weights": 900.0}
    # the same with nothing changed: nothing to write, no warning; pid 0 when not known
    again = sp.plan(sp.validate(s), running(sp.plan(sp.validate(s), host(service_mgr="other"))) | {"service_mgr": "other"})
    assert (again["action"], again["why"], again["needs_write"], again["write"]) == ("none", "running, unchanged", False, [])
    assert not any("server_restart is 'never'" in w for w in again["warnings"])
    assert sp.plan(sp.validate(s), host(service_mgr="other", state={"active_state": "active"}))["preflight"]["owner_pid"] is None


def test_what_runs_restarts_per_policy():
    s = dict(defaults(), args={})
    h = running(sp.plan(sp.validate(s), host()))
    assert sp.plan(sp.validate(dict(s, restart="always")), h)[("why")] == "server_restart is always"
    assert sp.plan(sp.validate(dict(s, restart="always")), h)["action"] == "restart"
    changed = dict(s, args={"mem-fraction-static": 0.8})
    assert (sp.plan(sp.validate(changed), h)["action"], sp.plan(sp.validate(changed), h)["why"]) == ("restart", "what it runs changed")
    assert sp.plan(sp.validate(changed), h)["needs_write"] is True
    h["state"] = {"active_state": "failed"}
    assert (sp.plan(sp.validate(s), h)["action"], sp.plan(sp.validate(s), h)["why"]) == ("start", "not running (failed)")
    assert sp.plan(sp.validate(s), h)["needs_write"] is True  # a start is a write, nothing else changed
    h["fingerprint"] = " %s\n" % sp.plan(sp.validate(s), h)["fingerprint"]  # as read from the file: stripped
    h["state"] = {"active_state": "active", "pid": 1}
    assert sp.plan(sp.validate(s), h)["changed"] is False


def test_the_fingerprint_follows_what_runs():
    s = dict(defaults(), args={})
    fp = sp.plan(sp.validate(s), host())["fingerprint"]
    assert sp.plan(sp.validate(s), host())["fingerprint"] == fp
    for change in ({"patches": ["p1"]}, {"patch_state": "abc"}, {"api_key": "k"}, {"env": {"A": "1"}}):
        assert sp.plan(sp.validate(dict(s, **change)), host())["fingerprint"] != fp, change
    assert sp.plan(sp.validate(s), host(version="0.5.22"))["fingerprint"] != fp
    assert sp.plan(sp.validate(s), host(service_mgr="other"))["fingerprint"] != fp  # the launch spec instead of the unit


def test_the_environment_and_its_precedence():
    s = dict(defaults(), args={}, cuda_visible_devices=[0, "2"], base_env={"A": "base", "B": "base", "N": None},
             env={"B": "user", "TRITON_CACHE_DIR": "/mine", "U": None})
    pl = sp.plan(sp.validate(s), host())
    env = pl["env"]
    assert (env["A"], env["B"], env["TRITON_CACHE_DIR"], env["LLMSERVE_SGLANG_INSTANCE"]) == ("base", "user", "/mine", "default")
    assert env["CUDA_VISIBLE_DEVICES"] == "0,2" and "N" not in env and "U" not in env
    assert pl["preflight"]["gpu_count"] == 2 and pl["ready"]["host"]["gpu_count"] == 2
    assert all(isinstance(v, str) for v in env.values())
    no_gpu = sp.plan(sp.validate(dict(defaults(), args={})), host(gpu={"present": False, "count": 8}))
    assert no_gpu["preflight"]["gpu_count"] is None and "CUDA_VISIBLE_DEVICES" not in no_gpu["env"]


def test_check_mode_before_the_user_exists():
    s = dict(defaults(), args={})
    pl = sp.plan(sp.validate(s), host(check_mode=True, user_exists=False))
    assert (pl["user_pending"], pl["preflight"]["become_user"], pl["create_user"]) == (True, "root", True)
    assert sp.plan(sp.validate(s), host(check_mode=False, user_exists=False))["user_pending"] is False
    assert sp.plan(sp.validate(s), host(group_exists=False))["create_user"] is True
    assert sp.plan(sp.validate(dict(s, create_user=False)), host(user_exists=False))["create_user"] is False
    assert sp.plan(sp.validate(s), host(user_exists=None, group_exists=True))["create_user"] is True


def test_the_peer_endpoint_and_watch_of_a_worker():
    s, h = multinode("n1")
    pl = sp.plan(sp.validate(s), h)
    assert pl["watch"] == {"name": "n1", "endpoint": "10.0.0.2:50009", "port": 50009, "timeout": 1860, "peers": [], "token": None}
    assert (pl["preflight"]["nnodes"], pl["ready"]["host"]["nnodes"], pl["ready"]["node_rank"]) == (2, 2, 1)
    h["own"] = {"dist_init_host": "192.168.0.2", "default_ipv4": "10.0.0.2", "ansible_host": "h"}
    assert sp.plan(sp.validate(dict(s, peer_watch_port=40000)), h)["peer_endpoint"] == "192.168.0.2:40000"
    unset = sp.plan(sp.validate(dict(s, peer_watch_port=None, dist_init_port=41000)), h)  # the port after the rendezvous' ninth
    assert (unset["peer_endpoint"], unset["watch"]["port"]) == ("192.168.0.2:41009", 41009)
    h["own"] = {"ansible_host": "h2"}
    assert sp.plan(sp.validate(s), h)["peer_endpoint"] == "h2:50009"
    h["own"] = {}
    assert sp.plan(sp.validate(s), h)["peer_endpoint"] == "n1:50009"
    assert sp.plan(sp.validate(dict(s, peer_watch=False)), h)["watch"] is None


@pytest.mark.parametrize("rank0, addr", [
    ({"dist_init_host": "192.168.0.1", "default_ipv4": "10.0.0.1", "ansible_host": "a"}, "192.168.0.1:50000"),
    ({"default_ipv4": "10.0.0.1", "ansible_host": "a"}, "10.0.0.1:50000"),
    ({"ansible_host": "a"}, "a:50000"), ({}, "n0:50000"), (None, "n0:50000"),
])
def test_the_rendezvous_is_rank_0s_address(rank0, addr):
    s, h = multinode("n1")
    h["rank0"] = rank0
    a = sp.plan(sp.validate(s), h)["argv"]
    assert a[a.index("--dist-init-addr") + 1] == addr


def test_the_replica_refusals_word_for_word():
    s, h = multinode("n1")
    assert sp.plan(sp.validate(dict(s, tp=15)), h)["refusals"] == [
        "server_tp=15 (total across nodes) does not divide over the 2 hosts of pair: set server_tp to a multiple of "
        "the node count (e.g. 16)"]
    assert sp.plan(sp.validate(dict(s, tp_group="nope")), h)["refusals"] == [
        'server_tp_group="nope" is not an inventory group: set it to the group whose hosts form one TP replica']
    h["groups"] = {"pair": ["n0", "n2"]}
    assert sp.plan(sp.validate(s), h)["refusals"] == [
        'server_tp_group="pair" does not contain n1: add the host to the group or unset server_tp_group for it']
    del h["name"]  # a host without a name is the view's 'localhost'
    assert sp.plan(sp.validate(s), h)["refusals"] == [
        'server_tp_group="pair" does not contain localhost: add the host to the group or unset server_tp_group for it']


def test_a_stopped_instance():
    s = dict(defaults(), args={}, state="stopped", model_path="")
    h = running(sp.plan(sp.validate(dict(defaults(), args={})), host()))
    pl = sp.plan(sp.validate(s), h)
    assert (pl["action"], pl["why"], pl["watch"], pl["refusals"]) == ("stop", "server_state is stopped", None, [])
    assert sp.plan(sp.validate(s), host(state={"active_state": "inactive", "enabled": True}))["action"] == "stop"
    assert (sp.plan(sp.validate(s), host())["action"], sp.plan(sp.validate(s), host())["why"]) == ("none", "server_state is stopped")
    refused = sp.plan(sp.validate(dict(s, port=0)), h)
    assert (refused["action"], refused["why"]) == ("none", "")


def test_no_sglang_in_the_venv_word_for_word():
    pl = sp.plan(sp.validate(dict(defaults(), args={})), host(version=None, version_error="No module named 'sglang'"))
    assert pl["refusals"] == ["/opt/sglang/venv/bin/python cannot report an installed sglang (No module named 'sglang'): run "
                              "roles/sglang first, or set server_python to the python of the venv that holds sglang"]
    assert sp.plan(sp.validate(dict(defaults(), args={})), host(version=None))["refusals"][0].startswith(
        "/opt/sglang/venv/bin/python cannot report an installed sglang (no answer): ")
    assert sp.plan(sp.validate(dict(defaults(), args={}, sglang_version="0.5.22")), host(version=None))["version"] == "0.5.22"


def test_the_report_of_a_plan_without_a_rank_is_rank_0s():
    own = {"ready": {"url": "http://h:1"}, "nodes": ["n0", "n1"], "version": "0.5.23"}
    assert sp.report(own, {"ready": True, "elapsed": 1})[-1] == (
        "READY in 1.0 s (sglang 0.5.23; model ?; http://h:1; stages ; speculation: not known)")


def test_the_failure_block_drops_only_the_messages_trailing_dots():
    assert sp.failure_message(OWN, {"ready": False, "msg": "stalled in stage X.."}, {}, None, []).splitlines()[0] == \
        "sglang-i1.service is not ready: stalled in stage X."


def test_systemd_asked_of_a_host_without_it_names_the_host():
    s = dict(defaults(), args={}, service_manager="systemd")
    fix = ", not systemd: set server_service_manager to auto or pidfile (a supervised launcher with a pid file)"
    assert sp.plan(sp.validate(s), host(service_mgr="openrc"))["refusals"] == ["server_service_manager=systemd but gpu1 runs openrc" + fix]
    nameless = host(service_mgr="openrc")
    del nameless["name"]
    assert sp.plan(sp.validate(s), nameless)["refusals"] == ["server_service_manager=systemd but the host runs openrc" + fix]


@pytest.mark.parametrize("mgr, manager, version, health", [
    ("systemd", "systemd", "0.5.23", "/ready"), ("other", "pidfile", "0.5.23", "/ready"), ("systemd", "systemd", "0.5.9", "/health"),
])
def test_the_record_of_the_start_holds_the_resolved_manager_and_version(mgr, manager, version, health):
    pl = sp.plan(sp.validate(dict(defaults(), args={})), host(service_mgr=mgr, version=version))
    text = next(f["content"] for f in pl["files"] if f["path"].endswith("/argv.json"))
    record = json.loads(text)
    assert text == json.dumps(record, indent=4, sort_keys=True) + "\n"  # keys sorted, 4 spaces: a diff reads it
    assert text.startswith('{\n    "argv": [\n        "--model-path",\n')
    assert (record["version"], record["view"]["version"], record["view"]["manager"], record["view"]["health_path"]) == (
        version, version, manager, health)


@pytest.mark.parametrize("bad_dirs", [{"config_dir": "etc/sglang"}, {"log_dir": "log"}, {"config_dir": "x", "log_dir": "y"}])
def test_a_plan_with_a_relative_config_or_log_dir_has_no_paths(bad_dirs):
    pl = sp.plan(sp.validate(dict(defaults(), args={}, **bad_dirs)), host())
    assert pl["refusals"] and pl["warnings"] == [] and pl["action"] == "none"
    assert not set(pl) & {"paths", "label", "running", "pid"}
    assert set(pl) == {"refusals", "warnings", "manager", "nodes", "node_rank", "nnodes", "action", "why", "write", "remove",
                       "dirs", "files"}


def test_what_the_plan_hands_the_renderer_reaches_the_command_line():
    s = dict(defaults(), args={}, host="0.0.0.0", port=30001, served_model_name="kimi", api_key="k")
    s["speculative"] = dict(s["speculative"], num_steps=3, eagle_topk=1, num_draft_tokens=4)
    pl = sp.plan(sp.validate(s), host())
    assert pl["argv"] == ["--model-path", "/models/Kimi-K2.5-int4", "--tp-size", "8", "--host", "0.0.0.0", "--port", "30001",
                          "--served-model-name", "kimi", "--config", "/etc/sglang/default/api-key.yaml",
                          "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/Kimi-K2.5-EAGLE3",
                          "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                          "--disable-custom-all-reduce"]
    assert pl["view"]["url"] == "http://127.0.0.1:30001" and pl["view"]["paths"] == pl["paths"]
    # no speculation, no name, no key: none of their flags
    off = sp.plan(sp.validate(dict(defaults(), args={}, speculative={"algorithm": ""})), host())
    assert off["argv"] == ["--model-path", "/models/Kimi-K2.5-int4", "--tp-size", "8", "--host", "127.0.0.1", "--port", "30000",
                           "--disable-custom-all-reduce"]


def _plan(h=None, **settings):
    return sp.plan(sp.validate(dict(defaults(), args=settings.pop("args", {}), **settings)), host(**(h or {})))


def test_the_health_settings_reach_the_servers_environment():
    env = _plan(health_check_timeout=500, health_status_check=False)["env"]
    assert env["SGLANG_HEALTH_CHECK_TIMEOUT"] == "500" and "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION" not in env
    assert _plan()["env"]["SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION"] == "0"
    # what base_env sets, the renderer leaves (it sees the environment the server gets)
    assert _plan(base_env={"SGLANG_HEALTH_CHECK_TIMEOUT": "5"})["env"]["SGLANG_HEALTH_CHECK_TIMEOUT"] == "5"


def test_the_renderer_is_told_the_patches_the_algorithm_and_the_adaptive_config_path():
    assert _plan(args={"enable-torch-symm-mem": True}, patches=["sm120-symm-mem"])["refusals"] == []
    assert _plan(args={"enable-torch-symm-mem": True})["refusals"] == [
        "server settings rejected for SGLang 0.5.23: enable_torch_symm_mem fails on SM120 (its size table has compute "
        "capability 9 and 10 only; KeyError: 12 up to 0.5.10): apply roles/sglang's patch 'sm120-symm-mem' (role "
        "passes it in patches) or drop the option"]
    argv = _plan(speculative=dict(defaults()["speculative"], algorithm="eagle3"))["argv"]
    assert argv[argv.index("--speculative-algorithm") + 1] == "EAGLE3"
    pl = _plan(speculative=dict(defaults()["speculative"], adaptive=True, adaptive_config={"1": {"candidate_steps": [1, 3]}}))
    assert pl["refusals"] == [] and "/etc/sglang/default/adaptive.json" in [f["path"] for f in pl["files"]]
    assert pl["argv"][pl["argv"].index("--speculative-adaptive-config") + 1] == "/etc/sglang/default/adaptive.json"


def test_the_compile_caches_and_the_renderers_warnings():
    pl = _plan(home="/srv/x", instance="i2")
    assert (pl["env"]["SGLANG_CACHE_DIR"], pl["env"]["TRITON_CACHE_DIR"]) == (
        "/srv/x/compile-cache/i2/0.5.23", "/srv/x/compile-cache/i2/0.5.23/triton")
    assert pl["warnings"][0].startswith("8 PCIe-only GPUs: --disable-custom-all-reduce added")


def test_network_weights_keep_the_users_own_options():
    pl = sp.plan(sp.validate(dict(defaults(), model_path="/data/kimi", args={"mem-fraction-static": 0.8})),
                 host(model_fs={"/data/kimi": NFS}))
    assert "--weight-loader-prefetch-checkpoints" in pl["argv"] and "--mem-fraction-static" in pl["argv"]


def test_check_mode_with_no_word_on_the_user_counts_it_as_there():
    h = host(check_mode=True)
    del h["user_exists"]
    pl = sp.plan(sp.validate(dict(defaults(), args={})), h)
    assert pl["user_pending"] is False and pl["preflight"]["become_user"] == "sglang"


def test_every_file_and_directory_of_a_pidfile_instance_with_its_owner_and_mode():
    s = dict(defaults(), args={}, home="/srv/h", config_dir="/etc/c", log_dir="/var/log/l", user="svc", group="grp", instance="i2",
             api_key="k", speculative=dict(defaults()["speculative"], adaptive=True, adaptive_config={"1": {"candidate_steps": [1, 3]}}))
    pl = sp.plan(sp.validate(s), host(service_mgr="other"))
    assert [(f["path"], f["mode"], f["owner"], f["group"], f["secret"]) for f in pl["files"]] == [
        ("/etc/c/i2/server.env", "0644", "root", "root", False),
        ("/etc/c/i2/argv.json", "0644", "root", "root", False),
        ("/etc/c/i2/launch.json", "0644", "root", "root", False),
        ("/etc/c/i2/api-key.yaml", "0640", "root", "grp", True),
        ("/etc/c/i2/adaptive.json", "0640", "root", "grp", False),
        ("/usr/local/lib/llmserve-sglang/sglang_peer_watch.py", "0755", "root", "root", False),
        ("/usr/local/lib/llmserve-sglang/sglang_supervise.py", "0755", "root", "root", False)]
    assert json.loads(pl["files"][4]["content"]) == {"1": {"candidate_steps": [1, 3]}}
    assert pl["dirs"] == [{"path": p, "owner": o, "group": g, "mode": m} for p, o, g, m in [
        ("/srv/h", "svc", "grp", "0750"), ("/etc/c", "root", "root", "0755"), ("/etc/c/i2", "root", "grp", "0750"),
        ("/etc/c/i2/previous", "root", "root", "0750"), ("/var/log/l", "root", "grp", "0750"),
        ("/run/llmserve-sglang/i2", "root", "root", "0755"), ("/usr/local/lib/llmserve-sglang", "root", "root", "0755"),
        ("/srv/h/compile-cache/i2", "svc", "grp", "0750"), ("/srv/h/compile-cache/i2/0.5.23", "svc", "grp", "0750")]]
    # a helper the host did not send is not written
    assert "/usr/local/lib/llmserve-sglang/sglang_supervise.py" not in [
        f["path"] for f in sp.plan(sp.validate(s), host(service_mgr="other", helpers={"sglang_peer_watch.py": "# w\n"}))["files"]]


def test_a_systemd_host_removes_the_launch_spec_of_its_pidfile_days():
    s = dict(defaults(), args={})
    h = running(sp.plan(sp.validate(s), host()))
    h["files"]["/etc/sglang/default/launch.json"] = "old"
    assert sp.plan(sp.validate(s), h)["remove"] == ["/etc/sglang/default/launch.json"]


def test_the_fingerprint_is_the_hash_of_what_runs_and_nothing_else():
    # its recipe is a promise: a change restarts every running server at the next deploy
    adaptive = dict(defaults()["speculative"], adaptive=True, adaptive_config={"1": {"candidate_steps": [1, 3]}})
    for s in (dict(defaults(), args={}),
              dict(defaults(), args={}, api_key="k", patches=["p"], patch_state="x", speculative=adaptive)):
        pl = sp.plan(sp.validate(s), host())
        files = dict((f["path"], f["content"]) for f in pl["files"])
        p = pl["paths"]
        recipe = {"unit": files[p["unit"]], "env": files[p["env"]], "secret": files.get(p["api_key"], ""),
                  "files": dict((k, v) for k, v in files.items() if k == p["adaptive"]), "version": "0.5.23",
                  "patches": s["patches"], "patch_state": s["patch_state"]}
        assert pl["fingerprint"] == sp.sha256(json.dumps(recipe, sort_keys=True))


def test_what_needs_a_write():
    s = dict(defaults(), args={})
    h = running(sp.plan(sp.validate(s), host()))
    assert sp.plan(sp.validate(s), h)["needs_write"] is False
    gone = dict(h, files=dict(h["files"], **{"/etc/sglang/default/api-key.yaml": "old"}))
    assert (sp.plan(sp.validate(s), gone)["write"], sp.plan(sp.validate(s), gone)["remove"], sp.plan(sp.validate(s), gone)["needs_write"]) == (
        [], ["/etc/sglang/default/api-key.yaml"], True)
    missing = dict(h, dirs=dict(h["dirs"], **{"/var/log/sglang": False}))
    assert (sp.plan(sp.validate(s), missing)["dirs_missing"], sp.plan(sp.validate(s), missing)["needs_write"]) == (["/var/log/sglang"], True)
    always = sp.plan(sp.validate(dict(s, restart="always")), h)
    assert (always["write"], always["action"], always["needs_write"]) == ([], "restart", True)
    assert sp.plan(sp.validate(s), h)["preflight"]["owner_pid"] is None  # systemd: the unit owns, not a pid


PLAN_KEYS = {"refusals", "warnings", "manager", "nodes", "node_rank", "nnodes", "action", "why", "write", "remove", "dirs",
             "files", "paths", "label", "running", "pid", "version", "view", "argv", "env", "model_storage", "dirs_missing",
             "create_user", "user_pending", "fingerprint", "changed", "daemon_reload", "needs_write", "preflight", "ready",
             "peer_endpoint", "watch", "instance", "restart", "service", "spec_check"}


@pytest.mark.parametrize("restart", ["never", "changed"])
def test_a_whole_plan_has_these_keys_and_no_other(restart):
    s = dict(defaults(), args={}, restart=restart)
    h = running(sp.plan(sp.validate(s), host()))
    for pl in (sp.plan(sp.validate(s), host()), sp.plan(sp.validate(s), h), sp.plan(sp.validate(dict(s, args={"mem-fraction-static": 0.8})), h)):
        assert set(pl) == PLAN_KEYS


@pytest.mark.parametrize("value, refused", [
    ("10.0.0.1", False), ("node-1.example", False), ("fe80::1%eth0", False), (None, False),
    ("", True), ("a b", True), ("10.0.0.1/24", True),
])
def test_the_rendezvous_address_of_this_host(value, refused):
    _s, bad = sp.validate(dict(defaults(), dist_init_host=value))
    assert bad.items == (["server_dist_init_host=%s is not an address: give the IP address other nodes reach this host on"
                          % json.dumps(value)] if refused else [])


@pytest.mark.parametrize("value, refusal", [
    ("/models/Kimi", None), ("Qwen/Qwen3-8B", None), ("moonshotai/Kimi-K2.5", None), ("9b/x", None),
    ("", "is empty: set it to the model directory on the host, e.g. /models/Kimi-K2.5-int4"),
    ("/models/K 2", "is neither an absolute path nor a hub id (org/name): give the checkpoint directory, e.g. /models/Kimi-K2.5-int4"),
    ("-org/x", "is neither an absolute path nor a hub id (org/name): give the checkpoint directory, e.g. /models/Kimi-K2.5-int4"),
    ("org/x/y", "is neither an absolute path nor a hub id (org/name): give the checkpoint directory, e.g. /models/Kimi-K2.5-int4"),
])
def test_the_model_path_of_a_started_server(value, refusal):
    _s, bad = sp.validate(dict(defaults(), model_path=value))
    assert bad.items == (["server_model_path=%s %s" % (json.dumps(value), refusal)] if refusal else [])
    _s, bad = sp.validate(dict(defaults(), model_path=value, state="stopped"))
    assert bad.items == []  # a stopped server needs no model


@pytest.mark.parametrize("text, name", [
    ("a\nb", "a newline"), ("a\r", "a carriage return"), ("\x00", "a NUL"), ("\t", "a tab"), ("\x1b[0m", "control character 0x1b"),
    ("\x7f", "control character 0x7f"), ("plain ~", None), (5, None),
])
def test_control_characters_by_name(text, name):
    assert sp._control_name(text) == name


def test_tables_with_keys_of_any_type_are_checked_in_the_order_of_their_names():
    # YAML gives integer keys: sorted by their text, never compared with strings
    _s, bad = sp.validate(dict(defaults(), env={"B": [1], 5: "x", "A": [2]}, unit_extra={"B": "1\n", 5: "x", "A": "2\n"},
                               stage_timeouts={"b": 0, 1: 0, "a": 0}, args={"page-size": 0, 1: "x", "mem-fraction-static": "lots"}))
    assert [r.split(" ")[0] for r in bad.items] == [
        'server_env={"5":', 'server_env={"A":', 'server_env={"B":',
        'server_args={"page-size":',
        'server_unit_extra={"5":', 'server_unit_extra={"A":', 'server_unit_extra={"B":',
        'server_stage_timeouts={"1":', 'server_stage_timeouts={"a":', 'server_stage_timeouts={"b":']


def test_only_known_options_are_held_to_a_range():
    _s, bad = sp.validate(dict(defaults(), args={"Xmem-fraction-static": 2, "--mem-fraction-static": "0.5", "max_running_requests": 1}))
    assert bad.items == []


@pytest.mark.parametrize("timeout, ok", [(0.5, True), (1, True), (0, False), (-1, False), ("x", False)])
def test_a_stage_timeout_is_any_positive_number(timeout, ok):
    _s, bad = sp.validate(dict(defaults(), stage_timeouts={"load_weights": timeout}))
    assert (bad.items == []) is ok


def test_the_visible_devices_are_read_as_numbers():
    s, bad = sp.validate(dict(defaults(), cuda_visible_devices=["1", 0, 3.0]))
    assert bad.items == [] and s["cuda_visible_devices"] == [1, 0, 3]


def test_the_speculation_of_a_started_server_is_checked_and_normalised():
    spec = {"algorithm": "EAGLE3", "draft_model_path": ""}
    _s, bad = sp.validate(dict(defaults(), speculative=spec))
    assert bad.items == [
        "server_speculative={\"draft_model_path\": \"\"} has no draft model while algorithm is EAGLE3: set "
        "server_speculative.draft_model_path to the EAGLE-3 draft directory, or algorithm: '' to serve without it"]
    _s, bad = sp.validate(dict(defaults(), speculative=spec, state="stopped"))
    assert bad.items == []  # a stopped server's speculation is not checked
    s, bad = sp.validate(dict(defaults(), speculative={"algorithm": "eagle3", "draft_model_path": "/d", "num_steps": "3"}))
    assert bad.items == [] and s["speculative"]["num_steps"] == 3


@pytest.mark.parametrize("name", ["home", "config_dir", "log_dir"])
def test_a_path_in_a_live_tree_is_refused_with_the_path_rules_words(name):
    # /proc, /sys, /dev, /run: owned_dirs.refusal's "live" words, under the setting's own name and value
    _s, bad = sp.validate(dict(defaults(), **{name: "/sys/fs/cgroup/sglang"}))
    assert bad.items == [
        'server_%s="/sys/fs/cgroup/sglang" is inside /sys, a tree of the kernel or of the running system (a directory '
        'made under /sys/fs/cgroup is a cgroup, one under /dev, /proc or /run is no directory on a disk): give a '
        'directory on a disk, e.g. /var/lib/sglang' % name]
    assert sp.validate(dict(defaults(), **{name: "/srv/sglang/%s" % name}))[1].items == []


def test_raw_settings_are_no_plan_input():
    with pytest.raises(TypeError) as e:
        sp.plan(dict(defaults(), args={}), host())
    assert str(e.value) == "plan() takes validate()'s result, not raw settings"
    assert sp.plan(sp.validate(dict(defaults(), args={})), host())["refusals"] == []
