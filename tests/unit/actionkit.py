# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""In-process harness for the collection's action plugins: the real ActionModule, built as ansible-core's
TaskExecutor builds it (a Task, a PlayContext, a DataLoader, a Templar over the task's variables), with one stand-in:
the connection, and through it the host, whose module answers a test scripts (``Host``). What the action decides
runs in this process, where a test (and mutmut) sees it."""
import importlib
from types import SimpleNamespace

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.template import Templar

PKG = "ansible_collections.llmserve.sglang.plugins.action."


class Host(object):
    """The host's modules: each call gets the next scripted answer (a copy); ``calls`` holds (module, args), and
    ``task_vars`` the variables each call was given (ActionBase._execute_module needs the task's: the interpreter,
    become, the connection's settings)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []
        self.task_vars = []

    def __call__(self, module_name=None, module_args=None, task_vars=None, **_kw):
        self.calls.append((module_name, dict(module_args or {})))
        self.task_vars.append(task_vars)
        if len(self.calls) > len(self.answers):
            raise AssertionError("module %s called %d times, %d answer(s) scripted" % (
                module_name, len(self.calls), len(self.answers)))
        return dict(self.answers[len(self.calls) - 1])

    @property
    def args(self):
        return [a for _m, a in self.calls]


def action(name, args, host=None, check_mode=False, become_method=None, task_vars=None):
    """``llmserve.sglang.<name>``'s ActionModule for a task with ``args``; its module calls go to ``host``."""
    task = Task()
    task.action = "llmserve.sglang." + name
    task.args = dict(args)
    task.check_mode = check_mode
    play_context = PlayContext()
    play_context.check_mode = check_mode
    if become_method is not None:
        play_context.become_method = become_method
    loader = DataLoader()
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    cls = importlib.import_module(PKG + name).ActionModule
    act = cls(task, connection, play_context, loader, Templar(loader=loader, variables=task_vars or {}), None)
    act._execute_module = host if host is not None else Host()
    return act


def run(name, args, task_vars=None, host=None, **kw):
    """The task's result, as ``run`` returns it to ansible-core's TaskExecutor; each module call got the task's
    variables."""
    task_vars = dict(task_vars or {})
    act = action(name, args, host=host, task_vars=task_vars, **kw)
    result = act.run(task_vars=task_vars)
    assert all(seen == task_vars for seen in act._execute_module.task_vars), act._execute_module.task_vars
    return result


def _trusted(value):
    """A value as a role's YAML file gives it to the VariableManager: its strings are templates."""
    from ansible.template import trust_as_template
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return dict((k, _trusted(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_trusted(v) for v in value]
    return value


def role_vars(role):
    """roles/<role>'s defaults and vars, as the play gives them to a task of the role (templates unrendered)."""
    import os
    import yaml
    import testpaths
    out = {}
    for part in ("defaults", "vars"):
        path = os.path.join(testpaths.REPO, "roles", role, part, "main.yml")
        if os.path.exists(path):
            with open(path) as handle:
                out.update(yaml.safe_load(handle) or {})
    return _trusted(out)


def documented(module, option):
    """plugins/modules/<module>.py's DOCUMENTATION of ``option`` (its default, type, ...)."""
    import ast
    import os
    import yaml
    import testpaths
    with open(os.path.join(testpaths.REPO, "plugins", "modules", module + ".py")) as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "DOCUMENTATION":
            return yaml.safe_load(node.value.value)["options"][option]
    raise AssertionError("%s has no DOCUMENTATION" % module)
