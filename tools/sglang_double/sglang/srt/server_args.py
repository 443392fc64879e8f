# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument parsing that accepts exactly the flags of the impersonated SGLang version.

The flag tables in sglang/flags/<version>.json are generated from the real wheels by
tools/sglang_double/gen_flag_table.py, so unknown and ambiguous options fail the same way.
"""
import argparse
import json
import os

from sglang.version import __version__

_FLAGS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "flags")


def load_table(version=__version__):
    with open(os.path.join(_FLAGS_DIR, version + ".json")) as f:
        return json.load(f)


def _add(parser, spec):
    kw = {"dest": spec["dest"]}
    kind = spec["kind"]
    if kind in ("store_true", "store_false", "count"):
        kw["action"] = kind
    elif kind == "store_const":
        kw.update(action="store_const", const=True)
    else:
        if kind == "append":
            kw["action"] = "append"
        if "nargs" in spec:
            kw["nargs"] = spec["nargs"]
        if "type" in spec:
            kw["type"] = {"int": int, "float": float}[spec["type"]]
        if "choices" in spec:
            # Choices are stored as strings; compare them as strings like a str-typed flag.
            choices = spec["choices"]
            conv = kw.get("type", str)
            try:
                kw["choices"] = [conv(c) for c in choices]
            except ValueError:
                kw["choices"] = choices
    if spec.get("required"):
        kw["required"] = True
    parser.add_argument(*spec["opts"], **kw)


class ServerArgs:
    """Only what callers of the double use: add_cli_args and from_cli_args."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    @staticmethod
    def add_cli_args(parser):
        for spec in load_table()["flags"]:
            _add(parser, spec)

    @classmethod
    def from_cli_args(cls, args):
        kw = vars(args)
        for k, v in cls.LAYOUT_DEFAULTS.items():
            if k in kw and kw[k] is None:
                kw[k] = v
        return cls(**kw)

    # The parallel layout's defaults, resolved as the real ServerArgs dataclass does (tp_size: int = 1, ...), so the
    # server_args= line says tp_size=1 / nnodes=1 like real logs; the table holds no defaults.
    LAYOUT_DEFAULTS = {"tp_size": 1, "tensor_parallel_size": 1, "pp_size": 1, "pipeline_parallel_size": 1,
                       "dp_size": 1, "data_parallel_size": 1, "nnodes": 1, "node_rank": 0}

    def __repr__(self):
        return "ServerArgs(" + ", ".join("%s=%r" % kv for kv in sorted(self.__dict__.items())) + ")"

    # Defaults the double reads (the real parser's defaults are not in the table).
    def get(self, name, default=None):
        v = self.__dict__.get(name)
        return default if v is None else v


def prepare_server_args(argv):
    prog = load_table()["prog"]
    # Same construction as the real prepare_server_args: default prog on 0.5.9, "sglang serve" later.
    parser = argparse.ArgumentParser(prog=prog) if prog else argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    if "--config" in argv:
        from sglang.srt.config_merge import merge
        argv = merge(parser, argv)
    args = ServerArgs.from_cli_args(parser.parse_args(argv))
    global LAUNCH_COMMAND
    LAUNCH_COMMAND = " ".join(argv)  # real 0.5.20+: the argv after the --config merge, space-joined
    return args


LAUNCH_COMMAND = None
