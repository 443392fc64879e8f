# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One rule for an instance name (server/layout.valid_instance), asked by the plan, the view, server_info and the
monitoring targets: ``\\Z``, not ``$`` - "kimi\\n" passed ``re.match(r'^...$')``. Hypothesis over hostile names."""
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import valid_instance
from ansible_collections.llmserve.sglang.plugins.plugin_utils._monitoring_targets import build_targets
from ansible_collections.llmserve.sglang.plugins.plugin_utils._server_view import build as view_of
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from test_server_plan import defaults, host

GOOD = st.from_regex(re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z"), fullmatch=True)
SUFFIX = st.sampled_from(["\n", "\r", "\r\n", "\x00", " ", ";rm -rf /", "$(id)", "`id`", "|sh", "&", "/../etc",
                          "/x", "\t", "'", '"', "\u2028", "\u00e9", "*"])


@settings(deadline=None, max_examples=300)
@given(name=GOOD)
def test_valid_names_are_accepted(name):
    assert valid_instance(name)


@settings(deadline=None, max_examples=300)
@given(name=GOOD, bad=SUFFIX, where=st.sampled_from(["end", "start", "middle"]))
def test_a_name_with_a_newline_cr_shell_text_or_a_path_anywhere_is_refused(name, bad, where):
    hostile = {"end": name + bad, "start": bad + name, "middle": name[:1] + bad + name[1:]}[where]
    assert not valid_instance(hostile)


@pytest.mark.parametrize("name, ok", [
    ("kimi", True), ("kimi-tp8", True), ("a" * 64, True), ("a" * 65, False), ("kimi\n", False), ("kimi\r", False),
    ("../etc", False), ("..", False), (".hidden", False), ("-x", False), ("_x", False), ("", False), ("x y", False),
    ("a/b", False), (None, False), (8, False), (b"kimi", False), (["kimi"], False),
])
def test_the_table(name, ok):
    assert valid_instance(name) is ok


@pytest.mark.parametrize("name", ["kimi\n", "kimi\r", "k;id", "../k"])
def test_the_plan_refuses_it_and_the_view_makes_no_paths(name):
    s = dict(defaults(), instance=name)
    refusals = sp.plan(sp.validate(s), host())["refusals"]
    assert any("cannot name a systemd unit or a directory" in r for r in refusals), refusals
    assert view_of(s)["paths"] is None
    good = dict(defaults(), instance="kimi")  # the good value next to it
    assert not any("cannot name a systemd unit" in r for r in sp.plan(sp.validate(good), host())["refusals"])
    assert view_of(good)["paths"]["unit_name"] == "sglang-kimi.service"


def test_monitoring_refuses_it_as_a_label():
    rec = {"name": "a", "ansible_host": "a", "address": "", "host": "0.0.0.0", "port": 30000, "tp_group": "",
           "instance": "kimi\n", "args": {"enable-metrics": True}, "scrape": True}
    r = build_targets([rec], [], {}, "mon")
    assert r["server"] == [] and r["errors"][0].startswith('"a": server_instance "kimi\\n" cannot name')  # named, with its fix
    r = build_targets([dict(rec, instance="kimi")], [], {}, "mon")
    assert r["errors"] == [] and r["server"][0]["labels"]["llmserve_instance"] == "kimi"
