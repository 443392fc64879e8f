# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/monitoring's scrape targets from inventory host records (plugins/plugin_utils/_monitoring_targets.py)."""
import re

import pytest
from hypothesis import given, settings, strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.llmserve.sglang.plugins.filter.monitoring_targets import monitoring_targets
from ansible_collections.llmserve.sglang.plugins.plugin_utils._monitoring_targets import build_targets, settings_problems

METRICS = {"enable-metrics": True}


def server(name, **kw):
    rec = {"name": name, "ansible_host": kw.pop("ansible_host", name), "address": "", "host": "0.0.0.0",
           "port": 30000, "tp_group": "", "instance": "default", "args": METRICS, "scrape": True}
    rec.update(kw)
    return rec


def targets(result, kind="server"):
    return [(g["targets"][0], g["labels"]["llmserve_host"]) for g in result[kind]]


def test_one_target_per_replica_rank_zero_only():
    groups = {"tp16": ["a", "b"]}
    r = build_targets([server("a", tp_group="tp16"), server("b", tp_group="tp16")], [], groups, "mon")
    assert targets(r) == [("a:30000", "a")]
    assert r["server"][0]["labels"]["llmserve_replica"] == "tp16"
    assert r["skipped"] == ["b: rank 1 of replica tp16 (only rank 0 serves /metrics)"]


def test_two_instances_on_one_machine_are_two_ports():
    r = build_targets([server("left", ansible_host="10.0.0.1", instance="left"),
                       server("right", ansible_host="10.0.0.1", instance="right", port=30001)], [], {}, "mon")
    assert targets(r) == [("10.0.0.1:30000", "left"), ("10.0.0.1:30001", "right")]
    assert [g["labels"]["llmserve_instance"] for g in r["server"]] == ["left", "right"]
    assert all(g["labels"]["job"] == "sglang" for g in r["server"])


def test_address_precedence_and_ipv6():
    r = build_targets([server("a", address="10.9.9.9", host="10.0.0.5"), server("b", host="10.0.0.6"),
                       server("c", host="::", ansible_host="fd00::3")], [], {}, "mon")
    assert [t[0] for t in targets(r)] == ["10.9.9.9:30000", "10.0.0.6:30000", "[fd00::3]:30000"]


def test_loopback_is_reachable_only_from_the_same_machine():
    same = build_targets([server("a", host="127.0.0.1", ansible_host="10.0.0.1")], [], {}, "10.0.0.1")
    assert targets(same) == [("127.0.0.1:30000", "a")]
    other = build_targets([server("a", host="127.0.0.1", ansible_host="10.0.0.1")], [], {}, "10.0.0.2")
    assert other["server"] == []
    assert "a: SGLang (server_host) listens on 127.0.0.1 only" in other["errors"][0]
    assert "server_host: 0.0.0.0" in other["errors"][0]


def test_every_problem_is_reported_at_once_by_the_filter():
    recs = [server("nometrics", args={}), server("dup1"), server("dup2", ansible_host="dup1"),
            server("lost", tp_group="nogroup")]
    routers = [{"name": "gw", "ansible_host": "10.0.0.9", "address": "", "host": "127.0.0.1", "port": 29000}]
    with pytest.raises(AnsibleFilterError) as e:
        monitoring_targets(recs, routers=routers, groups={}, monitoring_machine="mon")
    msg = str(e.value)
    assert "4 problem(s)" in msg
    assert "nometrics: SGLang runs without --enable-metrics" in msg and "'enable-metrics: true'" in msg
    assert "dup1 and dup2 both point Prometheus at dup1:30000" in msg
    assert "lost: server_tp_group 'nogroup' is not an inventory group" in msg
    assert "router_prometheus_host: 0.0.0.0" in msg


def test_enable_metrics_spellings_and_opt_out():
    r = build_targets([server("a", args={"enable_metrics": "true"}), server("b", args={"enable-metrics": False}),
                       server("c", args={}, scrape=False)], [], {}, "mon", require_metrics=True)
    assert targets(r) == [("a:30000", "a")]
    assert len(r["errors"]) == 1 and r["errors"][0].startswith("b: ")
    assert r["skipped"] == ["c: monitoring_scrape is false"]
    lax = build_targets([server("b", args={})], [], {}, "mon", require_metrics=False)
    assert targets(lax) == [("b:30000", "b")]


def test_router_targets():
    r = build_targets([], [{"name": "gw", "ansible_host": "10.0.0.9", "address": "", "host": "0.0.0.0",
                            "port": 29000}], {}, "mon")
    assert targets(r, "router") == [("10.0.0.9:29000", "gw")]
    assert r["router"][0]["labels"]["job"] == "sglang-router"


