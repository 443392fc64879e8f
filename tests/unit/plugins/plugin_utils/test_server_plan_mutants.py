# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/plan word for word (issue 37): the files the plan writes (unit, environment, API-key config, launch spec)
and the role's closing words (report, failure block, become errors) compared whole; a refused value as shown
(sorted, cut at 80 characters, a YAML date as its text, a secret hidden); the example each refusal gives; the
replica's settle; what the plan hands the waiter and the model check."""
import datetime

import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp

from test_server_plan import defaults, host, multinode, running  # pylint: disable=import-error


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
    refused = [r for r in sp.plan(s, host())["refusals"] if r.startswith("server_%s=" % name)]
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
    pl = sp.plan(dict(defaults(), args={}), host())
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
        "READY in 12.3 s (sglang 0.5.23.post1; model kimi; http://127.0.0.1:30000; stages load_weights > ? > ready)"]
    # what the server did not say: the plan's version, '?' for the model, no stages
    assert sp.report(pl, {"ready": True, "elapsed": 1})[-1] == \
        "READY in 1.0 s (sglang 0.5.23; model ?; http://127.0.0.1:30000; stages )"
    # not up, or up without a time: no READY line
    assert sp.report(pl, {"ready": False, "elapsed": 1})[-1] == "WARNING: w2"
    assert sp.report(pl, {"ready": True})[-1] == "WARNING: w2"
    assert sp.report(pl, None)[-1] == "WARNING: w2"


def test_the_report_of_a_worker_node_names_rank_0():
    s, h = multinode("n1")
    pl = sp.plan(s, h)
    lines = sp.report(pl, {"ready": True, "elapsed": 2, "stages": []})
    assert lines[0].endswith("; sglang 0.5.23, node 1 of 2")
    assert lines[-1] == "READY in 2.0 s (sglang 0.5.23; model ?; worker of n0; stages )"


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
    assert sp.failure_message({}, None, None, None, None).split("\n")[0] == \
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
    assert sp.failure_message(own, READY, step, rollback, []).split("\n")[-1] == "  " + last
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

def _pair():
    s0, h0 = multinode("n0")
    s1, h1 = multinode("n1")
    p0 = sp.plan(s0, h0)
    p1 = sp.plan(s1, running(sp.plan(s1, h1)) | {"name": "n1", "groups": h1["groups"], "rank0": h1["rank0"], "own": h1["own"]})
    p0["peer_token"], p1["peer_token"] = "t0", "t1"
    return p0, p1


def test_settle_raises_a_node_to_restart_when_a_peer_starts_or_restarts():
    p0, p1 = _pair()
    for action in ("start", "restart"):
        peers = {"n0": dict(p0, action=action), "n2": dict(p0, action=action, peer_endpoint=None)}
        settled = sp.settle(p1, peers)
        assert (settled["action"], settled["why"]) == ("restart", "node n0, n2 of the replica (re)starts")
        assert settled["watch"] == dict(p1["watch"], token="t0", peers=["n0=10.0.0.1:50009"])
    assert sp.settle(p1, {"n0": dict(p0, action="none")})["action"] == "none"
    assert sp.settle(p1, {"n0": dict(p0, action="stop")})["action"] == "none"


def test_settle_leaves_a_refused_or_single_node_plan_alone():
    p0, p1 = _pair()
    moving = {"n0": dict(p0, action="start")}
    assert sp.settle(dict(p1, refusals=["x"]), moving) == dict(p1, refusals=["x"])
    assert sp.settle(dict(p1, nnodes=1), moving) == dict(p1, nnodes=1)
    single = dict(p1)
    del single["nnodes"]
    assert sp.settle(single, moving) == single  # a plan without a node count is one node
    assert sp.settle(dict(p1, nnodes=2), moving)["action"] == "restart"


def test_settle_takes_rank_0s_token_else_its_own():
    p0, p1 = _pair()
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
        mc = sp.plan(s, host())["preflight"]["model_check"]
        assert (mc["model_impl"], mc["tokenizer_path"]) == ("transformers", "/t")
