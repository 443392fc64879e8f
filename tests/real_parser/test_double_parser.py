# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang double's argument parser held to the REAL parser of every supported version.

For each option of the version's table, argvs with a good value, a value of the wrong type, an invalid choice,
invalid JSON, ``--no-x``, a missing value, plus unknown and ambiguous options; each is parsed by the real parser
(the venvs of build_venvs.sh) and by the double's, and both must accept or refuse it alike: same exit status, same
``error:`` line, and on acceptance the same values. The real parser is the referee: when this fails, regenerate the
tables (tools/sglang_double/gen_flag_table.py) or fix the double, never the expectation.
"""
import functools
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(REPO, "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import cli_flags, gates  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render  # noqa: E402

DOUBLE = os.path.join(REPO, "tools", "sglang_double")
FLAGS = os.path.join(DOUBLE, "sglang", "flags")
CACHE = os.path.join(os.environ.get("LLMSERVE_CACHE", "/var/cache/llmserve"), "parser-venvs")

# The same harness runs on both sides: the version's ServerArgs.add_cli_args on a parser with a fixed prog.
HARNESS = r"""
import argparse, contextlib, io, json, logging, sys
logging.disable(logging.CRITICAL)
from sglang.srt.server_args import ServerArgs
p = argparse.ArgumentParser(prog="sglang.launch_server"); ServerArgs.add_cli_args(p)
out = []
for argv in json.loads(sys.stdin.read()):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = vars(p.parse_args(argv))
        out.append({"code": 0, "ns": json.loads(json.dumps(ns, default=repr, sort_keys=True))})
    except SystemExit as e:
        lines = [l for l in err.getvalue().splitlines() if "error:" in l]
        out.append({"code": e.code, "error": lines[-1] if lines else err.getvalue()[-300:]})
print("@@" + json.dumps(out))
"""

GOOD = {"int": "7", "float": "0.5", "str": "x", "json": '{"a": 1}', "json_list_type": "[1, 2]",
        "nullable_str": "x", "human_readable_int": "4k",
        "parse_cuda_graph_config_arg": '{"decode": {"max_bs": 8}}', "parse_cuda_graph_backend_arg": "full"}
BAD = {"int": ["abc", "1.5"], "float": ["abc"], "json": ["{bad", ""], "json_list_type": ["[1,"],
       "human_readable_int": ["abc", "1.5Ki"], "parse_cuda_graph_config_arg": ["{bad", "[1]", '{"x": {}}'],
       "parse_cuda_graph_backend_arg": ["tc_piecewise"]}


def corpus(table):
    """Argvs derived from the table's own options (every option, not a chosen few)."""
    base = ["--model-path", "/m"]
    argvs = [[], base, base + ["--no-such-flag"], base + ["--tp"], base + ["--tp", "2"], base + ["--cuda-graph"]]
    for f in table["flags"]:
        opt = f["opts"][0]
        if opt == "--model-path":
            continue
        kind = f["kind"]
        if kind in ("store_true", "store_false", "store_const", "boolean_optional", "deprecated", "count"):
            argvs.append(base + [opt])
            argvs.append(base + ["--no-" + opt[2:]])
            argvs.append(base + [opt, "1"])
            continue
        t = f.get("type") or "str"
        n = f.get("nargs")
        choices = f.get("choices")
        good = [str(choices[0])] if choices else [GOOD[t]]
        if n in ("+", "*"):
            good = good * 2
        argvs.append(base + [opt] + good)
        if n not in ("?", "*"):
            argvs.append(base + [opt])  # no value
        for bad in BAD.get(t, []):
            argvs.append(base + [opt, bad])
        if choices:
            argvs.append(base + [opt, "not-a-choice"])
    return argvs


def _normal(error, unordered):
    """An error line with the "choose from" list sorted when the real choices are a set (hash-seed order)."""
    if error and unordered and "(choose from " in error:
        head, tail = error.split("(choose from ", 1)
        return head + "(choose from " + ", ".join(sorted(tail.rstrip(")").split(", "))) + ")"
    return error


