# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/version.probe: the one way the collection asks an interpreter which SGLang it has (server_info, the
preflight's parse script and the install plan's read script all run PROBE_SOURCE), on real interpreters."""
import os
import subprocess
import sys

from ansible_collections.llmserve.sglang.plugins.module_utils.install.plan import READ_SCRIPT
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version


def runner(pythonpath):
    def run(argv):
        env = dict(os.environ, PYTHONPATH=str(pythonpath), PYTHONNOUSERSITE="1")
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False)
        return p.returncode, p.stdout, p.stderr
    return run


def wheel_install(root, ver):
    info = root / ("sglang-%s.dist-info" % ver)
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: %s\n" % ver)


def test_a_wheel_install_is_read_from_its_metadata(tmp_path):
    wheel_install(tmp_path, "0.5.15.post1")
    assert version.probe(runner(tmp_path), sys.executable) == ("0.5.15.post1", None)


def test_a_source_tree_is_read_from_dunder_version(tmp_path):
    (tmp_path / "sglang").mkdir()
    (tmp_path / "sglang" / "__init__.py").write_text("__version__ = '0.5.24.dev0'\n")
    assert version.probe(runner(tmp_path), sys.executable) == ("0.5.24.dev0", None)


def test_no_sglang_and_no_interpreter(tmp_path):
    got, err = version.probe(runner(tmp_path), sys.executable)
    assert got is None and "no sglang installed" in err
    got, err = version.probe(lambda argv: (127, "", "/nope/python: not found\n"), "/nope/python")
    assert got is None and err == "/nope/python: not found"


def test_the_install_plan_reads_the_same_version(tmp_path):
    wheel_install(tmp_path, "0.5.23")
    rc, out, _err = runner(tmp_path)([sys.executable, "-c", READ_SCRIPT, "[]"])
    assert rc == 0 and '"sglang": "0.5.23"' in out
