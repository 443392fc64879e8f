# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/router's settings are declared once (plugin_utils/_router_settings.TABLE): defaults/main.yml and
meta/argument_specs.yml are generated from it by the tool roles/server's come from
(tools/settings/server_settings.py --role router), and the plan and the view read it."""
import os

import pytest
import yaml

import testpaths
from settingskit import assert_fresh, stale_after_a_port_change
from ansible_collections.llmserve.sglang.plugins.module_utils.router.gateway import PACKAGES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_plan as rp
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_settings as table

FILES = ("roles/router/defaults/main.yml", "roles/router/meta/argument_specs.yml")


def load(rel):
    with open(os.path.join(testpaths.REPO, rel)) as f:
        return yaml.safe_load(f)


def test_the_generated_files_are_fresh():
    assert_fresh(table, ["--check", "--role", "router"],
                 "run python3 tools/settings/server_settings.py --role router, then tools/docs/role_docs.py router")


def test_a_changed_declaration_makes_both_files_stale(tmp_path, monkeypatch):
    defaults, specs = stale_after_a_port_change(tmp_path, monkeypatch, table, FILES)
    assert defaults["router_port"] == 31000
    # main and both entry points take the one declaration (drain and restore alias it)
    specs = specs["argument_specs"]
    assert [specs[e]["options"]["router_port"]["default"] for e in ("main", "drain", "restore")] == [31000] * 3


def test_every_default_and_option_is_the_declarations():
    defaults, specs = load(FILES[0]), load(FILES[1])["argument_specs"]
    assert defaults == dict(("router_" + s.name, s.template or s.default) for s in table.TABLE)
    assert sorted(specs["main"]["options"]) == sorted("router_" + n for n in table.SETTINGS)
    # the drain-only settings are the entry points' alone; what they share with main is main's, word for word
    assert "router_drain_worker_url" not in specs["main"]["options"]
    for entry in ("drain", "restore"):
        options = specs[entry]["options"]
        assert options["router_drain_worker_url"]["required"] is True and "default" not in options[
            "router_drain_worker_url"]
        assert all(options[n] == specs["main"]["options"][n] for n in options if n in specs["main"]["options"])
    # a Jinja default stays Jinja in defaults/main.yml, and the spec states none (its description says it)
    assert defaults["router_venv"] == "/opt/sglang-router/venv-{{ router_package }}"
    assert "default" not in specs["main"]["options"]["router_venv"]


def test_choices_and_the_probe_floor_have_one_home():
    assert table.CHOICES["package"] == tuple(PACKAGES)
    assert rp.POLICIES == table.CHOICES["policy"] and rp.CREDENTIALS == table.CHOICES["worker_credentials"]
    assert table.BY_NAME["health_check_timeout_secs"].min == gates.LIMITS["min_probe_timeout"]


def test_the_flag_table_is_in_the_order_of_the_command_line():
    # the order the gateway's argv had when the table was Jinja (roles/router/vars/main.yml): a reorder rewrites the
    # unit and restarts every router
    assert [table.flag(n) for n in table.FLAGS] == [
        "host", "port", "policy", "prometheus-host", "prometheus-port", "log-level", "health-check-endpoint",
        "health-check-interval-secs", "health-check-timeout-secs", "health-failure-threshold",
        "health-success-threshold", "retry-max-retries", "retry-initial-backoff-ms", "retry-max-backoff-ms",
        "request-timeout-secs", "shutdown-grace-period-secs", "worker-startup-timeout-secs",
        "worker-startup-check-interval"]
    assert table.NEWER_FLAGS == ("health_check_port",)


def test_a_declaration_refuses_what_it_cannot_generate():
    with pytest.raises(ValueError, match="router_x: argv 'always' is none of"):
        table.Setting("x", "int", 1, ("X.",), argv="always")
    with pytest.raises(ValueError, match="x: kind 'number' is none of"):
        table.Setting("x", "number", 1, ("X.",))
    assert table.Setting("x", "path", "/x", ("X.",)).kind == "path"


def test_every_gateway_flag_passes_a_rule_of_the_plan():
    # a flag declared without a check of its own is one argv word: the plan's text rule takes it with no edit there
    assert set(table.FLAGS) <= set(rp.WORDS) | set(rp.OWN_CHECK)
    assert set(rp.OWN_CHECK) <= set(table.FLAGS) and not set(rp.OWN_CHECK) & set(rp.WORDS)
    base = {"worker_urls": ["http://a:1"], "policy": "cache_aware", "health_check_timeout_secs": 3, "package": "smg",
            "health_check_port": 0}
    assert rp.plan(dict(base, retry_max_retries=5), "r", [])["refusals"] == []
    bad = rp.plan(dict(base, retry_max_retries="5\nExecStartPre=/bin/sh"), "r", [])["refusals"]
    assert len(bad) == 1 and bad[0].startswith("router_retry_max_retries=") and "newline" in bad[0]
