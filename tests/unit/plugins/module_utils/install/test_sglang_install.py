# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install decisions of roles/sglang (module_utils/install/plan.py), on the REAL Requires-Dist of the supported
sglang wheels, and READ_SCRIPT run for real in a virtualenv whose torch comes from a base virtualenv (.pth), as
the role builds it for a reused torch."""
import testpaths
import json
import os
import shutil
import subprocess
import sys
import venv

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.install import plan as si  # noqa: E402

H200_BASE = "/opt/torch/.venv/bin/python3"


def facts(version, installed, locations=None):
    return {"sglang": version, "requires": W.requires_dist(version), "requires_python": ">=3.10",
            "installed": installed, "locations": locations or {}}


def test_classify_real_0515():
    g = si.classify(W.requires_dist("0.5.15.post1"))
    assert g == {"torch": ["torch==2.11.0", "torchaudio==2.11.0", "torchvision"],
                 "kernel": ["sglang-kernel==0.4.4"],
                 "flashinfer": ["flashinfer_cubin==0.6.12", "flashinfer_python[cu13]==0.6.12"]}


@pytest.mark.parametrize("version", W.SUPPORTED)
def test_classify_pins_torch_on_every_supported_release(version):
    """Each supported release pins exactly one torch and one kernel package (what reuse checks against)."""
    g = si.classify(W.requires_dist(version))
    assert [t for t in g["torch"] if t.startswith("torch==")] and len(g["kernel"]) == 1
    assert all("extra" not in t for t in g["torch"] + g["kernel"] + g["flashinfer"])


def test_split_requirement():
    assert si.split_requirement("flashinfer_python[cu13]==0.6.12") == ("flashinfer-python", "[cu13]", "==0.6.12", "")
    assert si.split_requirement('av; sys_platform == "linux"') == ("av", "", "", 'sys_platform == "linux"')
    assert si.split_requirement("kernels<0.15,>=0.14.1")[2] == "<0.15,>=0.14.1"


def test_reuse_h200_torch_matches_local_label():
    """The H200's torch 2.11.0+cu130 satisfies 0.5.15.post1's torch==2.11.0 (PEP 440 ignores the local label)."""
    p = si.plan(facts("0.5.15.post1", {"torch": "2.11.0+cu130", "torchvision": None, "torchaudio": None},
                      {"torch": "/opt/torch/.venv/lib/python3.12/site-packages"}),
                "0.5.15.post1", True, H200_BASE, False, [])
    assert p["errors"] == []
    assert p["torch_install"] == ["torchaudio==2.11.0", "torchvision"]  # installed next to the reused torch
    assert p["notes"] == ["reusing torch 2.11.0+cu130 from /opt/torch/.venv/lib/python3.12/site-packages"]


def test_reuse_refuses_other_torch_with_the_fix():
    """0.5.23 pins torch 2.14.1: the H200's 2.11.0 is refused, naming what was found, what is needed, the fix."""
    p = si.plan(facts("0.5.23", {"torch": "2.11.0+cu130", "torchvision": None, "torchaudio": None},
                      {"torch": "/opt/torch/.venv/lib/python3.12/site-packages"}),
                "0.5.23", True, H200_BASE, False, [])
    assert p["errors"] == [
        "sglang needs torch==2.14.1 but the reused interpreter /opt/torch/.venv/bin/python3 has torch 2.11.0+cu130 "
        "(in /opt/torch/.venv/lib/python3.12/site-packages). Fix: pick an sglang_version that pins torch 2.11.0, "
        "point sglang_python at an interpreter with torch==2.14.1, or set sglang_reuse_torch: false to install it "
        "into the virtualenv."]


def test_reuse_refuses_missing_torch():
    p = si.plan(facts("0.5.15.post1", {"torch": None}), "0.5.15.post1", True, "/usr/bin/python3", False, [])
    assert len(p["errors"]) == 1
    assert p["errors"][0].startswith("sglang_reuse_torch is set but /usr/bin/python3 has no torch at all "
                                     "(sglang needs torch==2.11.0)")


def test_reuse_refuses_mismatched_torchaudio_present_in_base():
    p = si.plan(facts("0.5.15.post1", {"torch": "2.11.0", "torchaudio": "2.10.0", "torchvision": "0.26.0"}),
                "0.5.15.post1", True, H200_BASE, False, [])
    assert len(p["errors"]) == 1 and "sglang needs torchaudio==2.11.0" in p["errors"][0]


def test_not_reusing_installs_the_pins():
    p = si.plan(facts("0.5.15.post1", {"torch": None}), "0.5.15.post1", False, "", False, [])
    assert p["errors"] == [] and p["torch_install"] == ["torch==2.11.0", "torchaudio==2.11.0", "torchvision"]


