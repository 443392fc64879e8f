# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gateway's view (plugin_utils/_router_view.py): what roles/router runs, built from the declared settings and
the plan - the flag table in the command line's order, the health endpoint the plan decided, the workers on the
argv - and, for readers on other hosts, from a host's variables (published view first)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_plan as rp
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_settings as declared
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_view as rv

PLAN = {"urls": ["http://a:30000", "http://c:30000"], "expected": 2, "refusals": [], "urls_in_env": False}


def test_the_view_of_the_defaults():
    v = rv.build({}, PLAN, "/ready")
    assert (v["host"], v["port"], v["url"]) == ("0.0.0.0", 30000, "http://127.0.0.1:30000")
    assert (v["prometheus_host"], v["prometheus_port"], v["policy"]) == ("127.0.0.1", 29000, "cache_aware")
    assert (v["workers"], v["expected"], v["argv_workers"]) == (PLAN["urls"], 2, PLAN["urls"])
    assert v["flags"] == {
        "host": "0.0.0.0", "port": 30000, "policy": "cache_aware", "prometheus-host": "127.0.0.1",
        "prometheus-port": 29000, "log-level": "info", "health-check-endpoint": "/ready",
        "health-check-interval-secs": 5, "health-check-timeout-secs": 3, "health-failure-threshold": 2,
        "health-success-threshold": 2, "retry-max-retries": 5, "retry-initial-backoff-ms": 50,
        "retry-max-backoff-ms": 30000, "request-timeout-secs": 1800, "shutdown-grace-period-secs": 180,
        "worker-startup-timeout-secs": 1800, "worker-startup-check-interval": 10}
    assert list(v["flags"]) == [declared.flag(n) for n in declared.FLAGS]  # the argv's order
    assert v["optional_flags"] == {"health-check-port": 30081}
    assert "api_key" not in v and all(k in v for k in rv.CARRIED)


def test_a_setting_reaches_its_flag_and_the_url():
    v = rv.build({"port": 31000, "host": "::", "policy": "random", "retry_max_retries": 9}, PLAN, "/health")
    assert v["url"] == "http://[::1]:31000"
    assert (v["flags"]["port"], v["flags"]["policy"], v["flags"]["retry-max-retries"]) == (31000, "random", 9)
    # a port that is no number: the plan refuses it; the view never raises
    assert rv.build({"port": "x"}, PLAN)["url"] == "" and rv.build({"port": "31001"}, PLAN)["url"].endswith(":31001")


@pytest.mark.parametrize("port, optional", [(0, {}), ("0", {}), (1, {"health-check-port": 1}),
                                            ("30082", {"health-check-port": "30082"})])
def test_the_probe_port_is_a_flag_only_when_on(port, optional):
    assert rv.build({"health_check_port": port}, PLAN)["optional_flags"] == optional


def test_worker_urls_with_credentials_stay_off_the_argv():
    v = rv.build({}, dict(PLAN, urls_in_env=True))
    assert v["urls_in_env"] is True and v["argv_workers"] == [] and v["workers"] == PLAN["urls"]


def test_the_health_endpoint_the_plan_decides():
    hostvars = {"g1": {"sglang_installed_version": "0.5.23"}, "g2": {"sglang_installed_version": "0.5.23"},
                "g3": {"sglang_installed_version": "0.5.15"}}
    assert rp.health_endpoint({"health_check_endpoint": "auto"}, ["g1", "g2"], hostvars) == "/ready"
    assert rp.health_endpoint({"health_check_endpoint": "auto"}, ["g1", "g3"], hostvars) == "/health"
    # explicit URLs: nobody knows their versions
    assert rp.health_endpoint({"health_check_endpoint": "auto", "worker_urls": ["http://x:1"]}, ["g1"],
                              hostvars) == "/health"
    assert rp.health_endpoint({"health_check_endpoint": "/health_generate"}, ["g1"], hostvars) == "/health_generate"
    # the view takes the setting unless auto; auto without a decision is None (of_host: no plan)
    assert rv.build({"health_check_endpoint": "/x"}, PLAN, "/ready")["health_endpoint"] == "/x"
    assert rv.build({}, PLAN, "/ready")["flags"]["health-check-endpoint"] == "/ready"
    assert rv.build({})["health_endpoint"] is None


def test_of_host_published_first_else_the_hosts_settings():
    published = rv.build({"port": 31000}, PLAN, "/ready")
    assert rv.of_host({"router_view": published, "router_port": 1}) is published
    v = rv.of_host({"router_port": 32000, "router_worker_scheme": "https", "router_prometheus_port": None})
    assert (v["url"], v["worker_scheme"], v["worker_port"], v["prometheus_port"]) == (
        "http://127.0.0.1:32000", "https", None, 29000)
    assert v["workers"] == [] and v["expected"] is None
    # a reader's default applies where the host sets none, and never over what it sets
    assert rv.of_host({}, defaults={"prometheus_port": 29100})["prometheus_port"] == 29100
    assert rv.of_host({"router_prometheus_port": 29200}, defaults={"prometheus_port": 29100})["prometheus_port"] == 29200
    assert rv.of_host({}, defaults={"prometheus_port": None})["prometheus_port"] == 29000
    with pytest.raises(ValueError, match="no roles/router setting"):
        rv.of_host({}, defaults={"metrics_port": 1})


def test_a_setting_the_view_never_carries():
    assert rv.setting({"router_api_key": "k"}, "api_key") == "k"
    assert rv.setting({}, "api_key") == "" == declared.DEFAULTS["api_key"]
    assert rv.setting(None, "worker_scheme") == "http"
    with pytest.raises(ValueError):
        rv.setting({}, "apikey")
