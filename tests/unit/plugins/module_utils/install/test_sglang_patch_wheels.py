# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped sm120 patch set against the REAL sglang wheels from PyPI (0.5.9, 0.5.10.post1, 0.5.23).

Wheels are downloaded once (pip download --no-deps) into ${LLMSERVE_CACHE:-/var/cache/llmserve}/wheels and the
touched files extracted per test. The patched gates are then exercised:
* torch_symm_mem.py is imported for real, with torch / torch.distributed stubbed in sys.modules, and its
  TorchSymmMemCommunicator constructed for a capability-12 device (8 ranks, no multicast as on PCIe);
* the allreduce-fusion gate functions are compiled from the real (patched) module source and evaluated with the
  platform probes answering "SM120".
Each check is also run on the unpatched file and must give the opposite answer (so the tests can fail).
"""
import testpaths
import ast
import importlib.util
import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.install import patch as sp  # noqa: E402

MiB = 1024 * 1024
SYMM = "sglang/srt/distributed/device_communicators/torch_symm_mem.py"
AR_UTILS = "sglang/srt/distributed/device_communicators/all_reduce_utils.py"
# Releases whose flashinfer_comm_fusion._resolve_backend refuses GPUs other than SM90/SM10X (patched too).
RESOLVES_BACKEND = ("0.5.15.post1", "0.5.23")


@pytest.fixture(scope="session", params=W.SUPPORTED)
def version(request):
    W.wheel_path(request.param)  # download once, fail loudly if PyPI is unreachable
    return request.param


def fresh_tree(tmp_path, version):
    patches = W.shipped_patches(version)
    root = tmp_path / ("site-packages-" + version)
    W.unpack(version, str(root), W.patch_targets(patches))
    return str(root), patches


def patched_tree(tmp_path, version):
    root, patches = fresh_tree(tmp_path, version)
    r = sp.run(root, patches, version, ["12.0"], os.path.join(root, "state.json"))
    assert r["newly_applied"] == ["sm120-allreduce-fusion", "sm120-symm-mem"]
    return root


# ---------------------------------------------------------------------------------- metadata


def test_wheel_metadata_matches_reference(version):
    req = W.requires_dist(version)
    torch = [r for r in req if r.startswith("torch==")]
    kernel = [r for r in req if r.startswith(("sgl-kernel", "sglang-kernel"))]
    flashinfer = [r for r in req if r.lower().startswith("flashinfer_python")]
    expect = {
        "0.5.9": ("torch==2.9.1", "sgl-kernel==0.3.21", "flashinfer_python==0.6.3"),
        "0.5.10.post1": ("torch==2.9.1", "sglang-kernel==0.4.1", "flashinfer_python==0.6.7.post3"),
        "0.5.15.post1": ("torch==2.11.0", "sglang-kernel==0.4.4", "flashinfer_python[cu13]==0.6.12"),
        "0.5.23": ("torch==2.14.1", "sglang-kernel==0.4.10", "flashinfer_python[cu13]==0.7.2"),
    }[version]
    assert (torch[0], kernel[0], flashinfer[0]) == expect


# ---------------------------------------------------------------------------------- apply


def test_shipped_set_applies_and_is_idempotent(tmp_path, version):
    root, patches = fresh_tree(tmp_path, version)
    assert [p["name"] for p in patches] == ["sm120-allreduce-fusion", "sm120-symm-mem"]
    state = os.path.join(root, "state.json")
    check = sp.run(root, patches, version, ["12.0"], state, check_mode=True)
    assert check["changed"] and check["diff"] and not os.path.exists(state)
    first = sp.run(root, patches, version, ["12.0"], state)
    assert first["changed"] and first["newly_applied"] == ["sm120-allreduce-fusion", "sm120-symm-mem"]
    snapshot = {f: open(os.path.join(root, f)).read() for f in first["files_changed"]}
    second = sp.run(root, patches, version, ["12.0"], state)
    assert not second["changed"] and second["already_applied"] == first["applied"]
    assert second["state"] == first["state"]
    assert snapshot == {f: open(os.path.join(root, f)).read() for f in first["files_changed"]}
    # every patched file still compiles
    for f in first["files_changed"]:
        compile(snapshot[f], f, "exec")


def test_not_selected_on_other_gpus(tmp_path, version):
    root, patches = fresh_tree(tmp_path, version)
    r = sp.run(root, patches, version, ["9.0", "10.0"], check_mode=True)
    assert r["applied"] == [] and not r["changed"] and len(r["skipped"]) == 2


def test_stale_patch_fails_naming_hunk_and_writes_nothing(tmp_path):
    """0.5.10.post1's symm-mem diff on 0.5.23: all_reduce_utils.py would apply, torch_symm_mem.py must not."""
    root = str(tmp_path / "sp")
    W.unpack("0.5.23", root, [SYMM, AR_UTILS])
    before = {f: open(os.path.join(root, f)).read() for f in (SYMM, AR_UTILS)}
    stale = W.shipped_patches("0.5.10.post1")[1]
    assert stale["name"] == "sm120-symm-mem"
    with pytest.raises(sp.PatchError) as e:
        sp.run(root, [dict(stale, versions=None)], "0.5.23", ["12.0"], os.path.join(root, "s.json"))
    msg = str(e.value)
    assert "patch 'sm120-symm-mem' does not apply: %s hunk #1" % SYMM in msg
    assert "is '        10: [4, 6, 8],', expected '        10: [6, 8],'" in msg  # the stale line, quoted
    assert before == {f: open(os.path.join(root, f)).read() for f in (SYMM, AR_UTILS)}
    assert not os.path.exists(os.path.join(root, "s.json"))


