# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan refuses values that cannot be right (control characters, numbers out of range) before anything runs."""

import glob
import json
import os

import pytest
import testpaths

from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp
from test_server_plan import defaults, host

REPO = testpaths.REPO


def refusals(**settings):
    s = defaults()
    for k, v in settings.items():
        if k == "args":
            s["args"] = dict(s["args"] or {}, **v)
        elif k == "speculative":
            s["speculative"] = dict(s["speculative"], **v)
        else:
            s[k] = v
    pl = sp.plan(sp.validate(s), host())
    return pl["refusals"], pl


@pytest.mark.parametrize("name,value", [
    ("api_key", "k\nport: 1"), ("api_key", "k\r"), ("api_key", "k\x00"), ("api_key", "k\x1b[0m"),
    ("served_model_name", "kimi\n"), ("model_path", "/models/K\n"), ("python", "/opt/v/bin/python\x00"),
    ("log_dir", "/var/log/s\tg"), ("home", "/var/lib/\x7fsglang"),
])
def test_control_characters_in_text_settings_are_refused(name, value):
    bad, pl = refusals(**{name: value})
    mine = [r for r in bad if r.startswith("server_%s=" % name) and "contains" in r]
    assert mine, bad
    assert "remove it" in mine[0]
    assert pl["action"] == "none" and pl["files"] == []  # nothing to act on
    if name == "api_key":
        assert value not in " ".join(bad) and "(hidden)" in mine[0]


@pytest.mark.parametrize("value", ["chat\ntemplate", ["a", "b\r"], "x\x00y"])
def test_control_characters_in_server_args_values_are_refused(value):
    bad, _pl = refusals(args={"chat-template": value})
    assert any(r.startswith("server_args=") and "chat-template" in r and "contains" in r for r in bad), bad


def test_control_characters_in_the_draft_path_are_refused():
    bad, _pl = refusals(speculative={"draft_model_path": "/models/draft\n"})
    assert any(r.startswith("server_speculative=") and "contains a newline" in r for r in bad), bad


def test_env_values_with_any_control_character_are_refused():
    bad, _pl = refusals(env={"NCCL_DEBUG": "INFO\r"})
    assert any(r.startswith("server_env=") and "carriage return" in r for r in bad), bad


@pytest.mark.parametrize("flag,value,ok", [
    ("mem-fraction-static", 1.5, False), ("mem-fraction-static", 0, False), ("mem-fraction-static", "-0.1", False),
    ("mem-fraction-static", 1, True), ("mem-fraction-static", "0.88", True),
    ("max-running-requests", 0, False), ("max-running-requests", 1, True),
    ("cuda-graph-max-bs", -8, False), ("schedule-conservativeness", 0.0, False), ("schedule-conservativeness", 0.3, True),
    ("context_length", 0, False),  # written with '_' as some users do
])
def test_numeric_options_out_of_range_are_refused(flag, value, ok):
    bad, _pl = refusals(args={flag: value})
    mine = [r for r in bad if r.startswith("server_args=") and "out of range" in r]
    assert (not mine) == ok, bad
    if mine:
        assert "give a value" in mine[0] and flag in mine[0]


def test_a_non_number_is_left_to_sglangs_own_parser():
    bad, _pl = refusals(args={"mem-fraction-static": "lots"})
    assert not [r for r in bad if "out of range" in r]


def test_range_table_names_options_the_real_parser_takes_without_a_range():
    """Every option of ARG_RANGES exists in a verified SGLang's parser (flag tables recorded from the real wheels)
    and has no argparse choices there: argparse alone would launch an out-of-range value."""
    tables = sorted(glob.glob(os.path.join(REPO, "tools", "sglang_double", "sglang", "flags", "*.json")))
    assert tables
    for path in tables:
        with open(path) as f:
            flags = json.load(f)["flags"]
        opts = dict((o, fl) for fl in flags for o in fl["opts"])
        for name in sp.ARG_RANGES:
            fl = opts.get("--" + name)
            if fl is None:
                continue  # not in this version (e.g. --dp-size before it was a flag of its own)
            assert not fl.get("choices"), (path, name)
            # numbers without a range in argparse (human_readable_int: an int that also takes 4k, 1Mi)
            assert fl.get("type") in ("int", "float", "human_readable_int"), (path, name)
    newest = tables[-1]
    with open(newest) as f:
        known = set(o for fl in json.load(f)["flags"] for o in fl["opts"])
    assert set("--" + n for n in sp.ARG_RANGES) <= known, newest
