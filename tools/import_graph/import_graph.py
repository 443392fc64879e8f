#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The import graph of plugins/: the rooms of module_utils and the controller wing on floors, and the check that
imports only point down.

    python3 tools/import_graph/import_graph.py            # room graph, sizes, problems (exit 1 when any)
    python3 tools/import_graph/import_graph.py --modules  # every module-level edge too

module_utils ships to the hosts; plugin_utils is the controller wing (the planners: action plugins and filters
import them, on the controller). A module_utils file may import its own room and rooms on a LOWER floor (FLOORS);
the wing may import every module_utils room; action plugins and filters may import anything. A cycle between files
or between rooms, an upward or same-floor arrow, or a file in no known room is a problem. So is target code - a
module or a module_utils file - that imports the wing, directly or through other files (a file marked
``# llmserve: controller-only`` counts as the wing's). docs/architecture.md shows this output;
tests/unit/tools/test_import_graph.py keeps it clean.
"""
from __future__ import print_function

import argparse
import ast
import os
import sys

PREFIX = "ansible_collections.llmserve.sglang.plugins."
# Lower floors are imported by higher ones, never the reverse.
# Floors 0-2 ship to the hosts (module_utils); WING, on top, runs on the controller only.
WING = "plugin_utils"
FLOORS = {
    "host": 0,
    "sglang": 1, "nvidia": 1,
    "install": 2, "bench": 2, "models": 2, "server": 2, "ready": 2, "router": 2,
    WING: 3,
}
PLUGIN_KINDS = ("modules", "action", "filter", "doc_fragments")
# Target code: what ships to a host (modules, and every module_utils room).
TARGET = ("modules",)
CONTROLLER_MARK = "# llmserve: controller-only"


def controller_only(plugins):
    """Nodes of the controller wing, and of any other file that carries the controller-only mark on a line of its own."""
    out = set()
    for root, _dirs, names in os.walk(plugins):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path) as handle:
                    if room_of(node_of(path, plugins)) == WING or any(line.startswith(CONTROLLER_MARK) for line in handle):
                        out.add(node_of(path, plugins))
    return out


def node_of(path, plugins):
    """'module_utils/host/net.py' -> 'host/net'; 'modules/gpu_health.py' -> 'modules/gpu_health'."""
    rel = os.path.relpath(path, plugins).replace(os.sep, "/")
    rel = rel[:-3] if rel.endswith(".py") else rel
    if rel.startswith("module_utils/"):
        rel = rel[len("module_utils/"):]
    return rel[:-len("/__init__")] if rel.endswith("/__init__") else rel


def room_of(node):
    return node.split("/")[0]


def _targets(tree, known):
    """module_utils and wing nodes imported by a parsed file (``from X.room import mod`` resolves to room/mod when it
    exists; a wing file is ``plugin_utils/<name>``)."""
    out = set()
    for item in ast.walk(tree):
        names = []
        for kind, strip in (("module_utils", ""), (WING, WING)):
            head = PREFIX + kind
            if isinstance(item, ast.ImportFrom) and item.module and (item.module + ".").startswith(head + "."):
                base = "/".join(p for p in (strip, item.module[len(head):].lstrip(".").replace(".", "/")) if p)
                names = [base + "/" + a.name if base + "/" + a.name in known else base for a in item.names]
            elif isinstance(item, ast.Import):
                names += ["/".join(p for p in (strip, a.name[len(head + "."):].replace(".", "/")) if p)
                          for a in item.names if a.name.startswith(head + ".")]
        out.update(n for n in names if n and n != WING)
    return out


def graph(plugins):
    """``(nodes {node: lines}, edges {(src, dst)})`` of every Python file under ``plugins``."""
    files = []
    for root, _dirs, names in os.walk(plugins):
        files += [os.path.join(root, n) for n in names if n.endswith(".py")]
    nodes = {}
    for path in files:
        with open(path) as handle:
            nodes[node_of(path, plugins)] = sum(1 for _line in handle)
    edges = set()
    for path in files:
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        src = node_of(path, plugins)
        edges.update((src, dst) for dst in _targets(tree, nodes) if dst != src)
    return nodes, edges


def _cycle(adjacency):
    """One cycle as a list of nodes, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(adjacency.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if not state.get(nxt):
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(adjacency):
        if not state.get(node):
            found = visit(node)
            if found:
                return found
    return None


def _reach(adjacency, start):
    """{node: the node it was reached from} of every node ``start`` imports, directly or not."""
    seen, todo = {}, [start]
    while todo:
        node = todo.pop()
        for nxt in sorted(adjacency.get(node, ())):
            if nxt not in seen and nxt != start:
                seen[nxt] = node
                todo.append(nxt)
    return seen


def problems(nodes, edges, floors=None, controller=None):
    """Every problem of the graph; ``controller``: the controller-only nodes (no check of modules when None)."""
    floors = FLOORS if floors is None else floors
    out = []
    for node in sorted(nodes):
        room = room_of(node)
        if room not in PLUGIN_KINDS and room not in floors:
            out.append("%s is in no known room: put it in one of %s (or add the room to FLOORS)"
                       % (node, ", ".join(sorted(floors))))
    for src, dst in sorted(edges):
        a, b = room_of(src), room_of(dst)
        if a in PLUGIN_KINDS or a == b or a not in floors or b not in floors:
            continue
        if b == WING:
            out.append("%s ships to the hosts but imports the controller wing's %s: move what it needs down into "
                       "module_utils" % (src, dst))
        elif floors[b] >= floors[a]:
            out.append("%s imports %s: %s (floor %d) may only import rooms below it" % (src, dst, a, floors[a], ))
    adjacency = {}
    for src, dst in edges:
        adjacency.setdefault(src, set()).add(dst)
    cyc = _cycle(adjacency)
    if cyc:
        out.append("import cycle between files: %s" % " -> ".join(cyc))
    rooms = {}
    for src, dst in edges:
        if room_of(src) != room_of(dst):
            rooms.setdefault(room_of(src), set()).add(room_of(dst))
    cyc = _cycle(rooms)
    if cyc:
        out.append("import cycle between rooms: %s" % " -> ".join(cyc))
    for module in sorted(n for n in nodes if room_of(n) in TARGET):
        via = _reach(adjacency, module)
        for bad in sorted(set(via) & set(controller or ())):
            path, node = [bad], bad
            while via.get(node) and via[node] != module:
                node = via[node]
                path.append(node)
            out.append("%s runs on the target but imports controller-only %s (%s): move what it needs to a file "
                       "both sides may import (module_utils)" % (module, bad, " <- ".join(path + [module])))
    return out


def sizes(nodes):
    """{room: (files, lines)} with plugin kinds as rooms of their own."""
    out = {}
    for node, lines in nodes.items():
        files, total = out.get(room_of(node), (0, 0))
        out[room_of(node)] = (files + 1, total + lines)
    return out


def report(plugins, modules=False):
    nodes, edges = graph(plugins)
    lines = ["rooms (floor: room files/lines):"]
    size = sizes(nodes)
    for room in sorted(size, key=lambda r: (FLOORS.get(r, 9), r)):
        floor = FLOORS.get(room)
        lines.append("  %-8s %-13s %3d files %6d lines" % ("plugin" if floor is None else "floor %d" % floor, room,
                                                             size[room][0], size[room][1]))
    lines.append("  total: %d files, %d lines" % (len(nodes), sum(nodes.values())))
    counted = {}
    for src, dst in edges:
        key = (room_of(src), room_of(dst))
        if key[0] != key[1]:
            counted[key] = counted.get(key, 0) + 1
    lines.append("room imports (importer -> imported: file edges):")
    for (a, b), n in sorted(counted.items(), key=lambda kv: (FLOORS.get(kv[0][0], 9), kv[0])):
        lines.append("  %s -> %s: %d" % (a, b, n))
    lines.append("file edges: %d" % len(edges))
    if modules:
        lines += ["  %s -> %s" % e for e in sorted(edges)]
    controller = controller_only(plugins)
    lines.append("controller-only: %s" % ", ".join(sorted(controller)))
    found = problems(nodes, edges, controller=controller)
    lines.append("problems: %d" % len(found))
    lines += ["  " + p for p in found]
    return "\n".join(lines), found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugins", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins"))
    parser.add_argument("--modules", action="store_true", help="list every file-level edge")
    args = parser.parse_args(argv)
    text, found = report(os.path.normpath(args.plugins), args.modules)
    print(text)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
