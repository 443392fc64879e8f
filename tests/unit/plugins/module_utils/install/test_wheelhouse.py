# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What playbooks/sglang_wheelhouse.yml downloads (module_utils/install/wheelhouse.py): pip's target options, the pins left
after taking out what the host provides, and the placeholder wheel that stands for the host's torch. The
placeholder is checked by the real pip: a resolution with it must pick it and not fetch torch's dependencies."""
import json
import os
import subprocess
import sys
import zipfile

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.install import wheelhouse as wh


def test_platform_tags_glibc_x86_64():
    tags = wh.platform_tags("x86_64", "glibc", "2.39")
    assert tags[:3] == ["manylinux_2_39_x86_64", "manylinux_2_38_x86_64", "manylinux_2_37_x86_64"]
    assert "manylinux_2_34_x86_64" in tags  # SGLang 0.5.15.post1's wheel tag
    assert "manylinux2014_x86_64" in tags and "manylinux2010_x86_64" in tags and "manylinux1_x86_64" in tags
    assert tags[-1] == "manylinux1_x86_64"


def test_platform_tags_aarch64_stops_at_manylinux2014():
    tags = wh.platform_tags("arm64", "glibc", "2.35")
    assert tags[0] == "manylinux_2_35_aarch64" and tags[-2:] == ["manylinux_2_17_aarch64", "manylinux2014_aarch64"]
    assert not [t for t in tags if "2010" in t or "manylinux1" in t]


def test_platform_tags_refuse_unknown():
    with pytest.raises(ValueError, match="unknown C library version ''"):
        wh.platform_tags("x86_64", "", "")
    with pytest.raises(ValueError, match="neither glibc nor musl"):
        wh.platform_tags("x86_64", "bionic", "1.0")
    assert wh.platform_tags("x86_64", "musl", "1.2") == ["musllinux_1_2_x86_64", "musllinux_1_1_x86_64",
                                                         "musllinux_1_0_x86_64"]


def test_pip_target_args_for_the_h200():
    args = wh.pip_target_args({"python": "3.12.3", "machine": "x86_64", "libc": "glibc", "libc_version": "2.39"})
    assert args[:5] == ["--only-binary=:all:", "--implementation", "cp", "--python-version", "3.12"]
    assert args[-2:] == ["--platform", "any"] and args.count("--platform") == len(args[5:]) // 2


def _item(name, version, requires=(), requested=False):
    return {"metadata": {"name": name, "version": version, "requires_dist": list(requires)}, "requested": requested}


REPORT = {"install": [
    _item("sglang", "0.5.15.post1", ["torch==2.11.0", "torchaudio==2.11.0", "xgrammar==0.2.1",
                                     "flashinfer_python[cu13]==0.6.12", "av; platform_machine == 'aarch64'"],
          requested=True),
    _item("torch", "2.11.0", ["triton==3.6.0", "nvidia-cudnn-cu13==9.19.0.56", "sympy>=1.13", "filelock"]),
    _item("torchaudio", "2.11.0", ["torch==2.11.0"]),
    _item("xgrammar", "0.2.1", ["torch>=1.10.0", "pydantic", "sympy"]),
    _item("flashinfer-python", "0.6.12", ["torch", "nvidia-cudnn-frontend>=1.13.0", 'cuda-tile[tileiras]; extra == "cu13"']),
    _item("cuda-tile", "1.7.0", ['nvidia-cuda-tileiras; extra == "tileiras"']),
    _item("nvidia-cuda-tileiras", "13.1.0"),
    _item("nvidia-cudnn-frontend", "1.32.0"),
    _item("triton", "3.6.0"),
    _item("nvidia-cudnn-cu13", "9.19.0.56"),
    _item("sympy", "1.14.0", ["mpmath"]),
    _item("mpmath", "1.3.0"),
    _item("filelock", "3.20.0"),
    _item("pydantic", "2.14.4"),
]}


def test_download_pins_without_a_provided_torch_takes_everything():
    pins, dropped = wh.download_pins(REPORT)
    assert len(pins) == len(REPORT["install"]) and dropped == []


