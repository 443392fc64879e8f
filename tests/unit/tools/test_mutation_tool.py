# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/mutation/mutation.py's own rules: a line of equivalent.txt that names no mutant of the run, or one the tests
now kill, is stale and fails the room; limits are no kills; every room's files exist."""
import importlib.util
import os

import testpaths

spec = importlib.util.spec_from_file_location("mutation_tool", os.path.join(testpaths.REPO, "tools", "mutation", "mutation.py"))
mutation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation)


def test_room_prefixes_name_module_utils_plugin_utils_and_actions():
    assert mutation.room_prefixes("models/contain") == ("models.contain.x",)
    assert mutation.room_prefixes("bench/decision") == ("plugin_utils._bench_curves.x", "plugin_utils._bench_spec_setting.x")
    assert mutation.room_prefixes("actions")[0] == "action.server_lock.x"


def test_a_stale_or_killed_equivalent_is_named_and_a_surviving_one_is_kept():
    equivalent = {"models.contain.x_a__mutmut_1": "same", "models.contain.x_a__mutmut_2": "same",
                  "models.contain.x_b__mutmut_9": "same", "models.contain.x_c__mutmut_3": "same",
                  "models.manifest.x_a__mutmut_1": "another room's line"}
    found = {"models.contain.x_a__mutmut_1": "survived", "models.contain.x_a__mutmut_2": "killed",
             "models.contain.x_c__mutmut_3": "timeout"}
    stale = dict(mutation.stale_equivalents("models/contain", found, equivalent))
    assert sorted(stale) == ["models.contain.x_a__mutmut_2", "models.contain.x_b__mutmut_9", "models.contain.x_c__mutmut_3"]
    assert "killed by the tests" in stale["models.contain.x_a__mutmut_2"]
    assert "no such mutant" in stale["models.contain.x_b__mutmut_9"]


def test_limits_are_no_kills():
    assert not set(mutation.KILLED) & set(mutation.LIMITED)
    assert "timeout" in mutation.LIMITED and "segfault" in mutation.LIMITED and "killed" in mutation.KILLED


def test_every_room_mutates_files_that_exist():
    missing = [(room, f) for room, (files, _tests) in mutation.ROOMS.items() for f in files
               if not os.path.isfile(os.path.join(testpaths.REPO, f))]
    assert missing == []


def test_every_equivalent_line_belongs_to_a_room():
    prefixes = tuple(p for room in mutation.ROOMS for p in mutation.room_prefixes(room))
    orphans = [n for n in mutation.equivalents() if not n.startswith(prefixes)]
    assert orphans == []
