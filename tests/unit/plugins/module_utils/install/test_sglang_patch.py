# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests for plugins/module_utils/install/patch.py on small files (real files on disk, no mocks)."""
import testpaths
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.install import patch as sp

REPO = testpaths.REPO

ORIG_A = "".join("line %d\n" % i for i in range(1, 31))
ORIG_B = "def gate(cap):\n    return cap in (9, 10)\n\n\nVALUE = 1\n"

DIFF_A = """--- a/pkg/a.py
+++ b/pkg/a.py
@@ -3,3 +3,4 @@
 line 3
 line 4
+inserted after 4
 line 5
@@ -20,3 +21,3 @@
 line 20
-line 21
+LINE 21
 line 22
"""

DIFF_B = """--- a/pkg/b.py
+++ b/pkg/b.py
@@ -1,2 +1,2 @@
 def gate(cap):
-    return cap in (9, 10)
+    return cap in (9, 10, 12)
"""


def write_tree(root, files):
    for rel, text in files.items():
        p = os.path.join(str(root), rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def read(root, rel):
    with open(os.path.join(str(root), rel)) as f:
        return f.read()


@pytest.fixture
def tree(tmp_path):
    write_tree(tmp_path, {"pkg/a.py": ORIG_A, "pkg/b.py": ORIG_B})
    return tmp_path


def P(name, diff, **kw):
    d = {"name": name, "diff": diff}
    d.update(kw)
    return d


def test_apply_then_idempotent(tree):
    state = str(tree / "state.json")
    r = sp.run(str(tree), [P("a", DIFF_A), P("b", DIFF_B)], "0.5.9", ["12.0"], state)
    assert r["changed"] and r["newly_applied"] == ["a", "b"]
    assert r["files_changed"] == ["pkg/a.py", "pkg/b.py"]
    a = read(tree, "pkg/a.py")
    assert "inserted after 4\nline 5\n" in a and "LINE 21\n" in a and "line 21\n" not in a
    assert "(9, 10, 12)" in read(tree, "pkg/b.py")
    rec = json.load(open(state))
    assert [e["name"] for e in rec["patches"]] == ["a", "b"] and rec["state"] == r["state"]
    again = sp.run(str(tree), [P("a", DIFF_A), P("b", DIFF_B)], "0.5.9", ["12.0"], state)
    assert not again["changed"]
    assert again["already_applied"] == ["a", "b"] and again["newly_applied"] == []
    assert again["state"] == r["state"] == again["previous_state"]


def test_offset_when_lines_added_above(tree):
    write_tree(tree, {"pkg/a.py": "new top 1\nnew top 2\n" + ORIG_A})
    r = sp.run(str(tree), [P("a", DIFF_A)])
    assert r["newly_applied"] == ["a"]
    lines = read(tree, "pkg/a.py").splitlines()
    assert lines.index("inserted after 4") == 6 and "LINE 21" in lines


def test_stale_hunk_names_file_and_hunk_and_writes_nothing(tree):
    # second hunk of a.py is stale; b.py alone would apply. Nothing may be written.
    write_tree(tree, {"pkg/a.py": ORIG_A.replace("line 21\n", "line twenty-one\n")})
    before = (read(tree, "pkg/a.py"), read(tree, "pkg/b.py"))
    with pytest.raises(sp.PatchError) as e:
        sp.run(str(tree), [P("b", DIFF_B), P("a", DIFF_A)], state_file=str(tree / "s.json"))
    msg = str(e.value)
    assert "patch 'a' does not apply" in msg and "pkg/a.py hunk #2 (@@ -20,3 +21,3 @@)" in msg
    assert "'line 21'" in msg and "\n" not in msg
    assert (read(tree, "pkg/a.py"), read(tree, "pkg/b.py")) == before
    assert not os.path.exists(str(tree / "s.json"))


def test_no_half_apply_within_one_patch_across_files(tree):
    both = DIFF_B + DIFF_A
    write_tree(tree, {"pkg/a.py": ORIG_A.replace("line 4\n", "line four\n")})
    with pytest.raises(sp.PatchError, match=r"pkg/a.py hunk #1"):
        sp.run(str(tree), [P("ab", both)])
    assert read(tree, "pkg/b.py") == ORIG_B


def test_partially_applied_file_is_an_error_not_a_skip(tree):
    # hunk 1 applied by hand, hunk 2 not: neither forward nor reverse applies
    write_tree(tree, {"pkg/a.py": ORIG_A.replace("line 4\n", "line 4\ninserted after 4\n")})
    with pytest.raises(sp.PatchError, match=r"does not apply: pkg/a.py hunk #1 .*not already applied: pkg/a.py hunk #2"):
        sp.run(str(tree), [P("a", DIFF_A)])


def test_check_mode_reports_and_writes_nothing(tree):
    state = str(tree / "state.json")
    r = sp.run(str(tree), [P("b", DIFF_B)], state_file=state, check_mode=True)
    assert r["changed"] and r["newly_applied"] == ["b"]
    assert read(tree, "pkg/b.py") == ORIG_B and not os.path.exists(state)
    d = r["diff"][0]
    assert d["before"] == ORIG_B and "(9, 10, 12)" in d["after"] and d["after_header"].endswith("pkg/b.py")


def test_reinstall_reapplies_and_dropped_patch_is_reverted(tree):
    state = str(tree / "state.json")
    first = sp.run(str(tree), [P("a", DIFF_A), P("b", DIFF_B)], state_file=state)
    # "reinstall": pristine files come back, state file still there
    write_tree(tree, {"pkg/a.py": ORIG_A, "pkg/b.py": ORIG_B})
    r = sp.run(str(tree), [P("a", DIFF_A), P("b", DIFF_B)], state_file=state)
    assert r["changed"] and r["newly_applied"] == ["a", "b"] and r["state"] == first["state"]
    # drop b: it is reverted, state hash changes
    r = sp.run(str(tree), [P("a", DIFF_A)], state_file=state)
    assert r["reverted"] == ["b"] and r["applied"] == ["a"]
    assert read(tree, "pkg/b.py") == ORIG_B and r["state"] != first["state"]
    # drop all
    r = sp.run(str(tree), [], state_file=state)
    assert r["reverted"] == ["a"] and r["state"] == "none"
    assert read(tree, "pkg/a.py") == ORIG_A


def test_edited_patch_is_swapped(tree):
    state = str(tree / "state.json")
    sp.run(str(tree), [P("b", DIFF_B)], state_file=state)
    v2 = DIFF_B.replace("(9, 10, 12)", "(9, 10, 12, 11)")
    r = sp.run(str(tree), [P("b", v2)], state_file=state)
    assert r["reverted"] == ["b"] and r["newly_applied"] == ["b"]
    assert "(9, 10, 12, 11)" in read(tree, "pkg/b.py")


def test_two_patches_on_same_file_in_order(tree):
    second = """--- a/pkg/b.py
+++ b/pkg/b.py
@@ -1,2 +1,2 @@
 def gate(cap):
-    return cap in (9, 10, 12)
+    return cap >= 9
"""
    st = str(tree / "state.json")
    r = sp.run(str(tree), [P("b", DIFF_B), P("b2", second)], state_file=st)
    assert r["newly_applied"] == ["b", "b2"] and "cap >= 9" in read(tree, "pkg/b.py")
    r = sp.run(str(tree), [P("b", DIFF_B), P("b2", second)], state_file=st)
    assert r["already_applied"] == ["b", "b2"] and not r["changed"]
    # reinstall (pristine) with the stack recorded: both are applied again
    write_tree(tree, {"pkg/b.py": ORIG_B})
    r = sp.run(str(tree), [P("b", DIFF_B), P("b2", second)], state_file=st)
    assert r["newly_applied"] == ["b", "b2"] and "cap >= 9" in read(tree, "pkg/b.py")
    # drop the bottom of the stack: b2 no longer applies on pristine b.py -> clear error, nothing written
    with pytest.raises(sp.PatchError, match=r"patch 'b2' does not apply: pkg/b.py hunk #1"):
        sp.run(str(tree), [P("b2", second)], state_file=st)
    assert "cap >= 9" in read(tree, "pkg/b.py")


def test_files_changed_behind_our_back(tree):
    st = str(tree / "state.json")
    sp.run(str(tree), [P("b", DIFF_B)], state_file=st)
    write_tree(tree, {"pkg/b.py": ORIG_B.replace("(9, 10)", "(7, 8)")})
    with pytest.raises(sp.PatchError, match=r"recorded patch 'b' no longer matches .*sglang_force_reinstall=true"):
        sp.run(str(tree), [P("b", DIFF_B)], state_file=st)


def test_version_and_gpu_selection(tree):
    ps = [P("old", DIFF_A, versions=">=0.5.9,<0.5.11"), P("sm120", DIFF_B, versions=["0.5.23"], gpus=["12.0"])]
    r = sp.run(str(tree), ps, "0.5.23", ["9.0"], check_mode=True)
    assert r["applied"] == [] and {s["name"] for s in r["skipped"]} == {"old", "sm120"}
    assert "host has 9.0" in [s for s in r["skipped"] if s["name"] == "sm120"][0]["reason"]
    r = sp.run(str(tree), ps, "0.5.10.post1", ["12.0"], check_mode=True)
    assert r["applied"] == ["old"]
    r = sp.run(str(tree), ps, "0.5.23", ["12.0", "12.0"], check_mode=True)
    assert r["applied"] == ["sm120"]


@pytest.mark.parametrize("version,spec,ok", [
    ("0.5.10.post1", ">=0.5.9,<0.5.11", True),
    ("0.5.11", ">=0.5.9,<0.5.11", False),
    ("0.5.10rc0", "<0.5.10", True),
    ("0.5.10.post1", "==0.5.10", False),
    ("0.5.10.post1", ">0.5.10", True),
    ("0.5.23", "==0.5.*", True),
    ("0.5.23", "~=0.5.9", True),
    ("0.6.0", "~=0.5.9", False),
    ("0.5.9", "0.5.9", True),
    ("0.5.9", ["0.5.23", "0.5.9"], True),
    ("2.9.1+cu130", "==2.9.1", True),
    ("0.5.9", None, True),
])
def test_version_specifiers(version, spec, ok):
    assert sp.version_matches(version, spec) is ok


@pytest.mark.parametrize("want,caps,ok", [
    (["12.0"], ["12.0"], True), (["12"], ["12.1"], True), (["12.0"], ["12.1"], False),
    (["12.0"], ["9.0", "10.0"], False), ([], [], True), (["12.0"], [], False),
])
def test_gpu_matching(want, caps, ok):
    assert sp.gpus_match(want, caps) is ok


def test_create_file_and_no_newline_at_eof(tmp_path):
    write_tree(tmp_path, {"pkg/c.py": "x = 1\ny = 2"})
    diff = """--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+# created
+Z = 3
--- a/pkg/c.py
+++ b/pkg/c.py
@@ -1,2 +1,2 @@
 x = 1
-y = 2
\\ No newline at end of file
+y = 20
"""
    r = sp.run(str(tmp_path), [P("c", diff)])
    assert r["newly_applied"] == ["c"]
    assert read(tmp_path, "pkg/new.py") == "# created\nZ = 3\n"
    assert read(tmp_path, "pkg/c.py") == "x = 1\ny = 20\n"
    assert sp.run(str(tmp_path), [P("c", diff)])["already_applied"] == ["c"]


def test_malformed_and_invalid_inputs(tree):
    with pytest.raises(sp.PatchError, match="no unified-diff file sections"):
        sp.run(str(tree), [P("x", "not a diff\n")])
    with pytest.raises(sp.PatchError, match="truncated or was edited by hand"):
        sp.run(str(tree), [P("x", DIFF_B.rsplit("\n", 2)[0] + "\n")])
    with pytest.raises(sp.PatchError, match="selected twice"):
        sp.run(str(tree), [P("x", DIFF_B), P("x", DIFF_A)])
    # the same id for different versions is how shipped sets are written: fine
    r = sp.run(str(tree), [P("x", DIFF_B, versions="0.5.9"), P("x", DIFF_A, versions="0.5.23")], "0.5.23", check_mode=True)
    assert r["applied"] == ["x"] and r["files_changed"] == ["pkg/a.py"]
    with pytest.raises(sp.PatchError, match="leaves the patch root"):
        sp.run(str(tree), [P("x", DIFF_B.replace("a/pkg/b.py", "a/../b.py").replace("b/pkg/b.py", "b/../b.py"))])
    with pytest.raises(sp.PatchError, match="invalid version specifier|invalid version|unparseable SGLang version"):
        sp.run(str(tree), [P("x", DIFF_B, versions=">=banana")])
    with pytest.raises(sp.PatchError, match="does not exist; install SGLang first"):
        sp.run(str(tree / "nope"), [P("x", DIFF_B)])


def test_ambiguous_patch_is_refused(tmp_path):
    write_tree(tmp_path, {"f.txt": "a\nb\na\nb\n"})
    diff = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+b\n b\n"
    # forward: 'a b' at line 1 -> applies; reverse: 'b b' nowhere -> fine, unambiguous
    assert sp.run(str(tmp_path), [P("x", diff)], check_mode=True)["newly_applied"] == ["x"]
    write_tree(tmp_path, {"f.txt": "a\nb\nb\nb\n"})
    with pytest.raises(sp.PatchError, match="ambiguous"):
        sp.run(str(tmp_path), [P("x", diff)])


def test_module_runs_with_check_and_diff(tree):
    """Run the real module file as Ansible would (args file), in check mode then for real."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "collections"))
    module = os.path.join(REPO, "plugins", "modules", "sglang_patch.py")

    def call(check):
        args = {"ANSIBLE_MODULE_ARGS": {
            "root": str(tree), "version": "0.5.23", "compute_caps": ["12.0"],
            "state_file": str(tree / "state.json"),
            "patches": [{"name": "sm120-b", "diff": DIFF_B, "versions": ">=0.5.23", "gpus": ["12"]}],
            "_ansible_check_mode": check, "_ansible_diff": True}}
        p = tree / "args.json"
        p.write_text(json.dumps(args))
        out = subprocess.run([sys.executable, module, str(p)], stdout=subprocess.PIPE, env=env, universal_newlines=True, check=False)
        return json.loads(out.stdout)

    r = call(True)
    assert r["changed"] and r["newly_applied"] == ["sm120-b"] and r["diff"][0]["before"] == ORIG_B
    assert read(tree, "pkg/b.py") == ORIG_B
    r = call(False)
    assert r["changed"] and "(9, 10, 12)" in read(tree, "pkg/b.py")
    r = call(False)
    assert not r["changed"] and r["applied"] == ["sm120-b"] and r["diff"] == []
