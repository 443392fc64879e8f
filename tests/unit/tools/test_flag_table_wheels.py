# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The committed flag tables (tools/sglang_double/sglang/flags/<version>.json, generated from the real parsers by
gen_flag_table.py) held to each supported wheel's source, read with ast by tools/sglang_double/wheel_cli.py (no
import of sglang or torch; the wheels tests/sglang_wheels caches). Two independent readings of one CLI must agree:
same options, aliases, dests, kinds (``--no-x`` only for BooleanOptionalAction), types (int, float, json.loads,
SGLang's own type functions), nargs, choices and literal defaults. A table that is stale against its wheel, or a
new supported version without a table, fails here; regenerate with ``python3 tools/sglang_double/gen_flag_table.py``.
"""
import functools
import json
import os
import sys

import pytest

import testpaths
sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
sys.path.insert(0, os.path.join(testpaths.REPO, "tools", "sglang_double"))
import sglang_wheels as W  # noqa: E402
import wheel_cli  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates  # noqa: E402

FLAGS = os.path.join(testpaths.REPO, "tools", "sglang_double", "sglang", "flags")
ATTRS = ("opts", "kind", "dest", "type", "nargs", "choices", "default")


@functools.lru_cache(maxsize=None)
def from_wheel(version):
    return wheel_cli.read(W.wheel_path(version))


def table(version):
    with open(os.path.join(FLAGS, version + ".json")) as fh:
        return json.load(fh)


def _norm(attr, entry):
    value = entry.get(attr)
    if attr == "opts":  # BooleanOptionalAction adds --no-x itself; the source declares --x
        value = sorted(o for o in value if not (entry["kind"] == "boolean_optional" and o.startswith("--no-")))
    return value


def test_every_supported_version_has_a_table_and_the_double_knows_it():
    # the double's versions are its flag tables (sglang/version.py lists the folder): no list of its own
    assert sorted(gates.VERIFIED_VERSIONS) == sorted(f[:-5] for f in os.listdir(FLAGS) if f.endswith(".json"))
    with open(os.path.join(testpaths.REPO, "tools", "sglang_double", "sglang", "version.py")) as fh:
        text = fh.read()
    assert not [v for v in gates.VERIFIED_VERSIONS if v in text]


@pytest.mark.parametrize("version", gates.VERIFIED_VERSIONS)
def test_table_agrees_with_the_wheel_source(version):
    t = table(version)
    assert t["version"] == version
    committed = dict((f["opts"][0], f) for f in t["flags"])
    source = from_wheel(version)
    assert sorted(set(source) - set(committed)) == [], "options in the %s wheel missing from its table" % version
    assert sorted(set(committed) - set(source)) == [], "options in the %s table the wheel does not declare" % version
    diffs, known = [], 0
    for opt in sorted(committed):
        for attr in ATTRS:
            s = source[opt].get(attr)
            if s is wheel_cli.UNKNOWN:
                continue  # computed at run time (a comprehension, an environment switch): the real parser's word
            known += 1
            if _norm(attr, dict(source[opt], **{attr: s})) != _norm(attr, committed[opt]):
                diffs.append((opt, attr, s, committed[opt].get(attr)))
    assert diffs == [], "%s: table vs source (option, attribute, source, table):\n%s" % (
        version, "\n".join(repr(d) for d in diffs[:20]))
    # nearly every fact is read from the source, so agreement means something
    assert known >= 0.97 * len(committed) * len(ATTRS), (known, len(committed))


@pytest.mark.parametrize("version", gates.VERIFIED_VERSIONS)
def test_source_reader_sees_types_choices_and_negations(version):
    """The reader is no rubber stamp: what the issue names is found in the source itself."""
    source = from_wheel(version)
    kinds = [e["kind"] for e in source.values()]
    assert kinds.count("store_true") > 80 and source["--port"]["type"] == "int"
    assert sum(1 for e in source.values() if e.get("type") == "json") >= 4
    assert sum(1 for e in source.values() if isinstance(e.get("choices"), list)) >= 50
    assert source["--load-format"]["choices"][0] == "auto"
    negated = sorted(o for o, e in source.items() if e["kind"] == "boolean_optional")
    committed = sorted(f["opts"][0] for f in table(version)["flags"] if f["kind"] == "boolean_optional")
    assert negated == committed
    if version == "0.5.23":
        assert "--dllm-fdfo" in negated and source["--dllm-fdfo"]["default"] is True
        assert source["--context-length"]["type"] == "human_readable_int"
