# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 47: the preflight's refusals word for word where the server user cannot reach a model (checked in this
process with its ids dropped, so mutation testing sees the calls: a forked child's are not recorded), a parser
that hits a permission error, unreadable nvidia-smi output, config.json that is no object, and the notes and
warnings run_all hands on. Each refusal next to its good twin."""
import contextlib
import json
import os
import pathlib
import pwd

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight as pf

from localrun import local_run  # pylint: disable=import-error

NOBODY = 65534
NO_PASSWD_UID = 54321
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")


@contextlib.contextmanager
def as_user(uid):
    """This process as ``uid`` (real and effective, no groups), root kept as the saved id to come back to."""
    groups, (ruid, euid, suid), (rgid, egid, sgid) = os.getgroups(), os.getresuid(), os.getresgid()
    os.setgroups([])
    os.setresgid(uid, uid, 0)
    os.setresuid(uid, uid, 0)
    try:
        yield
    finally:
        os.setresuid(ruid, euid, suid)
        os.setresgid(rgid, egid, sgid)
        os.setgroups(groups)


def checkpoint(root):
    model = root / "models" / "m"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_text("")
    os.chmod(str(root / "models"), 0o755)
    os.chmod(str(model), 0o755)
    return model


def refusal(path, user, where, name="model_path"):
    return {"name": name, "ok": False, "msg": (
        "%s %s: the server user %s cannot read it (permission denied; %s): make it readable for that user "
        "or set server_user to one that can" % (name, path, user, where))}


@needs_root
def test_a_model_dir_the_server_user_cannot_list_is_named_with_its_mode(open_dir):
    model = checkpoint(pathlib.Path(open_dir))
    with as_user(NOBODY):
        good = pf.check_checkpoint("model_path", str(model))
    assert good == {"name": "model_path", "ok": True, "msg": "model_path %s looks like a checkpoint" % model}
    os.chmod(str(model), 0o700)
    with as_user(NOBODY):
        bad = pf.check_checkpoint("model_path", str(model))
    assert bad == refusal(model, "nobody", "%s is mode 0700 root:root" % model)


@needs_root
def test_a_model_behind_a_dir_the_server_user_cannot_enter_names_that_dir(open_dir):
    model = checkpoint(pathlib.Path(open_dir))
    os.chmod(str(model.parent), 0o700)
    with as_user(NOBODY):
        bad = pf.check_checkpoint("draft_model_path", str(model))
    assert bad == refusal(model, "nobody", "%s is mode 0700 root:root" % model.parent, "draft_model_path")
    # the way open again: the same user is served
    os.chmod(str(model.parent), 0o755)
    with as_user(NOBODY):
        assert pf.check_checkpoint("draft_model_path", str(model))["ok"]


@needs_root
def test_a_server_user_without_a_passwd_entry_is_named_by_its_uid(open_dir):
    with pytest.raises(KeyError):
        pwd.getpwuid(NO_PASSWD_UID)
    model = checkpoint(pathlib.Path(open_dir))
    os.chmod(str(model), 0o700)
    with as_user(NO_PASSWD_UID):
        bad = pf.check_checkpoint("model_path", str(model))
    assert bad == refusal(model, "uid %d" % NO_PASSWD_UID, "%s is mode 0700 root:root" % model)


def denied_tail(path):
    return "PermissionError: [Errno 13] Permission denied: '%s'" % path


def denied_words(python, path, where):
    return ("SGLang's parser could not be loaded from %s as root: permission denied on %s (%s). The installed SGLang "
            "is not at fault: give root access to it (roles/server makes server_home and the instance's directories "
            "for server_user before the preflight; a path from server_env or server_args must be one that user can "
            "use)" % (python, path, where))


@needs_root
def test_a_parser_denied_a_path_is_told_word_for_word_existing_or_not(tmp_path):
    home = tmp_path / "lib"
    home.mkdir()
    os.chmod(str(home), 0o755)
    made = home / "sglang"
    assert pf.denied_msg("/v/bin/python", denied_tail(made)) == denied_words(
        "/v/bin/python", made,
        "%s does not exist and %s, where it would be made, is mode 0755 root:root" % (made, home))
    made.mkdir()
    os.chmod(str(made), 0o700)
    assert pf.denied_msg("/v/bin/python", denied_tail(made)) == denied_words(
        "/v/bin/python", made, "%s is mode 0700 root:root" % made)
    assert pf.denied_msg("/v/bin/python", "PermissionError: [Errno 13] Permission denied") is None


def fake_python(tmp_path, stdout, stderr="", rc=0):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat >/dev/null\nprintf '%%s\\n' '%s'\nprintf '%%s\\n' \"%s\" >&2\nexit %d\n"
                    % (stdout, stderr, rc))
    fake.chmod(0o755)
    return str(fake)


@needs_root
def test_the_parse_refuses_a_denied_path_as_argv_with_the_python_named(tmp_path):
    home = tmp_path / "lib"
    home.mkdir()
    os.chmod(str(home), 0o755)
    python = fake_python(tmp_path, "", "PermissionError: [Errno 13] Permission denied: '%s/sglang'" % home, rc=1)
    assert pf.parse_and_limits(python, [], run=local_run) == ({"name": "argv", "ok": False, "msg": denied_words(
        python, home / "sglang", "%s/sglang does not exist and %s, where it would be made, is mode 0755 root:root"
        % (home, home))}, None, None)


def test_the_parse_hands_on_only_a_model_answer_that_is_an_object(tmp_path):
    ok = {"name": "argv", "ok": True, "msg": "SGLang 0.5.23 accepts the argv"}
    python = fake_python(tmp_path, json.dumps({"version": "0.5.23", "ok": True, "model": {"problems": ["p"]}}))
    assert pf.parse_and_limits(python, [], {}, run=local_run) == (ok, "0.5.23", {"problems": ["p"]})
    python = fake_python(tmp_path, json.dumps({"version": "0.5.23", "ok": True, "model": ["p"]}))
    assert pf.parse_and_limits(python, [], {}, run=local_run) == (ok, "0.5.23", None)


def test_the_parse_s_throwaway_folder_is_named_and_gone_even_if_the_probe_removed_it(tmp_path):
    python = fake_python(tmp_path, json.dumps({"version": "0.5.23", "ok": True}))
    seen = []

    def run(argv, data=None, environ_update=None, timeout=None):
        scratch = environ_update["SGLANG_CACHE_DIR"]
        seen.append(scratch)
        assert os.path.isdir(scratch)
        if len(seen) == 2:      # a probe that cleans up after itself: no traceback for the folder being gone
            os.rmdir(scratch)
        return local_run(argv, data, environ_update, timeout)
    for _attempt in range(2):
        assert pf.check_parse(python, [], run=run) == (
            {"name": "argv", "ok": True, "msg": "SGLang 0.5.23 accepts the argv"}, "0.5.23")
    assert all(os.path.basename(s).startswith("llmserve-sglang-preflight-") and not os.path.lexists(s) for s in seen)


def test_unreadable_gpu_process_lines_fail_closed_by_name():
    assert pf.check_gpu_procs(runner=lambda cmd: "abc\n") == {"name": "gpu_processes", "ok": False, "msg": (
        "unparseable nvidia-smi output: row 1 has 1 fields, 3 asked for (pid,process_name,used_memory) (check the "
        "nvidia-smi on PATH or nvidia_smi_path, and 'nvidia-smi -q' by hand)")}
    assert pf.check_gpu_procs(runner=lambda cmd: "") == {
        "name": "gpu_processes", "ok": True, "msg": "no foreign processes on the GPUs"}


def test_model_limits_join_every_problem_and_hand_on_the_notes():
    warnings = []
    assert pf.check_limits({"problems": ["a", "b"], "notes": ["n"]}, None, warnings) == {
        "name": "model_limits", "ok": False, "msg": "a; b"}
    assert pf.check_limits({"problems": [], "notes": ["m"]}, None, warnings) == {
        "name": "model_limits", "ok": True,
        "msg": "config.json's dtype and the context-length fit the installed torch and SGLang"}
    assert warnings == ["n", "m"]
    assert pf.check_limits(None, "model_path config.json: bad", warnings) == {
        "name": "model_limits", "ok": False, "msg": "model_path config.json: bad"}


def test_model_config_reads_only_a_local_config_json_and_refuses_one_that_is_no_object(tmp_path):
    assert pf.model_config(None) == (None, None)
    assert pf.model_config("org/model") == (None, None)
    assert pf.model_config(str(tmp_path)) == (None, None)     # no config.json: check_checkpoint names it
    (tmp_path / "config.json").write_text('{"dtype": "bfloat16"}')
    assert pf.model_config(str(tmp_path)) == ({"dtype": "bfloat16"}, None)
    (tmp_path / "config.json").write_text("[1]")
    assert pf.model_config(str(tmp_path)) == (None, "model_path config.json: is a list, not an object: restore the "
                                                    "publisher's config.json")


def test_run_all_hands_model_notes_and_an_unlisted_gpu_to_the_warnings(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    model = checkpoint(tmp_path)
    python = fake_python(tmp_path, json.dumps({"version": "0.5.23", "ok": True,
                                               "model": {"problems": [], "notes": ["context-length not checked"]}}))
    deadlines = {}

    def run(argv, data=None, environ_update=None, timeout=None):
        deadlines[argv[0]] = timeout
        if argv[0] == "nvidia-smi":
            return 9, "", "no driver"
        return local_run(argv, data, environ_update, timeout)
    params = {"python": python, "argv": [], "model_path": str(model), "gpu_count": 1}
    checks, version, warnings = pf.run_all(params, run)
    assert version == "0.5.23" and deadlines == {python: 300, "nvidia-smi": 30}
    assert dict((c["name"], c["ok"]) for c in checks) == {
        "argv": True, "model_limits": True, "model_path": True, "tp": True, "ports": True, "gpu_processes": True}
    assert warnings == ["context-length not checked",
                        "nvidia-smi did not list the GPUs' compute processes: other processes on the GPUs not checked"]


@pytest.mark.parametrize("hub_id", ["XX.XX/model", "XX/XX-model", "org/model.v2"])
def test_a_hub_id_of_any_allowed_shape_is_a_download_not_a_missing_path(hub_id, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)   # nothing of that name here: the id is not a local path
    assert pf.check_checkpoint("model_path", hub_id, env={}) == {
        "name": "model_path", "ok": True, "msg": "model_path %s is a hub id (downloaded at start)" % hub_id}
    assert pf.check_checkpoint("model_path", hub_id, env={"HF_HUB_OFFLINE": "1"})["ok"] is False