# ---------------------------------------------------------------------------------- symm mem, real module


class _Buf:
    shape = (1024,)

    def __init__(self, n):
        self.n = n

    def __getitem__(self, _key):
        return self

    def copy_(self, _src):
        return self

    def view(self, *_):
        return self


def _load_symm(root, monkeypatch, cap=12, world=8, multicast_ptr=0):
    calls = []
    torch = types.ModuleType("torch")
    torch.device = lambda spec: ("device", spec)
    torch.bfloat16 = types.SimpleNamespace(itemsize=2)
    torch.Tensor = object
    torch.cuda = types.SimpleNamespace(set_device=lambda d: None, get_device_capability=lambda d: (cap, 0))
    torch.empty_like = lambda t: _Buf(0)
    torch.ops = types.SimpleNamespace(symm_mem=types.SimpleNamespace(
        multimem_all_reduce_=lambda *a: calls.append("multimem"),
        two_shot_all_reduce_=lambda *a: calls.append("two_shot"),
    ))
    dist = types.ModuleType("torch.distributed")
    dist.ProcessGroup = object
    dist.get_world_size = lambda g: world
    symm = types.ModuleType("torch.distributed._symmetric_memory")
    symm.empty = lambda n, device, dtype: _Buf(n)
    symm.rendezvous = lambda buf, name: types.SimpleNamespace(multicast_ptr=multicast_ptr)
    torch.distributed = dist
    dist._symmetric_memory = symm
    mods = {"torch": torch, "torch.distributed": dist, "torch.distributed._symmetric_memory": symm}
    for pkg in ("sglang", "sglang.srt", "sglang.srt.distributed", "sglang.srt.distributed.device_communicators"):
        m = types.ModuleType(pkg)
        m.__path__ = []
        mods[pkg] = m
    utils = types.ModuleType("sglang.srt.utils")
    utils.is_cuda, utils.is_hip = (lambda: True), (lambda: False)
    mods["sglang.srt.utils"] = utils
    env = types.ModuleType("sglang.srt.environ")
    env.envs = types.SimpleNamespace(
        SGLANG_OPT_USE_INKLING_CUSTOM_AR=types.SimpleNamespace(get=lambda: False),
        SGLANG_OPT_USE_INKLING_FUSED_AR_SCONV=types.SimpleNamespace(get=lambda: False))
    mods["sglang.srt.environ"] = env
    rc = types.ModuleType("sglang.srt.runtime_context")
    rc.get_exec = lambda: types.SimpleNamespace(comm=types.SimpleNamespace(enable_scattered_sconv=False))
    mods["sglang.srt.runtime_context"] = rc
    for name, m in mods.items():
        monkeypatch.setitem(sys.modules, name, m)

    def load(modname, rel):
        spec = importlib.util.spec_from_file_location(modname, os.path.join(root, rel))
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, modname, mod)
        spec.loader.exec_module(mod)
        return mod

    load("sglang.srt.distributed.device_communicators.all_reduce_utils", AR_UTILS)
    mod = load("sglang.srt.distributed.device_communicators.torch_symm_mem", SYMM)
    group = types.SimpleNamespace(group_name="tp")
    return mod, group, calls


