# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One version table (sglang/gates.py): the files that cannot import it are generated from it
(tools/versions/sync_versions.py), every version named in a role's argument spec is a gate's or a verified one, the
double's versions are its flag tables, the tools read gates; and a dry run shows that a new plain SGLang release is
gates.py plus regenerated files."""
import importlib.util
import os
import re
import shutil
import sys

import yaml

import testpaths
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates

sys.path.insert(0, os.path.join(testpaths.REPO, "tools", "versions"))
import sync_versions  # noqa: E402  pylint: disable=wrong-import-position


def test_the_generated_versions_are_fresh():
    stale = sync_versions.sync(testpaths.REPO, gates.VERIFIED_VERSIONS, gates.DEFAULT_VERSION, write=False)
    assert stale == [], "run python3 tools/versions/sync_versions.py, then tools/docs/role_docs.py"
    assert gates.DEFAULT_VERSION in gates.VERIFIED


def test_roles_sglang_defaults_to_the_tables_default():
    with open(os.path.join(testpaths.REPO, "roles", "sglang", "defaults", "main.yml")) as f:
        assert yaml.safe_load(f)["sglang_version"] == gates.DEFAULT_VERSION


def test_every_version_an_argument_spec_names_is_the_tables():
    # "SGLang X+", "X or newer", "X+": the first version of a gate; adaptive speculation's is the adaptive gate's
    found = []
    for role in sorted(os.listdir(os.path.join(testpaths.REPO, "roles"))):
        path = os.path.join(testpaths.REPO, "roles", role, "meta", "argument_specs.yml")
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            found += [(role, v) for v in re.findall(r"\b(\d+\.\d+\.\d+(?:\.post\d+)?)(?:\+| or newer)", text)]
            if role == "server":
                assert "C(--speculative-adaptive) (SGLang %s+" % gates.GATES["adaptive"] in text
    assert found and all(v in gates.GATES.values() for _role, v in found), found


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_double_and_the_tools_take_their_versions_from_the_table():
    sys.path.insert(0, os.path.join(testpaths.REPO, "tools", "signature_coverage"))
    sys.path.insert(0, os.path.join(testpaths.REPO, "tools", "sglang_double"))
    import walk_wheels  # noqa: E402
    import gen_flag_table  # noqa: E402
    assert walk_wheels.VERSIONS is gates.VERIFIED_VERSIONS
    assert tuple(gen_flag_table.supported_versions()) == gates.VERIFIED_VERSIONS
    version = _load(os.path.join(testpaths.REPO, "tools", "sglang_double", "sglang", "version.py"), "double_version")
    assert version.SUPPORTED == gates.VERIFIED_VERSIONS and version.DEFAULT == gates.DEFAULT_VERSION


def test_dry_run_of_a_new_plain_release(tmp_path):
    """0.5.99 verified and made the default: gates.py's two lines, the generated flag table, then sync_versions
    rewrites every other file that states a version; nothing else names the list."""
    new = "0.5.99"
    verified, default = gates.VERIFIED_VERSIONS + (new,), new
    rels = [rel for rel, _pattern, _text in sync_versions.targets(verified, default)]
    for rel in rels:
        os.makedirs(os.path.dirname(str(tmp_path / rel)), exist_ok=True)
        shutil.copy(os.path.join(testpaths.REPO, rel), str(tmp_path / rel))
    assert sorted(sync_versions.sync(str(tmp_path), verified, default)) == sorted(rels)
    assert sync_versions.sync(str(tmp_path), verified, default) == []  # idempotent
    with open(str(tmp_path / "roles/sglang/defaults/main.yml")) as f:
        assert yaml.safe_load(f)["sglang_version"] == new
    with open(str(tmp_path / "roles/sglang/meta/argument_specs.yml")) as f:
        text = yaml.safe_load(f)["argument_specs"]["main"]["options"]["sglang_version"]["description"]
    assert text.startswith("SGLang release to install (0.5.99; ") and "0.5.23 supported too" in text
    with open(str(tmp_path / "tests/real_parser/build_venvs.sh")) as f:
        assert "|| VERSIONS=(%s)" % " ".join(verified) in f.read()
    # the double: the new flag table is the whole change (gen_flag_table.py writes it)
    double = tmp_path / "double"
    shutil.copytree(os.path.join(testpaths.REPO, "tools", "sglang_double", "sglang", "flags"), str(double / "flags"))
    shutil.copy(os.path.join(testpaths.REPO, "tools", "sglang_double", "sglang", "version.py"), str(double / "version.py"))
    shutil.copy(str(double / "flags" / ("%s.json" % gates.DEFAULT_VERSION)), str(double / "flags" / ("%s.json" % new)))
    version = _load(str(double / "version.py"), "double_version_new")
    assert version.SUPPORTED == verified and version.DEFAULT == new


def test_a_target_that_lost_its_line_is_named(tmp_path):
    for rel, _pattern, _text in sync_versions.targets(gates.VERIFIED_VERSIONS, gates.DEFAULT_VERSION):
        os.makedirs(os.path.dirname(str(tmp_path / rel)), exist_ok=True)
        shutil.copy(os.path.join(testpaths.REPO, rel), str(tmp_path / rel))
    (tmp_path / "Makefile").write_text("no help line here\n")
    try:
        sync_versions.sync(str(tmp_path), gates.VERIFIED_VERSIONS, gates.DEFAULT_VERSION)
    except RuntimeError as exc:
        assert str(exc).startswith("Makefile: nothing matches")
    else:
        raise AssertionError("a target without its line must fail")
