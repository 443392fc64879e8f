#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dump the real SGLang CLI as a compact flag table (run once per version, output committed).

Run it with a Python that can import the REAL sglang wheel (``pip install --no-deps sglang==X``
plus CPU torch and the small deps listed in docs/sglang-double.md).  We introspect the real
argparse parser instead of re-parsing server_args.py, because 0.5.23 builds most flags from
dataclass field metadata spread over many modules.

    python gen_flag_table.py > sglang/flags/<version>.json
"""
import argparse
import dataclasses
import os
import json
import sys


def kind_of(action):
    # Only the shapes the double needs to reproduce argparse's acceptance behaviour.
    if isinstance(action, argparse._StoreTrueAction):
        return "store_true"
    if isinstance(action, argparse._StoreFalseAction):
        return "store_false"
    if isinstance(action, argparse._StoreConstAction):
        return "store_const"
    if isinstance(action, argparse._AppendAction):
        return "append"
    if isinstance(action, argparse._CountAction):
        return "count"
    if action.nargs == 0:
        return "store_true"  # custom zero-arg actions (DeprecatedStoreTrueAction, ...)
    if isinstance(action, argparse.BooleanOptionalAction if hasattr(argparse, "BooleanOptionalAction") else ()):
        return "boolean_optional"
    return "store"


def main():
    # Run as a script, this file's folder (the double's own `sglang`) comes first on sys.path: drop it, or the
    # table would describe the double instead of the real wheel.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    import sglang
    if os.path.abspath(sglang.__file__).startswith(here):
        sys.exit("gen_flag_table: imported the double's sglang (%s), not the real wheel" % sglang.__file__)
    from sglang.srt.server_args import ServerArgs, prepare_server_args  # noqa: F401
    import inspect

    src = inspect.getsource(prepare_server_args)
    prog = "sglang serve" if 'prog="sglang serve"' in src else None
    parser = argparse.ArgumentParser(prog=prog or "launch_server.py")
    ServerArgs.add_cli_args(parser)
    flags = []
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        entry = {"opts": list(a.option_strings), "dest": a.dest, "kind": kind_of(a)}
        if a.nargs is not None and a.nargs != 0:
            entry["nargs"] = a.nargs
        if a.choices is not None:
            entry["choices"] = sorted(str(c) for c in a.choices)
        if a.type in (int, float):
            entry["type"] = a.type.__name__
        if a.required:
            entry["required"] = True
        flags.append(entry)
    version = getattr(sglang, "__version__", None)
    if version is None:
        from importlib.metadata import version as v
        version = v("sglang")
    out = {
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


if __name__ == "__main__":
    main()
