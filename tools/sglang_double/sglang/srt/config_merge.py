# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`--config FILE.yaml` the way SGLang's ConfigArgumentMerger handles it.

Real SGLang reads the YAML mapping with PyYAML and puts its items in front of the
command line (CLI > config > defaults). The double reads it with the same semantics
(sglang/_double/config.py: read_config_yaml).
"""
import argparse
import json
import os

from sglang._double.config import read_config_yaml


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
    for key, value in read_config_yaml(path).items():
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
