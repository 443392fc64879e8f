#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dump the real SGLang CLI of every supported version as flag tables (run by the developer, output committed).

    python3 tools/sglang_double/gen_flag_table.py            # every version in gates.VERIFIED_VERSIONS
    python3 tools/sglang_double/gen_flag_table.py 0.5.23     # one version

For each version it runs itself (``--dump``) under that version's real-parser venv
(``${LLMSERVE_CACHE:-/var/cache/llmserve}/parser-venvs/<version>``, built by tests/real_parser/build_venvs.sh) and
writes:

- ``tools/sglang_double/sglang/flags/<version>.json``: every option of ``ServerArgs.add_cli_args`` in the real
  parser's order (argparse lists ambiguous prefixes in that order) with its kind (``store``, ``store_true``,
  ``store_false``, ``store_const``, ``boolean_optional`` = ``--x``/``--no-x``, ``deprecated`` = a retired flag),
  ``type`` (``int``, ``float``, ``str``, ``json`` = ``json.loads``, or the name of SGLang's own type function),
  ``choices`` (their values and order), ``nargs``, ``const``, ``required`` and the ``default`` where it is a literal.
  The SGLang double builds its parser from it.
- ``plugins/module_utils/sglang/cli_flags.py``: the switches (zero-argument options) of each version with their
  default, which ``sglang/argv.py`` needs to render a false boolean (``--no-x``, or a refusal).

Why the real parser and not the source read with ``ast``: from 0.5.15 most options are derived at import time from
``Annotated[..., Arg(...)]`` field metadata (0.5.23: msgspec structs over ``arg_groups/fields/*.py``) and some
choices are computed (``ReasoningParser.DetectorMap``, tool-call parsers, an environment switch), so only the
built parser holds them all. tests/unit/tools/test_flag_table_wheels.py reads each cached wheel's source with
``ast`` and fails when a table disagrees with what the source declares; tests/real_parser/test_double_parser.py
holds the double's parser to the real one.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FLAGS_DIR = os.path.join(HERE, "sglang", "flags")
CLI_FLAGS_PY = os.path.join(REPO, "plugins", "module_utils", "sglang", "cli_flags.py")
SCHEMA = 2

# SGLang's own argparse type functions the double reproduces (sglang/srt/server_args.py TYPES); a new one must be
# added there before a table may name it.
KNOWN_TYPES = ("int", "float", "str", "json", "json_list_type", "nullable_str", "human_readable_int",
               "parse_cuda_graph_config_arg", "parse_cuda_graph_backend_arg")
SWITCHES = ("store_true", "store_false", "store_const", "boolean_optional", "deprecated")


def _literal(value):
    """value when it is a JSON literal (what a table may hold), else a sentinel."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    if isinstance(value, dict):
        try:
            return json.loads(json.dumps(value))
        except (TypeError, ValueError):
            return _LiteralMissing
    return _LiteralMissing


class _LiteralMissing:  # pylint: disable=too-few-public-methods
    pass


def type_name(t):
    if t is None:
        return None
    if t in (int, float, str):
        return t.__name__
    if getattr(t, "__module__", None) == "json" and getattr(t, "__name__", None) == "loads":
        return "json"
    name = getattr(t, "__name__", repr(t))
    if name not in KNOWN_TYPES:
        raise SystemExit("gen_flag_table: unknown type function %s.%s: reproduce it in the double "
                         "(tools/sglang_double/sglang/srt/server_args.py TYPES) and add it to KNOWN_TYPES"
                         % (getattr(t, "__module__", "?"), name))
    return name


def describe(action):
    """One option of the real parser as a table entry."""
    cls = type(action).__name__
    entry = {"opts": list(action.option_strings), "dest": action.dest}
    if isinstance(action, argparse.BooleanOptionalAction):
        kind = "boolean_optional"
    elif isinstance(action, argparse._StoreTrueAction):  # pylint: disable=protected-access
        kind = "store_true"
    elif isinstance(action, argparse._StoreFalseAction):  # pylint: disable=protected-access
        kind = "store_false"
    elif isinstance(action, argparse._StoreConstAction):  # pylint: disable=protected-access
        kind, entry["const"] = "store_const", action.const
    elif isinstance(action, argparse._AppendAction):  # pylint: disable=protected-access
        kind = "append"
    elif isinstance(action, argparse._CountAction):  # pylint: disable=protected-access
        kind = "count"
    elif cls == "DeprecatedAction":
        # a retired flag: parser.error(error_message) when it has one, else a warning
        kind = "deprecated"
        if getattr(action, "error_message", None):
            entry["error"] = action.error_message
    elif cls == "DeprecatedStoreTrueAction":
        kind, entry["deprecated"] = "store_true", True
    elif cls == "DeprecatedStoreConstAction":
        # nargs=0: an old switch storing one value of a new flag; nargs=None: a valued flag storing that value
        kind = "store_const" if action.nargs == 0 else "store"
        entry["const"], entry["deprecated"] = _literal(action.const_value), True
    elif cls == "DeprecatedAliasStoreAction":
        kind, entry["deprecated"] = "store", True
    elif cls == "LoRAPathAction" or type(action) is argparse._StoreAction:  # pylint: disable=protected-access
        kind = "store"
    else:
        raise SystemExit("gen_flag_table: unknown action class %s.%s on %s: describe it"
                         % (type(action).__module__, cls, action.option_strings))
    entry["kind"] = kind
    if kind not in SWITCHES and action.nargs is not None:
        entry["nargs"] = action.nargs
    t = type_name(action.type)
    if t is not None and kind not in SWITCHES:
        entry["type"] = t
    if action.choices is not None:
        choices = list(action.choices)
        if isinstance(action.choices, (set, frozenset)):
            # a set's order changes with the hash seed, and with it argparse's "choose from" list: sorted here,
            # and marked so that comparisons ignore the order
            choices, entry["unordered"] = sorted(choices, key=str), True
        if any(_literal(c) is _LiteralMissing for c in choices):
            raise SystemExit("gen_flag_table: choices of %s are not literals: %r" % (action.option_strings, choices))
        entry["choices"] = choices
    if action.required:
        entry["required"] = True
    default = _literal(action.default)
    if default is not _LiteralMissing and action.default is not argparse.SUPPRESS:
        entry["default"] = default
    if "const" in entry and entry["const"] is _LiteralMissing:
        raise SystemExit("gen_flag_table: const of %s is not a literal" % action.option_strings)
    return entry


def dump():
    """Run inside a venv holding the real wheel: print its table as JSON."""
    # Run as a script, this file's folder (the double's own `sglang`) comes first on sys.path: drop it, or the
    # table would describe the double instead of the real wheel.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    import dataclasses
    import inspect
    import sglang
    if os.path.abspath(sglang.__file__).startswith(HERE):
        sys.exit("gen_flag_table: imported the double's sglang (%s), not the real wheel" % sglang.__file__)
    from sglang.srt.server_args import ServerArgs, prepare_server_args

    src = inspect.getsource(prepare_server_args)
    prog = "sglang serve" if 'prog="sglang serve"' in src else None
    parser = argparse.ArgumentParser(prog=prog or "launch_server.py")
    ServerArgs.add_cli_args(parser)
    flags = [describe(a) for a in parser._actions  # pylint: disable=protected-access
             if not isinstance(a, argparse._HelpAction)]  # pylint: disable=protected-access
    version = getattr(sglang, "__version__", None)
    if version is None:
        from importlib.metadata import version as v
        version = v("sglang")
    out = {
        "schema": SCHEMA,
        "version": version,
        "prog": prog,  # None: argparse's default prog (basename of sys.argv[0])
        "allow_abbrev": parser.allow_abbrev,
        "flags": flags,
        # ServerArgs' dataclass fields: what /server_info reports (a few CLI dests are no fields, a few fields
        # have no flag). 0.5.23's ServerArgs is no plain dataclass: None there, the double falls back to the dests.
        "fields": (sorted(f.name for f in dataclasses.fields(ServerArgs))
                   if dataclasses.is_dataclass(ServerArgs) else None),
    }
    json.dump(out, sys.stdout, indent=0, sort_keys=True)
    sys.stdout.write("\n")


def switches(table):
    """{snake_name: (kind, default)} for every zero-argument option of a table (``--no-x`` is ``x``'s)."""
    out = {}
    for f in table["flags"]:
        if f["kind"] not in SWITCHES:
            continue
        kind = f["kind"]
        if kind == "deprecated":
            kind = "deprecated_error" if f.get("error") else "deprecated"
        for opt in f["opts"]:
            if kind == "boolean_optional" and opt.startswith("--no-"):
                continue
            if opt.startswith("--"):
                out[opt[2:].replace("-", "_")] = (kind, f.get("default"))
    return out


def cli_flags_source(tables):
    """The text of plugins/module_utils/sglang/cli_flags.py for {version: table}."""
    lines = [
        "# -*- coding: utf-8 -*-",
        "# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.",
        "# Do not use this from other collections or standalone plugins/modules!",
        "# Copyright: (c) 2026, llmserve.sglang contributors",
        "# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)",
        '"""The switches (zero-argument options) of each verified SGLang version and their parser defaults.',
        "",
        "GENERATED by tools/sglang_double/gen_flag_table.py from the real parsers; do not edit (a unit test fails",
        "when it is stale). ``SWITCHES[version][name] = (kind, default)``: ``store_true`` (``--x`` turns it on),",
        "``store_false`` (``--x`` stores False), ``store_const``, ``boolean_optional`` (``--x`` and ``--no-x``),",
        "``deprecated`` (warns, stores nothing), ``deprecated_error`` (a retired flag the parser refuses).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "SWITCHES = {",
    ]
    for version in sorted(tables, key=_vkey):
        lines.append("    %r: {" % version)
        for name, (kind, default) in sorted(switches(tables[version]).items()):
            lines.append("        %r: (%r, %r)," % (name, kind, default))
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _vkey(s):
    return tuple(int(p) if p.isdigit() else -1 for p in s.replace(".post", ".").split("."))


def supported_versions():
    sys.path.insert(0, os.path.join(REPO, "collections"))
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
    return list(gates.VERIFIED_VERSIONS)


def load_tables(versions):
    tables = {}
    for v in versions:
        with open(os.path.join(FLAGS_DIR, v + ".json")) as fh:
            tables[v] = json.load(fh)
    return tables


def generate(versions):
    cache = os.path.join(os.environ.get("LLMSERVE_CACHE") or "/var/cache/llmserve", "parser-venvs")
    for v in versions:
        py = os.path.join(cache, v, "bin", "python")
        if not os.path.exists(py):
            sys.exit("gen_flag_table: no real-parser venv for %s (%s): run tests/real_parser/build_venvs.sh %s"
                     % (v, py, v))
        # cwd outside the repo so the double's sglang is not importable by accident
        proc = subprocess.run([py, os.path.abspath(__file__), "--dump"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, cwd="/", check=False)
        if proc.returncode != 0:
            sys.exit("gen_flag_table: %s failed:\n%s" % (v, proc.stderr[-3000:]))
        table = json.loads(proc.stdout)
        if table["version"] != v:
            sys.exit("gen_flag_table: the %s venv holds sglang %s" % (v, table["version"]))
        with open(os.path.join(FLAGS_DIR, v + ".json"), "w") as fh:
            fh.write(proc.stdout)
        print("%s: %d options" % (v, len(table["flags"])))
    with open(CLI_FLAGS_PY, "w") as fh:
        fh.write(cli_flags_source(load_tables(supported_versions())))
    print("wrote %s" % os.path.relpath(CLI_FLAGS_PY, REPO))


def main(argv):
    if argv[:1] == ["--dump"]:
        dump()
        return
    generate(argv or supported_versions())


if __name__ == "__main__":
    main(sys.argv[1:])
