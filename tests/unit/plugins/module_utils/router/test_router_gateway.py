# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/router's argv against the real gateways from PyPI (tests/sglang_wheels/gateway.py: smg 1.13.0 and
sglang-router 0.3.2, installed once into cached venvs): their own --help is parsed, and the argv rendered from it
is parsed back by the real launcher's parse_router_args."""
import testpaths
import json
import os
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
from sglang_wheels import gateway as G  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.router import gateway  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _router_view as router_view  # noqa: E402

ROLE = os.path.join(testpaths.REPO, "roles", "router")
REAL = [(p, v) for p, v, _m in G.GATEWAYS]


def role_flags():
    """The flags roles/router always sets (its view's flag table, plugin_utils/_router_view.py), with sample values."""
    names = list(router_view.build({})["flags"])
    sample = {"host": "127.0.0.1", "port": 30080, "policy": "round_robin", "prometheus-host": "127.0.0.1",
              "prometheus-port": 29000, "log-level": "info", "health-check-endpoint": "/ready"}
    return {n: sample.get(n, 7) for n in names}


def parsed_back(package, version, argv):
    """The real launcher's parse_router_args(argv), as a dict of the fields these tests look at."""
    module = gateway.launcher_module(package)
    code = ("import json, sys\nfrom %s import parse_router_args\na = parse_router_args(json.loads(sys.argv[1]))\n"
            "print(json.dumps({k: getattr(a, k, None) for k in ('worker_urls', 'health_check_endpoint', "
            "'health_check_interval_secs', 'health_failure_threshold', 'health_check_port', 'policy', 'port')}))"
            % module)
    out = subprocess.run([G.python(package, version), "-c", code, json.dumps(argv)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("package, version", REAL)
def test_every_flag_the_role_sets_is_an_option_of_the_real_launcher(package, version):
    options = gateway.parse_help(G.help_text(package, version))
    assert len(options) > 50
    missing = sorted(gateway._flag(n) for n in role_flags() if gateway._flag(n) not in options)
    assert missing == []


def test_only_smg_has_the_dedicated_health_port_and_its_liveness_options():
    smg = gateway.parse_help(G.help_text("smg", "1.13.0"))
    old = gateway.parse_help(G.help_text("sglang-router", "0.3.2"))
    assert "--health-check-port" in smg and "--health-check-port" not in old
    assert "--worker-stall-secs" in smg and "--worker-stall-secs" not in old
    # aliases are read from "--a, --b" lines
    assert "--no-worker-auto-recovery" in smg["--remove-unhealthy-workers"]["aliases"]
    assert "least_load" in smg["--policy"]["choices"] and "least_load" not in old["--policy"]["choices"]


@pytest.mark.parametrize("package, version", REAL)
def test_rendered_argv_is_what_the_real_parser_reads(package, version):
    options = gateway.parse_help(G.help_text(package, version))
    urls = ["http://10.0.0.1:30000/", "http://10.0.0.2:30000"]
    out = gateway.render(urls, role_flags(), optional={"health-check-port": 30081}, options=options,
                         package=package, version=version)
    args = parsed_back(package, version, out["argv"])
    assert args["worker_urls"] == ["http://10.0.0.1:30000", "http://10.0.0.2:30000"]
    assert args["health_check_endpoint"] == "/ready"
    assert args["health_check_interval_secs"] == 7 and args["health_failure_threshold"] == 7
    assert args["policy"] == "round_robin" and args["port"] == 30080
    if package == "smg":
        assert out["health_port"] == 30081 and out["left_out"] == []
        assert args["health_check_port"] == 30081
    else:
        assert out["health_port"] is None
        assert [x["flag"] for x in out["left_out"]] == ["--health-check-port"]
        assert "--health-check-port" not in out["argv"]


def test_a_router_arg_the_installed_gateway_lacks_is_refused_naming_the_fix():
    old = gateway.parse_help(G.help_text("sglang-router", "0.3.2"))
    with pytest.raises(gateway.GatewayError) as err:
        gateway.render(["http://h:1"], {}, extra={"worker-stall-secs": 3}, options=old,
                       package="sglang-router", version="0.3.2")
    assert "--worker-stall-secs" in str(err.value) and "sglang-router 0.3.2" in str(err.value)
    assert "router_args" in str(err.value)
    # smg 1.13 has it: accepted and rendered
    smg = gateway.parse_help(G.help_text("smg", "1.13.0"))
    out = gateway.render(["http://h:1"], {}, extra={"worker-stall-secs": 3}, options=smg, package="smg")
    assert out["argv"][-2:] == ["--worker-stall-secs", "3"]


def test_a_choice_the_installed_gateway_lacks_is_refused():
    old = gateway.parse_help(G.help_text("sglang-router", "0.3.2"))
    with pytest.raises(gateway.GatewayError) as err:
        gateway.render(["http://h:1"], {"policy": "least_load"}, options=old, package="sglang-router")
    assert "least_load" in str(err.value) and "cache_aware" in str(err.value)


@pytest.mark.parametrize("extra", [{"worker-urls": ["http://x:1"]}, {"api_key": "k"}])
def test_flags_the_role_owns_are_refused_in_router_args(extra):
    with pytest.raises(gateway.GatewayError) as err:
        gateway.render(["http://h:1"], {}, extra=extra, options=None)
    assert "remove it from router_args" in str(err.value)


def test_unchecked_render_before_install_keeps_everything_and_bare_flags():
    out = gateway.render(["http://h:1"], {"port": 1}, optional={"health-check-port": 2},
                         extra={"disable-retries": True, "dp-aware": False, "x": ["a", "b"]}, options=None)
    assert out["argv"] == ["--worker-urls", "http://h:1", "--port", "1", "--health-check-port", "2",
                           "--disable-retries", "--x", "a", "b"]


def test_no_workers_and_unknown_package_are_refused():
    with pytest.raises(gateway.GatewayError, match="router_worker_urls"):
        gateway.render([], {}, options=None)
    with pytest.raises(gateway.GatewayError, match="smg"):
        gateway.launcher_module("sglang_router")


def test_role_defaults_install_the_gateway_these_tests_read():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as f:
        d = yaml.safe_load(f)
    assert (d["router_package"], d["router_version"]) == REAL[0]
    assert d["router_health_check_port"] not in (d["router_port"], d["router_prometheus_port"])