def test_download_pins_leave_torch_and_what_only_torch_needs():
    pins, dropped = wh.download_pins(REPORT, ["torch"])
    assert dropped == ["filelock", "nvidia-cudnn-cu13", "torch", "triton"]
    assert "sympy==1.14.0" in pins and "mpmath==1.3.0" in pins  # xgrammar needs sympy too: kept
    assert "nvidia-cuda-tileiras==13.1.0" in pins  # behind two extras of non-root items: kept


def test_placeholder_wheel_is_taken_by_real_pip(tmp_path):
    """pip resolves torchaudio==2.11.0's torch==2.11.0 with the placeholder 2.11.0+cu130 (local label wins)."""
    links = str(tmp_path / "links")
    os.makedirs(links)
    path, wrote = wh.placeholder_wheel(links, "torch", "2.11.0+cu130")
    assert wrote and not wh.placeholder_wheel(links, "torch", "2.11.0+cu130")[1]
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["torch-2.11.0+cu130.dist-info/METADATA", "torch-2.11.0+cu130.dist-info/RECORD",
                                        "torch-2.11.0+cu130.dist-info/WHEEL"]
    # A second project that pins torch, built the same way, so the check stays offline.
    dep = str(tmp_path / "dep")
    os.makedirs(dep)
    p = wh.placeholder_wheel(dep, "needs-torch", "1.0")[0]
    with zipfile.ZipFile(p) as z:
        files = {n: z.read(n).decode() for n in z.namelist()}
    meta = "needs_torch-1.0.dist-info/METADATA"
    files[meta] += "Requires-Dist: torch==2.11.0\n"
    os.unlink(p)
    with zipfile.ZipFile(p, "w") as z:
        for n, c in files.items():
            z.writestr(n, c)
    report = str(tmp_path / "report.json")
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                           "--no-index", "--find-links", links, "--find-links", dep, "--report", report,
                           "--target", str(tmp_path / "t"), "needs-torch==1.0"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                          check=False)
    assert proc.returncode == 0, proc.stdout
    with open(report) as fh:
        got = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.load(fh)["install"]}
    assert got == {"needs-torch": "1.0", "torch": "2.11.0+cu130"}


def test_placeholder_beats_a_newer_torch_only_with_the_constraint(tmp_path):
    """A requirement like torch>=1.5 would take the newest torch of an index; the playbook's constraint
    (torch==<host version>) keeps it on the host's. A newer 'index' torch is simulated by a second folder."""
    links, index, dep = (str(tmp_path / n) for n in ("links", "index", "dep"))
    for d in (links, index, dep):
        os.makedirs(d)
    wh.placeholder_wheel(links, "torch", "2.11.0+cu130")
    wh.placeholder_wheel(index, "torch", "2.14.1")
    p = wh.placeholder_wheel(dep, "wants-torch", "1.0")[0]
    with zipfile.ZipFile(p) as z:
        files = {n: z.read(n).decode() for n in z.namelist()}
    files["wants_torch-1.0.dist-info/METADATA"] += "Requires-Dist: torch>=1.5.0\n"
    os.unlink(p)
    with zipfile.ZipFile(p, "w") as z:
        for n, c in files.items():
            z.writestr(n, c)
    cons = str(tmp_path / "constraints.txt")
    with open(cons, "w") as fh:
        fh.write("torch==2.11.0+cu130\n")

    def resolve(extra):
        report = str(tmp_path / "report.json")
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                               "--no-index", "--find-links", links, "--find-links", index, "--find-links", dep,
                               "--report", report, "--target", str(tmp_path / "t"), "wants-torch==1.0"] + extra,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              env=dict(os.environ, PIP_CONFIG_FILE=os.devnull), check=False)
        assert proc.returncode == 0, proc.stdout
        with open(report) as fh:
            return {i["metadata"]["name"]: i["metadata"]["version"] for i in json.load(fh)["install"]}["torch"]

    assert resolve([]) == "2.14.1"
    assert resolve(["--constraint", cons]) == "2.11.0+cu130"
