# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang double prints each version's own start-up lines: its table equals the collection's
(sglang/gates.STARTUP_LINES, itself checked against the wheels), and a run of the double logs them."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

DOUBLE = os.path.join(testpaths.REPO, "tools", "sglang_double")
SUPPORTED = gates.VERIFIED_VERSIONS


def double_lines(version):
    code = ("import json; from sglang._double import texts; "
            "print(json.dumps(dict((n, texts.startup_line(n)) for n in texts.STARTUP_LINES)))")
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_VERSION=version)
    out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    return json.loads(out)


def test_the_double_supports_the_verified_versions():
    # the double's one list (sglang/version.py; its install.py reads it) is the collection's: the double runs on hosts
    # without the collection, so it cannot import it
    code = "import json; from sglang import version; print(json.dumps([version.SUPPORTED, version.DEFAULT]))"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=DOUBLE), stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    supported, default = json.loads(out)
    assert tuple(supported) == gates.VERIFIED_VERSIONS and default == gates.DEFAULT_VERSION
    spec = importlib.util.spec_from_file_location("sglang_double_install", os.path.join(DOUBLE, "install.py"))
    install = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(install)
    assert install.SUPPORTED == gates.VERIFIED_VERSIONS


@pytest.mark.parametrize("version", SUPPORTED)
def test_the_doubles_startup_lines_are_the_versions_own(version):
    lines = double_lines(version)
    # the double prints the names it knows with this version's wording; every one of them is the table's
    assert lines and set(lines) <= set(gates.STARTUP_LINES)
    for name, text in lines.items():
        assert text == gates.line_for(name, version), (version, name)
    assert lines["dist_init_begin"] == ("Init parallel begin." if version == "0.5.23" else "Init torch distributed begin.")