def test_host_records_read_each_hosts_view():
    from ansible_collections.llmserve.sglang.plugins.plugin_utils._monitoring_targets import host_records
    hostvars = {
        "g1": {"inventory_hostname": "g1", "ansible_host": "10.0.0.1", "server_port": "31000", "server_host": "0.0.0.0",
               "server_args": {"enable-metrics": True}, "monitoring_scrape": "no"},
        "g2": {"inventory_hostname": "g2",
               "server_view": {"host": "::", "port": 32000, "tp_group": "r", "instance": "k", "args": {}}},
        "r1": {"router_prometheus_host": "0.0.0.0"},
    }
    g1, g2, g3 = host_records(["g1", "g2", "g3"], hostvars, "server", 30005)
    assert (g1["ansible_host"], g1["host"], g1["port"], g1["scrape"], g1["args"]) == (
        "10.0.0.1", "0.0.0.0", 31000, False, {"enable-metrics": True})
    # a published view wins; a host that sets nothing gets the reader's default port and roles/server's host
    assert (g2["host"], g2["port"], g2["tp_group"], g2["instance"]) == ("::", 32000, "r", "k")
    assert (g3["name"], g3["ansible_host"], g3["host"], g3["port"], g3["scrape"]) == ("g3", "g3", "127.0.0.1", 30005, True)
    (r1,) = host_records(["r1"], hostvars, "router", 29000)
    assert (r1["host"], r1["port"], r1["address"]) == ("0.0.0.0", 29000, "")
    with pytest.raises(ValueError):
        host_records(["r1"], hostvars, "gateway", 1)


# -- hostile values: names that reach runbook commands, labels that reach the rules file ------------------------------
@pytest.mark.parametrize("field, bad, good, words", [
    ("instance", "$(reboot)", "kimi-tp8", "server_instance"),
    ("instance", "kimi;id", "kimi", "server_instance"),
    ("instance", "kimi\n", "kimi", "server_instance"),
    ("instance", "`id`", "default", "server_instance"),
    ("name", "gpu1$(id)", "gpu1.lan", "inventory host"),
    ("name", "gpu1 -e x", "gpu1", "inventory host"),
    ("tp_group", "r1\nlabels: {}", "r1", "server_tp_group"),
])
def test_a_hostile_name_never_becomes_a_label_or_a_runbook_word(field, bad, good, words):
    def rec(value):
        return server(value) if field == "name" else server("a", **{field: value})

    groups = {"r1": ["a", "z"]}
    r = build_targets([rec(bad)], [], groups, "mon")
    assert r["server"] == [] and len(r["errors"]) == 1 and words in r["errors"][0], r["errors"]
    assert "\n" not in r["errors"][0] and ": " in r["errors"][0]
    ok = build_targets([rec(good)], [], groups, "mon")
    assert ok["errors"] == [] and len(ok["server"]) == 1


def test_a_hostile_router_host_name_is_refused():
    rec = {"name": "gw;reboot", "ansible_host": "10.0.0.9", "address": "", "host": "0.0.0.0", "port": 29000}
    r = build_targets([], [rec], {}, "mon")
    assert r["router"] == [] and "inventory host" in r["errors"][0]
    assert build_targets([], [dict(rec, name="gw")], {}, "mon")["errors"] == []


SETTINGS = {"alert_labels": {"team": "inference"}, "external_labels": {"cluster": "eu-1"},
            "runbook_url": "https://docs.example/monitoring.md",
            "prometheus_args": ["--config.file=/etc/prometheus/prometheus.yml", "--web.listen-address=0.0.0.0:9090"]}


@pytest.mark.parametrize("key, bad, words", [
    ("alert_labels", {"__foo": "x"}, "reserved"),
    ("alert_labels", {"te{am": "x"}, "not a Prometheus label name"),
    ("alert_labels", {"team}\n        severity": "none"}, "not a Prometheus label name"),
    ("alert_labels", {"team": "a\n      - alert: AlwaysFiring"}, "newline"),
    ("alert_labels", {"team": ["a", "b"]}, "list"),
    ("alert_labels", ["team"], "not a mapping"),
    ("external_labels", {"__name__": "x"}, "reserved"),
    ("external_labels", {"cluster": "eu\r"}, "carriage return"),
    ("runbook_url", "javascript:alert(1)", "http:// or https://"),
    ("runbook_url", "https://docs.example/m.md\n", "newline"),
    ("prometheus_args", ["--web.listen-address=0.0.0.0:9090\"; reboot; \""], "plain word"),
    ("prometheus_args", ["--storage.tsdb.path=$(id)"], "plain word"),
    ("prometheus_args", ["--x=`id`"], "plain word"),
])
def test_hostile_settings_are_refused_by_the_filter_before_any_file(key, bad, words):
    assert settings_problems(SETTINGS) == []
    found = settings_problems(dict(SETTINGS, **{key: bad}))
    assert len(found) == 1 and words in found[0] and ": " in found[0], found
    assert "\n" not in found[0] and "\r" not in found[0]
    with pytest.raises(AnsibleFilterError, match="1 problem"):
        monitoring_targets([server("a")], groups={}, monitoring_machine="mon", settings=dict(SETTINGS, **{key: bad}))
    assert monitoring_targets([server("a")], groups={}, monitoring_machine="mon", settings=SETTINGS)["server"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=3))
def test_alert_labels_that_pass_are_names_and_one_line_values(labels):
    if not settings_problems({"alert_labels": labels}):
        for k, v in labels.items():
            assert re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*\Z", k) and not k.startswith("__")
            assert "\n" not in v and "\r" not in v
