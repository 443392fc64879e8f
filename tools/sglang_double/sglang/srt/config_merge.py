# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`--config FILE.yaml` the way SGLang's ConfigArgumentMerger handles it.

Real SGLang reads the YAML mapping with PyYAML and puts its items in front of the
command line (CLI > config > defaults). The double has no PyYAML, so it reads the flat
subset deployments use: `key: value` lines with scalars, quoted strings, booleans and
inline `[a, b]` lists.
"""
import argparse
import json
import os


def _scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("null", "~", ""):
        return None
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_scalar(p) for p in inner.split(",")] if inner else []
    return text


def read_flat_yaml(path):
    data = {}
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split(" #", 1)[0].rstrip()
            if not line.strip() or line.lstrip().startswith("#") or line.strip() == "---":
                continue
            key, sep, value = line.partition(":")
            if not sep or line[0].isspace():
                raise ValueError("%s:%d: the double reads only a flat 'key: value' mapping" % (path, lineno))
            data[key.strip()] = _scalar(value)
    return data


def merge(parser, argv):
    """Return argv with the config file's items in front, as SGLang does."""
    idx = [i for i, a in enumerate(argv) if a == "--config"]
    if not idx:
        return argv
    if len(idx) > 1:
        raise ValueError("Multiple config files specified! Only one allowed.")
    i = idx[0]
    if i == len(argv) - 1:
        raise ValueError("No config file specified after --config flag!")
    path = argv[i + 1]
    if os.path.splitext(path)[1].lower() not in (".yaml", ".yml"):
        raise ValueError("Config file must be YAML format, got: %s" % os.path.splitext(path)[1])
    if not os.path.exists(path):
        raise ValueError("Config file not found: %s" % path)
    store_true = set()
    for action in parser._actions:  # pylint: disable=protected-access
        if isinstance(action, argparse._StoreTrueAction):  # pylint: disable=protected-access
            store_true.add(action.dest)
            store_true.update(o[2:].replace("-", "_") for o in action.option_strings if o.startswith("--"))
    out = []
    for key, value in read_flat_yaml(path).items():
        if isinstance(value, bool):
            if key.replace("-", "_") in store_true:
                if value:
                    out.append("--" + key)
            else:
                out.extend(["--" + key, str(value).lower()])
        elif isinstance(value, list):
            if value:
                out.append("--" + key)
                out.extend(str(v) for v in value)
        elif isinstance(value, dict):
            out.extend(["--" + key, json.dumps(value)])
        elif value is not None:
            out.extend(["--" + key, str(value)])
    return out + argv[:i] + argv[i + 2:]