def _inp():
    return types.SimpleNamespace(numel=lambda: 1024, element_size=lambda: 2, dtype=None, shape=(1024,),
                                 device=("device", "cuda:0"), view=lambda *a: _Buf(0))


def test_symm_mem_unpatched_fails_on_sm120(tmp_path, version, monkeypatch):
    root, _patches = fresh_tree(tmp_path, version)
    mod, group, _calls = _load_symm(root, monkeypatch)
    if version in ("0.5.15.post1", "0.5.23"):
        comm = mod.TorchSymmMemCommunicator(group, 0)
        assert comm.disabled  # 'Device capability 12 not supported'
    else:
        with pytest.raises(KeyError) as e:
            mod.TorchSymmMemCommunicator(group, 0)
        assert e.value.args == (12,)


@pytest.mark.parametrize("world", [2, 4, 8])
def test_symm_mem_patched_enables_two_shot_on_sm120(tmp_path, version, monkeypatch, world):
    root = patched_tree(tmp_path, version)
    mod, group, calls = _load_symm(root, monkeypatch, world=world)
    comm = mod.TorchSymmMemCommunicator(group, 0)
    assert comm.disabled is False
    assert comm.max_size == (128 if world == 8 else 64) * MiB
    inp = _inp()
    inp.dtype = comm.dtype
    assert comm.should_torch_symm_mem_allreduce(inp)
    comm.all_reduce(inp)
    assert calls == ["two_shot"]


def test_symm_mem_patch_keeps_hopper_behaviour(tmp_path, version, monkeypatch):
    root = patched_tree(tmp_path, version)
    mod, group, calls = _load_symm(root, monkeypatch, cap=9, world=8, multicast_ptr=0)
    assert mod.TorchSymmMemCommunicator(group, 0).disabled  # no multicast on SM90 still disables
    mod, group, calls = _load_symm(root, monkeypatch, cap=9, world=8, multicast_ptr=1234)
    comm = mod.TorchSymmMemCommunicator(group, 0)
    inp = _inp()
    inp.dtype = comm.dtype
    comm.all_reduce(inp)
    assert calls == ["multimem"]


# ---------------------------------------------------------------------------------- allreduce fusion gates


def _compile_selected(path, names, namespace):
    """Exec only the top-level assignments/functions called ``names`` of a real module, in ``namespace``."""
    tree = ast.parse(open(path).read(), path)
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            body.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            body.append(node)
    found = {n.name if isinstance(n, ast.FunctionDef) else n.targets[0].id for n in body}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), namespace)
    return found


def _imported_names(path, module):
    names = set()
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.ImportFrom) and node.module == module:
            names.update(a.name for a in node.names)
    return names


def _platform(cap):
    return types.SimpleNamespace(is_sm90=cap == 9, is_sm100=cap == 10, is_sm120=cap == 12)


def gate_answer(root, version, cap):
    """Does the (real) allreduce-fusion gate of ``version`` say yes for a GPU of major ``cap``?"""
    # 0.5.15.post1 gates on the backend, which server_args sets to "auto" for --enable-flashinfer-allreduce-fusion
    args = types.SimpleNamespace(enable_flashinfer_allreduce_fusion=True, attn_cp_size=1,
                                 flashinfer_allreduce_fusion_backend="auto")
    ns = {
        "_is_cuda": True, "_is_flashinfer_available": True,
        "is_dp_attention_enabled": lambda: False, "is_flashinfer_allreduce_unavailable": lambda: False,
        "get_global_server_args": lambda: args, "uses_cutedsl_ar_fusion": lambda: False,
        "get_exec": lambda: types.SimpleNamespace(comm=types.SimpleNamespace(flashinfer_allreduce_fusion_backend="trtllm")),
        "get_platform": lambda: _platform(cap),
        "is_sm90_supported": lambda: cap == 9, "is_sm100_supported": lambda: cap == 10,
        "is_sm120_supported": lambda: cap == 12,
    }
    if version == "0.5.23":
        path = os.path.join(root, "sglang/srt/layers/layer_boundary/residual/add_norm.py")
        fn = "flashinfer_ar_fusion_applies"
    else:
        path = os.path.join(root, "sglang/srt/layers/communicator.py")
        fn = "apply_flashinfer_allreduce_fusion"
    names = {"_is_sm90_supported", "_is_sm100_supported", "_is_sm120_supported", "FUSE_ALLREDUCE_MAX_BATCH_SIZE", fn}
    found = _compile_selected(path, names, ns)
    assert fn in found and "_is_sm90_supported" in found
    return ns[fn](128), ns[fn](4096)


