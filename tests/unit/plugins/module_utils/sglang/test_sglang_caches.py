# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile caches (module_utils/sglang/caches.py) against the real wheels (tests/sglang_wheels): every supported
SGLang reads SGLANG_CACHE_DIR; from 0.5.20 it redirects the third-party caches under it itself, with the layout
caches.THIRD_PARTY copies; before, nothing does, so roles/server sets them. And roles/server's plan puts them on
persistent disk per instance and version."""
import testpaths
import ast
import os
import re
import sys
import zipfile

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import compare  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_plan as sp  # noqa: E402

sys.path.insert(0, os.path.join(testpaths.REPO, "tests", "unit", "plugins", "plugin_utils"))
import test_server_plan as T  # noqa: E402

VERSIONS = sorted(set(W.SUPPORTED) | {"0.5.20"}, key=lambda v: [int(x) for x in re.findall(r"\d+", v)])


def sources(version):
    with zipfile.ZipFile(W.wheel_path(version)) as z:
        return dict((n, z.read(n).decode("utf-8", "replace")) for n in z.namelist()
                    if n.startswith("sglang/") and n.endswith(".py"))


def redirect_table(src):
    """third_party_cache_defaults()'s {VAR: sub-folder} from environ.py, read from its syntax tree."""
    fn = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)
              and n.name == "third_party_cache_defaults")
    ret = next(n for n in ast.walk(fn) if isinstance(n, ast.Return))
    out = {}
    for k, v in zip(ret.value.keys, ret.value.values):
        if isinstance(v, ast.Call):  # os.path.join(base, "triton")
            out[k.value] = v.args[1].value
        else:  # base itself
            out[k.value] = ""
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_reads_sglang_cache_dir_and_only_0520_on_redirects(version):
    src = sources(version)
    assert any("SGLANG_CACHE_DIR" in text for text in src.values())
    init = src.get("sglang/__init__.py", "")
    redirects = "redirect_third_party_caches()" in init
    assert redirects == (compare(version, caches.REDIRECT_SINCE) >= 0)
    if redirects:
        table = redirect_table(src["sglang/srt/environ.py"])
        ours = dict(caches.THIRD_PARTY)
        # what we set explicitly is what the version's own redirect would set (no invented variable, same folder)
        assert set(ours) <= set(table)
        assert dict((k, table[k]) for k in ours) == ours


def test_env_layout():
    e = caches.env("/var/lib/sglang/", "default", "0.5.23")
    assert e == {"SGLANG_CACHE_DIR": "/var/lib/sglang/compile-cache/default/0.5.23",
                 "TRITON_CACHE_DIR": "/var/lib/sglang/compile-cache/default/0.5.23/triton",
                 "TORCHINDUCTOR_CACHE_DIR": "/var/lib/sglang/compile-cache/default/0.5.23/inductor",
                 "CUDA_CACHE_PATH": "/var/lib/sglang/compile-cache/default/0.5.23/nv",
                 "FLASHINFER_WORKSPACE_BASE": "/var/lib/sglang/compile-cache/default/0.5.23"}


def test_plan_puts_the_caches_under_the_home_per_instance_and_version_and_creates_them():
    s = dict(T.defaults(), home="/srv/sglang", instance="kimi")
    pl = sp.plan(sp.validate(s), T.host(version="0.5.15.post1"))
    assert pl["refusals"] == []
    assert pl["env"]["SGLANG_CACHE_DIR"] == "/srv/sglang/compile-cache/kimi/0.5.15.post1"
    assert pl["env"]["TRITON_CACHE_DIR"] == "/srv/sglang/compile-cache/kimi/0.5.15.post1/triton"
    dirs = dict((d["path"], d) for d in pl["dirs"])
    for path in ("/srv/sglang/compile-cache/kimi", "/srv/sglang/compile-cache/kimi/0.5.15.post1"):
        assert (dirs[path]["owner"], dirs[path]["mode"]) == (s["user"], "0750")
        assert path in pl["dirs_missing"]
    # an upgrade gets a fresh folder and keeps the old one (a rollback finds its kernels)
    up = sp.plan(sp.validate(s), dict(T.running(pl), version="0.5.15.post1"))
    assert up["dirs_missing"] == []
    newer = sp.plan(sp.validate(s), dict(T.running(pl), version="0.5.23"))
    assert newer["dirs_missing"] == ["/srv/sglang/compile-cache/kimi/0.5.23"]
    assert newer["action"] == "restart"


def test_an_explicit_cache_variable_wins():
    s = dict(T.defaults(), env={"TRITON_CACHE_DIR": "/nvme/triton"})
    pl = sp.plan(sp.validate(s), T.host())
    assert pl["env"]["TRITON_CACHE_DIR"] == "/nvme/triton"
    assert pl["env"]["SGLANG_CACHE_DIR"].endswith("/compile-cache/default/0.5.23")
