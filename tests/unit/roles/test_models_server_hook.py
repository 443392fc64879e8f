# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/server checks the model before it touches the running server, and the deploy stages models first."""
import os

import yaml

import testpaths


def _load(*parts):
    with open(os.path.join(testpaths.REPO, *parts)) as f:
        return yaml.safe_load(f)


def _flat(tasks, role="server"):
    """Tasks in the order they run, blocks opened (the deploy runs under its lock in a block) and the role's own task
    files included (main.yml includes deploy.yml only when the plan has something to do)."""
    for t in tasks:
        yield t
        for key in ("block", "rescue", "always"):
            yield from _flat(t.get(key) or [], role)
        for key in ("ansible.builtin.include_tasks", "ansible.builtin.import_tasks"):
            if key in t and t[key] != "wait.yml" and t[key] != "spec_check.yml":
                yield from _flat(_load("roles", role, "tasks", t[key]), role)


def test_model_verify_runs_before_anything_is_written_or_restarted():
    tasks = list(_flat(_load("roles", "server", "tasks", "main.yml")))
    modules = [next((k for k in t if k.startswith("llmserve.sglang.")), None) for t in tasks]
    verify = modules.index("llmserve.sglang.model_verify")
    # the first file written (the instance's directories come before the checks, issue 43)
    first_change = min(i for i, t in enumerate(tasks) if "files" in (t.get("llmserve.sglang.server_instance") or {}))
    # issue 26: the model check comes first (seconds, as root), then the become check, then SGLang's parser
    assert verify < modules.index("llmserve.sglang.server_preflight") < first_change
    become = next(i for i, t in enumerate(tasks) if "become_error" in str(t.get("ansible.builtin.fail", "")))
    assert verify < become < modules.index("llmserve.sglang.server_preflight")
    when = " ".join(tasks[verify]["when"])
    assert "preflight.verify_model" in when
    args = tasks[verify]["llmserve.sglang.model_verify"]
    assert "preflight.model_path" in args["path"] and "draft_model_path" in args["draft_path"]
    # run as root (no become: a host without sudo must still get the check), judging for the server user
    assert "become_user" not in tasks[verify] and "model_check.user" in args["user"]
    assert "model_check.python" in args["python"]


def test_a_plan_with_nothing_to_do_skips_the_whole_deploy_in_one_task():
    # a no-change deploy is info, plan, settle, report: the lock, the checks and the writes sit in deploy.yml,
    # included only when the plan writes a file or acts (the model check still runs on every start and restart)
    tasks = _load("roles", "server", "tasks", "main.yml")
    names = [next(k for k in t if k.startswith("llmserve.sglang.") or k.startswith("ansible.builtin.")) for t in tasks]
    assert names == ["llmserve.sglang.server_info", "llmserve.sglang.server_plan", "ansible.builtin.set_fact",
                     "ansible.builtin.include_tasks", "ansible.builtin.debug"]
    include = tasks[3]
    assert include["ansible.builtin.include_tasks"] == "deploy.yml"
    assert include["when"] == "__server_plan.needs_write | default(false) or __server_plan.action != 'none'"
    deploy = _load("roles", "server", "tasks", "deploy.yml")
    assert "llmserve.sglang.server_lock" in deploy[0] and "when" not in deploy[0]
    assert "always" in deploy[1] and "llmserve.sglang.server_lock" in deploy[1]["always"][0]


def test_the_check_is_on_by_default_whoever_put_the_weights_there():
    defaults = _load("roles", "server", "defaults", "main.yml")
    assert defaults["server_verify_model"] is True
    spec = _load("roles", "server", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert spec["server_verify_model"]["default"] is True


def test_deploy_stages_models_before_the_server():
    plays = [p["name"] for p in _load("playbooks", "deploy_eagle3.yml")]
    assert plays.index("Stage the model weights") < plays.index("Launch the server and wait until it is ready")


def test_the_directories_are_made_before_anything_runs_with_them():
    # issue 43: the model check and the preflight run the installed SGLang with the instance's cache paths, and
    # importing SGLang makes them with its own umask: the role makes every directory first (owner, mode, marker)
    block = _load("roles", "server", "tasks", "deploy.yml")[1]["block"]
    names = [t["name"] for t in block]
    made = names.index("Make the instance's directories")
    assert made < names.index("Check the model and its draft are whole, servable and fit each other")
    assert made < names.index("Preflight the launch on the host") < names.index("Write the instance files")
    assert names.index("Create the unprivileged service user") < made   # the owner exists first
    task = block[made]["llmserve.sglang.server_instance"]
    assert task["action"] == "write" and "files" not in task and "remove" not in task   # directories only
    assert task["dirs"] == "{{ __server_plan.dirs }}" and task["adopt_dirs"] == "{{ __server_plan.service.adopt_dirs }}"