def resolve_backend(root, cap, backend="auto", multi_node=False):
    ns = {"get_platform": lambda: _platform(cap), "is_sm90_supported": lambda: cap == 9,
          "is_sm100_supported": lambda: cap == 10, "is_sm120_supported": lambda: cap == 12}
    _compile_selected(os.path.join(root, "sglang/srt/layers/flashinfer_comm_fusion.py"),
                      {"_mnnvl_supported", "_resolve_backend"}, ns)
    return ns["_resolve_backend"](backend, multi_node)


def test_allreduce_fusion_gate_unpatched_says_no_for_sm120(tmp_path, version):
    root, _patches = fresh_tree(tmp_path, version)
    assert gate_answer(root, version, 12) == (False, False)
    assert gate_answer(root, version, 9) == (True, False)  # the harness does reach "yes" on Hopper
    if version in RESOLVES_BACKEND:
        with pytest.raises(ValueError, match="requires SM90 or SM10X"):
            resolve_backend(root, 12)


def test_allreduce_fusion_gate_patched_says_yes_for_sm120(tmp_path, version):
    root = patched_tree(tmp_path, version)
    assert gate_answer(root, version, 12) == (True, False)  # batch above FUSE_ALLREDUCE_MAX_BATCH_SIZE stays off
    assert gate_answer(root, version, 8) == (False, False)
    assert gate_answer(root, version, 10) == (True, False)
    if version in RESOLVES_BACKEND:
        assert resolve_backend(root, 12) == "trtllm"
        assert resolve_backend(root, 10) == "mnnvl"
        with pytest.raises(ValueError, match="multi-node"):
            resolve_backend(root, 12, multi_node=True)
        with pytest.raises(ValueError, match="mnnvl backend requires"):
            resolve_backend(root, 12, backend="mnnvl")


def test_patched_names_exist_upstream(tmp_path, version):
    """The patches only use probes that the real package defines."""
    if version == "0.5.23":
        root = str(tmp_path / "rc")
        W.unpack(version, root, ["sglang/srt/runtime_context.py"])
        src = open(os.path.join(root, "sglang/srt/runtime_context.py")).read()
        assert '"is_sm120": "is_sm120_supported"' in src
    else:
        root = patched_tree(tmp_path, version)
        communicator = os.path.join(root, "sglang/srt/layers/communicator.py")
        assert "is_sm120_supported" in _imported_names(communicator, "sglang.srt.utils")
        if version in RESOLVES_BACKEND:
            fusion = os.path.join(root, "sglang/srt/layers/flashinfer_comm_fusion.py")
            assert "is_sm120_supported" in _imported_names(fusion, "sglang.srt.utils")
        W.unpack(version, root, ["sglang/srt/utils/__init__.py", "sglang/srt/utils/common.py"])
        init = open(os.path.join(root, "sglang/srt/utils/__init__.py")).read()
        assert "from sglang.srt.utils.common import *" in init
        tree = ast.parse(open(os.path.join(root, "sglang/srt/utils/common.py")).read())
        top = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        assert "is_sm120_supported" in top and "__all__" not in top


def test_reinstall_reapplies(tmp_path, version):
    """A reinstall restores pristine files; the next run applies the set again and keeps the same state hash."""
    root = patched_tree(tmp_path, version)
    state = os.path.join(root, "state.json")
    first = sp.run(root, W.shipped_patches(version), version, ["12.0"], state)
    for rel in W.patch_targets(W.shipped_patches(version)):
        os.unlink(os.path.join(root, rel))
    W.unpack(version, root, W.patch_targets(W.shipped_patches(version)))
    again = sp.run(root, W.shipped_patches(version), version, ["12.0"], state)
    assert again["changed"] and again["newly_applied"] == ["sm120-allreduce-fusion", "sm120-symm-mem"]
    assert again["state"] == first["state"]
