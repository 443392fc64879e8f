# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument parsing that accepts exactly the flags of the impersonated SGLang version.

The flag tables in sglang/flags/<version>.json are generated from the real parsers by
tools/sglang_double/gen_flag_table.py, so unknown and ambiguous options, values of the wrong type (int, float,
JSON, SGLang's own type functions), invalid choices and ``--no-x`` where SGLang has none fail the same way,
with argparse's own words and exit status 2.
"""
import argparse
import json
import os
import re
import sys
from decimal import Decimal

from sglang.version import __version__

_FLAGS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "flags")


def load_table(version=__version__):
    with open(os.path.join(_FLAGS_DIR, version + ".json")) as f:
        return json.load(f)


def _json_list_type(value):
    # sglang.srt.utils.common.json_list_type (orjson there; both raise a JSONDecodeError subclass)
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError("Invalid JSON list: %s. Please provide a valid JSON list." % value)


def _nullable_str(val):
    if not val or val == "None":
        return None
    return val


def _human_readable_int(value):
    # sglang.srt.utils.common.human_readable_int (0.5.10.post1 to 0.5.23, same text)
    value = value.strip()
    si_multiplier = {"k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12}
    iec_multiplier = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in iec_multiplier:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    "Decimals are not allowed with IEC suffixes like '%s'. Use an integer IEC value such as '%d%s', "
                    "or an SI value such as '%s%s'." % (suffix, int(Decimal(number)), suffix, number, suffix[0]))
            return int(number) * iec_multiplier[suffix]
        return int(Decimal(number) * si_multiplier[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "Invalid integer value: '%s'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). "
            "Suffixes are case-sensitive." % value)


def _parse_cuda_graph_backend_arg(raw):
    # sglang.srt.model_executor.cuda_graph_config (0.5.23)
    if raw == "tc_piecewise":
        raise argparse.ArgumentTypeError("tc_piecewise was removed; select breakable, full, or disabled")
    return raw


def _parse_cuda_graph_config_arg(raw):
    # sglang.srt.model_executor.cuda_graph_config: a JSON object of phase -> settings object. The real one also
    # checks each phase's keys against its version's ALLOWED_KEYS_PER_PHASE; the double stops at the phases.
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError("--cuda-graph-config must be JSON: %s" % e)
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError("--cuda-graph-config must be a JSON object, got %s" % type(parsed).__name__)
    for phase, phase_settings in parsed.items():
        if str(phase) not in ("decode", "prefill"):
            raise argparse.ArgumentTypeError("--cuda-graph-config: unknown phase '%s', expected one of "
                                             "('decode', 'prefill')" % phase)
        if not isinstance(phase_settings, dict):
            raise argparse.ArgumentTypeError("--cuda-graph-config['%s'] must be a JSON object, got %s"
                                             % (phase, type(phase_settings).__name__))
        if "backend" in phase_settings:
            _parse_cuda_graph_backend_arg(phase_settings["backend"])
    return parsed


# The table's type names -> callables that fail as SGLang's do. argparse words a ValueError with the callable's
# __name__ ("invalid int value", "invalid loads value"), so json.loads is used itself.
TYPES = {"int": int, "float": float, "str": str, "json": json.loads, "json_list_type": _json_list_type,
         "nullable_str": _nullable_str, "human_readable_int": _human_readable_int,
         "parse_cuda_graph_config_arg": _parse_cuda_graph_config_arg,
         "parse_cuda_graph_backend_arg": _parse_cuda_graph_backend_arg}


class _Deprecated(argparse.Action):
    """DeprecatedAction: a retired flag; parser.error(error_message) when it has one, else a warning."""

    def __init__(self, option_strings, dest, error_message=None, nargs=0, **kwargs):
        self.error_message = error_message
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.error_message is not None:
            parser.error(self.error_message)
        sys.stderr.write("The command line argument '%s' is deprecated and will be removed in future versions.\n"
                         % option_string)


class _StoreValue(argparse.Action):
    """DeprecatedStoreConstAction with nargs=None: takes a value (checked against choices), stores its const."""

    def __init__(self, option_strings, dest, const_value=None, **kwargs):
        self.const_value = const_value
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const_value)


def _add(parser, spec):
    kw = {"dest": spec["dest"]}
    kind = spec["kind"]
    if "default" in spec:
        kw["default"] = spec["default"]
    if kind in ("store_true", "store_false", "count"):
        kw["action"] = kind
    elif kind == "boolean_optional":
        # the table lists --no-x too; BooleanOptionalAction adds it itself
        kw["action"] = argparse.BooleanOptionalAction
        parser.add_argument(*[o for o in spec["opts"] if not o.startswith("--no-")], **kw)
        return
    elif kind == "store_const":
        kw.update(action="store_const", const=spec.get("const", True))
    elif kind == "deprecated":
        kw.update(action=_Deprecated, error_message=spec.get("error"))
    else:
        if kind == "append":
            kw["action"] = "append"
        elif "const" in spec:
            kw.update(action=_StoreValue, const_value=spec["const"])
        if "nargs" in spec:
            kw["nargs"] = spec["nargs"]
        if "type" in spec:
            if spec["type"] not in TYPES:
                raise ValueError("sglang double: flag table names type %r, which the double lacks" % spec["type"])
            kw["type"] = TYPES[spec["type"]]
        if "choices" in spec:
            kw["choices"] = spec["choices"]  # the real values (after type=), in the real order
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

    # The parallel layout's defaults, as the real ServerArgs dataclass has them (tp_size: int = 1, ...), so the
    # server_args= line says tp_size=1 / nnodes=1 like real logs. The table's literal defaults already give them on
    # every supported version; this stays for a flag whose default is not a literal.
    LAYOUT_DEFAULTS = {"tp_size": 1, "tensor_parallel_size": 1, "pp_size": 1, "pipeline_parallel_size": 1,
                       "dp_size": 1, "data_parallel_size": 1, "nnodes": 1, "node_rank": 0}

    def __repr__(self):
        # in the parser's order (model_path first), as the real dataclass's repr lists its fields
        return "ServerArgs(" + ", ".join("%s=%r" % kv for kv in self.__dict__.items()) + ")"

    # A value the double reads, with its own fallback where the parser left None.
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