H200_SET = [  # the hand-made set of docs/…/real-sglang-on-h200.md (names as pip writes them)
    "sglang-0.5.15.post1-cp312-cp312-manylinux_2_34_x86_64.whl",
    "sglang_kernel-0.4.4-cp310-abi3-manylinux2014_x86_64.whl",
    "flashinfer_python-0.6.12-py3-none-any.whl",
    "transformers-5.12.1-py3-none-any.whl",
    "tokenizers-0.22.2-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "pydantic_core-2.50.5-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
]


def test_exact_reuse_plan_for_the_h200_set():
    files = ["/w/" + f for f in H200_SET]
    p = si.plan(facts("0.5.15.post1", {"torch": "2.11.0+cu130", "torchvision": None, "torchaudio": None}),
                "0.5.15.post1", True, H200_BASE, True, files)
    assert p["errors"] == [] and p["torch_install"] == []
    assert sorted(p["wheels"]) == sorted(files)
    assert "not installed (exact wheelhouse, not in it): torchaudio==2.11.0, torchvision" in p["notes"]


def test_exact_refuses_two_versions_of_a_project():
    with pytest.raises(ValueError) as e:
        si.exact_wheels(H200_SET + ["transformers-5.17.0-py3-none-any.whl"], "0.5.15.post1")
    assert "several of: transformers (transformers-5.12.1-py3-none-any.whl, transformers-5.17.0-py3-none-any.whl)" \
        in str(e.value)


def test_exact_refuses_missing_or_wrong_sglang():
    with pytest.raises(ValueError, match=r"has no sglang wheel; add sglang==0.5.15.post1"):
        si.exact_wheels(H200_SET[1:], "0.5.15.post1")
    with pytest.raises(ValueError, match=r"holds sglang 0.5.15.post1, not sglang_version 0.5.23"):
        si.exact_wheels(H200_SET, "0.5.23")
    with pytest.raises(ValueError, match=r"not wheel file names .*: notes.whl"):
        si.exact_wheels(H200_SET + ["notes.whl"], "0.5.15.post1")


def test_parse_wheel_name_with_build_tag():
    assert si.parse_wheel_name("Foo_Bar-1.0-1-py3-none-any.whl") == ("foo-bar", "1.0")
    assert si.parse_wheel_name("x.tar.gz") is None


# ------------------------------------------------------------------ READ_SCRIPT in a venv made as the role makes it


def _fake_torch(site, version):
    os.makedirs(os.path.join(site, "torch"), exist_ok=True)
    with open(os.path.join(site, "torch", "__init__.py"), "w") as fh:
        fh.write("__version__ = %r\n" % version)
    di = os.path.join(site, "torch-%s.dist-info" % version)
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w") as fh:
        fh.write("Metadata-Version: 2.1\nName: torch\nVersion: %s\n" % version)


def _site(python):
    return subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   universal_newlines=True).strip()


def test_read_script_sees_base_venv_torch_through_pth(tmp_path):
    """A venv made from a base that is itself a venv: --system-site-packages would miss the base's torch; the
    role's .pth (base site dirs via addsitedir) shows it, after the venv's own packages."""
    base = str(tmp_path / "base")
    venv.create(base, with_pip=False)
    base_py = os.path.join(base, "bin", "python")
    _fake_torch(_site(base_py), "2.11.0+cu130")
    script = os.path.join(testpaths.REPO, "roles", "sglang", "files", "scripts", "base_site.py")
    base_site = json.loads(subprocess.check_output([base_py, script], universal_newlines=True))
    assert _site(base_py) in base_site["site"]
    new = str(tmp_path / "new")
    subprocess.check_call([base_py, "-m", "venv", "--without-pip", "--system-site-packages", new])
    new_py = os.path.join(new, "bin", "python")
    out = si.read_json_output(subprocess.check_output([new_py, "-c", si.READ_SCRIPT, '["torch"]'],
                                                      universal_newlines=True))
    assert out["installed"] == {"torch": None}  # the trap: system site packages are the base's base
    with open(os.path.join(_site(new_py), "llmserve-base-site.pth"), "w") as fh:
        for d in base_site["site"]:
            fh.write("import site; site.addsitedir(%s)\n" % json.dumps(d))
    _fake_torch(_site(new_py), "2.99.0")  # a torch installed in the venv itself wins over the base's
    out = si.read_json_output(subprocess.check_output([new_py, "-c", si.READ_SCRIPT, '["torch"]'],
                                                      universal_newlines=True))
    assert out["installed"] == {"torch": "2.99.0"}
    shutil.rmtree(os.path.join(_site(new_py), "torch-2.99.0.dist-info"))
    out = si.read_json_output(subprocess.check_output([new_py, "-c", si.READ_SCRIPT, '["torch", "torchaudio"]'],
                                                      universal_newlines=True))
    assert out["installed"] == {"torch": "2.11.0+cu130", "torchaudio": None}
    assert out["locations"]["torch"] == _site(base_py)
    assert out["sglang"] is None