def parse(python, argvs, env=None):
    proc = subprocess.run([python, "-c", HARNESS], input=json.dumps(argvs), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600, check=False, cwd="/", env=env)
    line = [x for x in proc.stdout.splitlines() if x.startswith("@@")]
    assert line, proc.stderr[-3000:]
    return json.loads(line[-1][2:])


def table(version):
    with open(os.path.join(FLAGS, version + ".json")) as fh:
        return json.load(fh)


def all_false(version):
    """render() with every switch of the version set to false (those with a setting of their own are refused in
    args, as they should be)."""
    names = sorted(n for n, (kind, _d) in cli_flags.SWITCHES[version].items()
                   if kind in ("store_true", "boolean_optional"))
    names = [n for n in names if not any("duplicates settings." in e
                                         for e in render({"model_path": "/m", "args": {n: False}}, version)["errors"])]
    return names, render({"model_path": "/m", "args": dict((n, False) for n in names)}, version)


@functools.lru_cache(maxsize=None)
def real_parse(version):
    """One run of the real parser per version (its import is the cost): the corpus, then render()'s all-false argv."""
    py = os.path.join(CACHE, version, "bin", "python")
    if not os.path.exists(os.path.join(CACHE, version, ".stamp")):
        pytest.skip("real-parser venv for sglang %s not built: run tests/real_parser/build_venvs.sh %s"
                    % (version, version))
    argvs = corpus(table(version)) + [all_false(version)[1]["argv"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    return argvs, parse(py, argvs, env)


@pytest.mark.parametrize("version", gates.VERIFIED_VERSIONS)
def test_false_booleans_parse_to_false(version):
    """Every switch set to false in the settings (issue 28): the real parser stores a false value for each, the
    BooleanOptionalAction ones through the --no-x render() writes (cli_flags.py, generated from these parsers)."""
    names, rendered = all_false(version)
    assert rendered["errors"] == [] and len(names) > 80, rendered["errors"]
    negated = [a for a in rendered["argv"] if a.startswith("--no-")]
    assert len(negated) == sum(1 for n in names if cli_flags.SWITCHES[version][n][0] == "boolean_optional")
    _argvs, results = real_parse(version)
    res = results[-1]
    assert res["code"] == 0, res
    for n in names:
        dest = [f["dest"] for f in table(version)["flags"] if "--" + n.replace("_", "-") in f["opts"]][0]
        assert not res["ns"][dest], (n, res["ns"][dest])
    for n in (a[len("--no-"):].replace("-", "_") for a in negated):
        assert res["ns"][n] is False  # not None: said, not left to the default


@pytest.mark.parametrize("version", gates.VERIFIED_VERSIONS)
def test_double_parser_accepts_and_refuses_as_real(version):
    argvs, real = real_parse(version)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    double = parse(sys.executable, argvs, dict(env, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_VERSION=version))
    table_ = table(version)
    refused = sum(1 for r in real if r["code"] != 0)
    # the corpus exercises both sides of the parser on every version
    assert refused > len(table_["flags"]) and len(argvs) - refused > len(table_["flags"]) // 2, (refused, len(argvs))
    unordered = set(o for f in table_["flags"] if f.get("unordered") for o in f["opts"])
    diffs = []
    for argv, r, d in zip(argvs, real, double):
        loose = len(argv) > 2 and argv[2] in unordered
        if r["code"] != d["code"] or _normal(r.get("error"), loose) != _normal(d.get("error"), loose):
            diffs.append((argv[2:], r.get("error", "accepted"), d.get("error", "accepted")))
        elif r["code"] == 0:
            keys = set(r["ns"]) | set(d["ns"])
            bad = sorted(k for k in keys if r["ns"].get(k, "<absent>") != d["ns"].get(k, "<absent>"))
            if bad:
                diffs.append((argv[2:], {k: r["ns"].get(k, "<absent>") for k in bad},
                              {k: d["ns"].get(k, "<absent>") for k in bad}))
    assert not diffs, "%d of %d argvs differ (argv, real, double), first ones:\n%s" % (
        len(diffs), len(argvs), "\n".join(repr(x) for x in diffs[:15]))
