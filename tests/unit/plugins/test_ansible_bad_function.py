# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-core 2.21/2.22's ``ansible-bad-function``, run by CI on 2.19: no banned call in the code that runs on
targets, whatever name it is imported under.

The lists are those of ``ansible_test/_util/controller/sanity/pylint/plugins/unwanted.py`` in the ansible-core
2.21.5 and 2.22.0rc1 wheels: ``subprocess.*`` and ``os.popen/posix_spawn*/spawn*/system`` (2.21), ``sys.exit``,
``builtins.print`` (modules and module_utils); ``tempfile.mktemp`` and ``ansible.errors.AnsibleActionSkip`` (2.22)
anywhere. Shell out with ``host/run.module_runner(module)``; a start that must outlive the module or be watched
while it runs uses ``host/spawn.start`` (fork and exec, which the check accepts)."""
import ast
import os

import pytest

from testpaths import REPO

SUBPROCESS = ("Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "run")
OS = ("popen", "posix_spawn", "posix_spawnp", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve",
      "spawnvp", "spawnvpe", "system")
TARGET_BANNED = frozenset(["subprocess." + n for n in SUBPROCESS] + ["os." + n for n in OS] + ["posix." + n for n in OS]
                          + ["sys.exit", "builtins.print"])
ANYWHERE_BANNED = frozenset(["tempfile.mktemp", "ansible.errors.AnsibleActionSkip"])


def banned_uses(source, banned):
    """[(line, dotted name)] of every reference to a banned name in source, through any import alias."""
    tree = ast.parse(source)
    alias = {}  # local name -> dotted name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    alias[a.asname] = a.name
                else:
                    alias[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                alias[a.asname or a.name] = "%s.%s" % (node.module, a.name)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts, cur = [node.attr], node.value
            while isinstance(cur, ast.Attribute):
                parts.insert(0, cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in alias:
                dotted = ".".join([alias[cur.id]] + parts)
                if dotted in banned:
                    found.append((node.lineno, dotted))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            dotted = alias.get(node.id, "builtins.print" if node.id == "print" else None)
            if dotted in banned:
                found.append((node.lineno, dotted))
    return found


def _files(*parts):
    root = os.path.join(REPO, *parts)
    for folder, _dirs, names in os.walk(root):
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def _offences(paths, banned):
    out = []
    for path in paths:
        with open(path) as f:
            for line, name in banned_uses(f.read(), banned):
                out.append("%s:%d %s" % (os.path.relpath(path, REPO), line, name))
    return out


def test_no_banned_call_in_modules_and_module_utils():
    paths = list(_files("plugins", "modules")) + list(_files("plugins", "module_utils"))
    assert len(paths) > 50
    assert _offences(paths, TARGET_BANNED | ANYWHERE_BANNED) == [], (
        "ansible-core 2.21+ sanity refuses these (ansible-bad-function): run programs through "
        "host/run.module_runner(module), or host/spawn.start for a detached or watched start")


def test_no_action_skip_or_mktemp_anywhere_in_plugins():
    assert _offences(_files("plugins"), ANYWHERE_BANNED) == []


@pytest.mark.parametrize("source, expected", [
    ("import subprocess\nsubprocess.run(['x'])\n", ["subprocess.run"]),
    ("import subprocess as sp\nsp.Popen(['x'])\n", ["subprocess.Popen"]),
    ("from subprocess import check_output as co\nco(['x'])\n", ["subprocess.check_output"]),
    ("import os\nos.system('x')\n", ["os.system"]),
    ("from os import popen\npopen('x')\n", ["os.popen"]),
    ("import os\nos.posix_spawnp('x', ['x'], {})\n", ["os.posix_spawnp"]),
    ("import sys\nsys.exit(1)\n", ["sys.exit"]),
    ("print('x')\n", ["builtins.print"]),
    ("from ansible.errors import AnsibleActionSkip\nraise AnsibleActionSkip('x')\n",
     ["ansible.errors.AnsibleActionSkip"]),
    ("import tempfile\ntempfile.mktemp()\n", ["tempfile.mktemp"]),
])
def test_the_scan_finds_each_banned_form(source, expected):
    assert [name for _line, name in banned_uses(source, TARGET_BANNED | ANYWHERE_BANNED)] == expected


@pytest.mark.parametrize("source", [
    "import os\nos.fork()\nos.execvpe('x', ['x'], {})\n",  # host/spawn's form
    "x = 'print(1); import subprocess; subprocess.run([])'\n",  # a script in a string (probes, preflight)
    "import subprocess\n",  # an import alone is not a call
    "import tempfile\ntempfile.mkstemp()\n",
])
def test_the_scan_lets_the_accepted_forms_pass(source):
    assert banned_uses(source, TARGET_BANNED | ANYWHERE_BANNED) == []
