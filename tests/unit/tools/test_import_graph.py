# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/import_graph: plugins/ imports point down the floors, without cycles; and the check catches both."""
import os
import sys

import testpaths

sys.path.insert(0, os.path.join(testpaths.REPO, "tools", "import_graph"))

import import_graph  # noqa: E402  pylint: disable=wrong-import-position

PREFIX = "from ansible_collections.llmserve.sglang.plugins.module_utils"


def test_the_collection_has_no_cycle_and_no_upward_arrow():
    plugins = os.path.join(testpaths.REPO, "plugins")
    nodes, edges = import_graph.graph(plugins)
    controller = import_graph.controller_only(plugins)
    wing = {"plugin_utils/_server_plan", "plugin_utils/_server_view", "plugin_utils/_bench_report", "plugin_utils/_bench_curves",
            "plugin_utils/_bench_spec_setting", "plugin_utils/_monitoring_targets", "plugin_utils/_replica"}
    assert wing <= controller and all(n.startswith("plugin_utils") for n in controller)
    assert ("plugin_utils/_server_plan", "plugin_utils/_server_view") in edges
    assert import_graph.problems(nodes, edges, controller=controller) == []
    assert ("server/preflight", "host/net") in edges and ("modules/gpu_health", "nvidia/gate") in edges


def write(root, rel, text=""):
    path = os.path.join(str(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def test_an_upward_arrow_a_cycle_and_a_homeless_file_are_caught(tmp_path):
    write(tmp_path, "module_utils/host/__init__.py")
    write(tmp_path, "module_utils/server/__init__.py")
    write(tmp_path, "module_utils/host/net.py", PREFIX + ".server import plan\n")          # upward
    write(tmp_path, "module_utils/server/plan.py", PREFIX + ".server.layout import x\n")
    write(tmp_path, "module_utils/server/layout.py", PREFIX + ".server import plan\n")     # cycle
    write(tmp_path, "module_utils/stray.py")
    write(tmp_path, "modules/thing.py", PREFIX + ".server import plan\n")                 # plugins may import any room
    nodes, edges = import_graph.graph(str(tmp_path))
    found = import_graph.problems(nodes, edges)
    assert any("host/net imports server/plan" in p for p in found)
    assert any(p.startswith("import cycle between files") and "server/layout" in p for p in found)
    assert any(p.startswith("stray is in no known room") for p in found)
    assert import_graph.sizes(nodes)["modules"] == (1, 1)
    assert len(found) == 3


def test_a_module_reaching_controller_only_code_is_caught(tmp_path):
    write(tmp_path, "module_utils/server/__init__.py")
    write(tmp_path, "module_utils/server/plan.py", "# llmserve: controller-only\n")
    write(tmp_path, "module_utils/server/layout.py", PREFIX + ".server import plan\n")
    write(tmp_path, "module_utils/server/lock.py")
    write(tmp_path, "modules/info.py", PREFIX + ".server import layout\n")      # through layout
    write(tmp_path, "modules/lock.py", PREFIX + ".server import lock\n")        # fine
    write(tmp_path, "action/plan.py", PREFIX + ".server import plan\n")         # the controller may
    nodes, edges = import_graph.graph(str(tmp_path))
    found = import_graph.problems(nodes, edges, controller=import_graph.controller_only(str(tmp_path)))
    assert found == ["modules/info runs on the target but imports controller-only server/plan "
                     "(server/plan <- server/layout <- modules/info): move what it needs to a file both sides may "
                     "import (module_utils)"]


WING = "from ansible_collections.llmserve.sglang.plugins.plugin_utils"


def test_target_code_reaching_the_controller_wing_is_caught(tmp_path):
    write(tmp_path, "plugin_utils/__init__.py")
    write(tmp_path, "plugin_utils/_plan.py", PREFIX + ".host import net\n")         # the wing imports down: fine
    write(tmp_path, "module_utils/host/net.py")
    write(tmp_path, "module_utils/server/__init__.py")
    write(tmp_path, "module_utils/server/lock.py", WING + "._plan import x\n")       # module_utils -> wing
    write(tmp_path, "modules/info.py", WING + " import _plan as plan\n")             # module -> wing
    write(tmp_path, "action/plan.py", WING + " import _plan\n")                       # the controller may
    write(tmp_path, "filter/f.py", WING + "._plan import x\n")
    nodes, edges = import_graph.graph(str(tmp_path))
    assert {("plugin_utils/_plan", "host/net"), ("server/lock", "plugin_utils/_plan"),
            ("modules/info", "plugin_utils/_plan"), ("action/plan", "plugin_utils/_plan")} <= edges
    found = import_graph.problems(nodes, edges, controller=import_graph.controller_only(str(tmp_path)))
    assert found == [
        "server/lock ships to the hosts but imports the controller wing's plugin_utils/_plan: move what it needs "
        "down into module_utils",
        "modules/info runs on the target but imports controller-only plugin_utils/_plan "
        "(plugin_utils/_plan <- modules/info): move what it needs to a file both sides may import (module_utils)",
    ]


def test_the_report_prints_rooms_and_problems():
    text, found = import_graph.report(os.path.join(testpaths.REPO, "plugins"))
    assert "floor 0  host" in text and "problems: 0" in text and found == []
