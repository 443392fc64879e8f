# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which endpoint says an SGLang worker can take requests (module_utils/server/health.py)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import health


@pytest.mark.parametrize("versions,expected", [
    (["0.5.20"], "/ready"), (["0.5.23", "0.5.20.post1"], "/ready"), (["0.5.19"], "/health"),
    (["0.5.23", "0.5.15.post1"], "/health"), (["0.5.23", ""], "/health"), ([], "/health"), (["0.5.20rc1"], "/health"),
])
def test_ready_only_where_every_worker_has_it(versions, expected):
    assert health.endpoint(versions) == expected


def test_worker_versions_are_the_views_then_the_install_record():
    from ansible_collections.llmserve.sglang.plugins.filter._server import FilterModule

    pick = FilterModule().filters()["_server_health_endpoint"]
    local = {"ansible_facts": {"ansible_local": {"llmserve_sglang": {"installed_version": "0.5.9"}}}}
    # the published view (this run's plan, or the record of the last start) wins over the install record
    assert pick(["a"], {"a": dict(local, server_view={"version": "0.5.23"})}) == "/ready"
    assert pick(["a"], {"a": local}) == "/health"
    assert pick(["b"], {"b": {"ansible_facts": {"ansible_local": {"llmserve_sglang": {"installed_version": "0.5.20"}}}}}) == "/ready"
    assert pick(["b"], {"b": {"ansible_facts": {"ansible_local": {"other": {"installed_version": "0.5.20"}}}}}) == "/health"
    assert pick(["b"], {"b": {"ansible_facts": {"ansible_local": {"other": {"installed_version": "0.5.20"}}}}},
                record="other") == "/ready"
    assert pick(["c", "gone"], {"c": {"server_sglang_version": "0.5.23"}}) == "/health"  # one unknown: /health


def test_the_router_filter_reads_the_workers_of_the_group():
    from ansible_collections.llmserve.sglang.plugins.filter._server import FilterModule

    pick = FilterModule().filters()["_server_health_endpoint"]
    hostvars = {"a": {"server_view": {"version": "0.5.23"}}, "b": {"server_view": {"version": "0.5.20"}}}
    assert pick(["a", "b"], hostvars) == "/ready"
    assert pick(["a", "b", "c"], dict(hostvars, c={"server_view": {"version": "0.5.15.post1"}})) == "/health"
    assert pick([], hostvars) == "/health"  # explicit worker URLs: versions unknown
