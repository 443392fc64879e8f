# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped spec-step0-plain-decode patch (issue 34) against the REAL sglang wheels from PyPI.

0.5.15.post1 (set spec_step0, proven on an H200: docs/evidence/real-sglang-h200/spec-step0/) and its port to 0.5.23
(set spec_step0_port) are applied with install/patch.py's own logic to the files unpacked from the wheels, then:
* the patched modules compile, a second run changes nothing, a reinstall takes the patch again;
* the step-0 gate methods are compiled out of the patched EAGLEWorkerV2 and evaluated (step 0 and topk 1 only,
  the off switch, a graph runner captured for plain decode or none);
* the decode graph runner's plain-decode switch and the prepare-for-verify conversion are where the patch says;
* the 0.5.15.post1 diff does not apply to 0.5.23 (why a port exists), naming the hunk.
Each check is also run on the unpatched file and must fail there.
"""
import testpaths
import ast
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.install import patch as sp  # noqa: E402

NAME = "spec-step0-plain-decode"
SETS = {"0.5.15.post1": "spec_step0", "0.5.23": "spec_step0_port"}
WORKER = "sglang/srt/speculative/eagle_worker_v2.py"
RUNNER = "sglang/srt/model_executor/runner/decode_cuda_graph_runner.py"
UTILS = "sglang/srt/speculative/eagle_utils.py"


@pytest.fixture(scope="module", params=sorted(SETS))
def version(request):
    W.wheel_path(request.param)
    return request.param


def shipped(version):
    patches = W.shipped_patches(version, SETS[version])
    assert [p["name"] for p in patches] == [NAME]
    return patches


def fresh(tmp_path, version):
    patches = shipped(version)
    root = str(tmp_path / ("site-" + version))
    W.unpack(version, root, W.patch_targets(patches))
    return root, patches


def patched(tmp_path, version):
    root, patches = fresh(tmp_path, version)
    r = sp.run(root, patches, version, ["9.0"], os.path.join(root, "state.json"))
    assert r["newly_applied"] == [NAME]
    return root


def source(root, rel):
    with open(os.path.join(root, rel)) as fh:
        return fh.read()


def test_applies_compiles_and_is_idempotent(tmp_path, version):
    root, patches = fresh(tmp_path, version)
    state = os.path.join(root, "state.json")
    first = sp.run(root, patches, version, ["9.0"], state)
    expect = {WORKER, RUNNER, UTILS} | ({"sglang/srt/speculative/eagle_worker_common.py"} if version == "0.5.23" else set())
    assert first["changed"] and set(first["files_changed"]) == expect
    for rel in first["files_changed"]:
        compile(source(root, rel), rel, "exec")
    second = sp.run(root, patches, version, ["9.0"], state)
    assert not second["changed"] and second["already_applied"] == [NAME]
    # a reinstall (pristine files) takes it again, same state hash
    for rel in first["files_changed"]:
        os.unlink(os.path.join(root, rel))
    W.unpack(version, root, W.patch_targets(patches))
    again = sp.run(root, patches, version, ["9.0"], state)
    assert again["newly_applied"] == [NAME] and again["state"] == first["state"]


@pytest.mark.parametrize("caps", [["9.0"], ["12.0"], ["8.0", "10.0"]])
def test_selected_on_any_gpu_only_for_its_version(tmp_path, version, caps):
    root, patches = fresh(tmp_path, version)
    r = sp.run(root, patches, version, caps, check_mode=True)
    assert r["applied"] == [NAME] and r["changed"] and not os.path.exists(os.path.join(root, "state.json"))
    other = "0.5.23" if version == "0.5.15.post1" else "0.5.15.post1"
    skipped = sp.run(root, patches, other, caps, check_mode=True)
    assert skipped["applied"] == [] and skipped["skipped"][0]["name"] == NAME


def test_015_diff_does_not_apply_to_023_naming_the_hunk(tmp_path):
    """Why 0.5.23 has its own diff: the verify body moved to eagle_worker_common.run_eagle_verify."""
    old = shipped("0.5.15.post1")[0]
    root = str(tmp_path / "site")
    W.unpack("0.5.23", root, W.patch_targets([old]))
    before = {rel: source(root, rel) for rel in W.patch_targets([old])}
    with pytest.raises(sp.PatchError) as e:
        sp.run(root, [dict(old, versions=None)], "0.5.23", ["9.0"], os.path.join(root, "s.json"))
    assert "patch '%s' does not apply: " % NAME in str(e.value) and " hunk #" in str(e.value)
    assert before == {rel: source(root, rel) for rel in before}  # nothing written


# ------------------------------------------------------------------------------- the step-0 gate, compiled


def worker_methods(root, names):
    tree = ast.parse(source(root, WORKER))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EAGLEWorkerV2")
    found = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in names]
    ns = {"os": os}
    exec(compile(ast.Module(body=found, type_ignores=[]), WORKER, "exec"), ns)
    return {n.name: ns[n.name] for n in found}


def fake_worker(methods, steps, topk, runner):
    w = types.SimpleNamespace(speculative_num_steps=steps, topk=topk,
                              _target_worker=types.SimpleNamespace(model_runner=types.SimpleNamespace(
                                  decode_cuda_graph_runner=runner)))
    for name, fn in methods.items():
        setattr(w, name, types.MethodType(fn, w))
    return w


def test_gate_absent_upstream(tmp_path, version):
    root, _patches = fresh(tmp_path, version)
    assert worker_methods(root, {"_step0_plain_decode", "_step0_plain_decode_wanted"}) == {}


@pytest.mark.parametrize("steps,topk,runner,env,want", [
    (0, 1, None, None, True),                                          # no CUDA graphs: eager plain decode
    (0, 1, types.SimpleNamespace(plain_decode=True), None, True),      # the step-0 tier's plain-decode graphs
    (0, 1, types.SimpleNamespace(plain_decode=False), None, False),    # a TARGET_VERIFY runner: upstream path
    (0, 1, types.SimpleNamespace(), None, False),                      # an unpatched runner
    (1, 1, types.SimpleNamespace(plain_decode=True), None, False),     # speculating: verify as before
    (3, 1, None, None, False),
    (0, 4, None, None, False),                                         # a tree (topk 4) is left alone
    (0, 1, None, "0", False),                                          # LLMSERVE_STEP0_PLAIN_DECODE=0
    (0, 1, None, "1", True),
])
def test_gate_patched(tmp_path, version, monkeypatch, steps, topk, runner, env, want):
    root = patched(tmp_path, version)
    if env is None:
        monkeypatch.delenv("LLMSERVE_STEP0_PLAIN_DECODE", raising=False)
    else:
        monkeypatch.setenv("LLMSERVE_STEP0_PLAIN_DECODE", env)
    methods = worker_methods(root, {"_step0_plain_decode", "_step0_plain_decode_wanted"})
    assert set(methods) == {"_step0_plain_decode", "_step0_plain_decode_wanted"}
    assert fake_worker(methods, steps, topk, runner)._step0_plain_decode() is want
    # the tier builder asks the same question for the step it captures
    assert fake_worker(methods, 3, topk, runner)._step0_plain_decode_wanted(steps) is (
        steps == 0 and topk == 1 and env != "0")


# ------------------------------------------------------------------------------- where the switches sit


def function(root, rel, name, cls=None):
    tree = ast.parse(source(root, rel))
    body = tree.body
    if cls:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    return next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_runner_switch(tmp_path, version):
    root, _patches = fresh(tmp_path, version)
    init = function(root, RUNNER, "__init__", "DecodeCudaGraphRunner")
    assert "plain_decode" not in [a.arg for a in init.args.kwonlyargs]
    root = patched(tmp_path, version)
    init = function(root, RUNNER, "__init__", "DecodeCudaGraphRunner")
    assert "plain_decode" in [a.arg for a in init.args.kwonlyargs]
    text = ast.unparse(init)
    # the plain switch comes after the speculative TARGET_VERIFY choice, so it wins
    assert text.index("ForwardMode.TARGET_VERIFY") < text.index("if self.plain_decode:")
    assert "self.capture_hidden_mode = CaptureHiddenMode.FULL" in text
    spec = ast.unparse(function(root, RUNNER, "get_spec_info", "DecodeCudaGraphRunner"))
    assert spec.index("if self.plain_decode:") < spec.index("return None") < spec.index("EagleVerifyInput")


def test_prepare_for_verify_conversion(tmp_path, version):
    root = patched(tmp_path, version)
    fn = function(root, UTILS, "eagle_prepare_for_verify")
    assert [a.arg for a in fn.args.args][-1] == "plain_decode"
    text = ast.unparse(fn)
    branch = text[text.index("if plain_decode and (not batch.forward_mode.is_idle()):"):]
    for line in ("fb.forward_mode = ForwardMode.DECODE", "fb.spec_info = None", "fb.seq_lens = batch.seq_lens + 1",
                 "fb.seq_lens_cpu = fb.seq_lens_cpu + 1", "fb.seq_lens_sum = fb.seq_lens_sum + len(batch.seq_lens)"):
        assert line in branch
    # converted before the graph runner is asked whether it can run the batch
    assert branch.index("fb.spec_info = None") < branch.index("can_run_graph(")
