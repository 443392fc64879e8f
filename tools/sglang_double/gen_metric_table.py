#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""List every Prometheus metric family a real SGLang wheel can expose (output committed).

Reads the wheel as a zip, no install, no import: every ``Counter/Gauge/Histogram/Summary/GaugeHistogram(...)``
call in its Python source whose name is a string literal starting with ``sglang:``. Names are written as the text
exposition format 0.0.4 names the family on its ``# TYPE`` line (prometheus_client adds ``_total`` to counters).
What one server really exposes is a subset (many families are per feature): see the captures next to the output.
sglang-router's metrics live in its Rust binary; they are taken from a real scrape instead.

    python gen_metric_table.py sglang-0.5.15.post1-*.whl > tests/fixtures/sglang_metrics/source-0.5.15.post1.json
"""
import ast
import json
import sys
import zipfile

KINDS = {"Counter": "counter", "Gauge": "gauge", "Histogram": "histogram", "Summary": "summary",
         "GaugeHistogram": "gauge"}  # sglang.srt.utils.gauge_histogram: a Gauge with gt/le labels


def _call_kind(node):
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    name = name.lstrip("_").replace("Prom", "")  # `from prometheus_client import Gauge as _PromGauge`
    return KINDS.get(name)


def _literal_name(node):
    for kw in node.keywords:
        if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return kw.value.value
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _labels(node):
    for kw in node.keywords:
        if kw.arg == "labelnames" and isinstance(kw.value, (ast.List, ast.Tuple)):
            return [e.value for e in kw.value.elts if isinstance(e, ast.Constant)]
    return None  # built at run time (labels.keys())


def from_python(zf):
    out = {}
    for path in sorted(zf.namelist()):
        if not (path.startswith("sglang/srt/") and path.endswith(".py")):
            continue
        try:
            tree = ast.parse(zf.read(path))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            kind = _call_kind(node)
            name = _literal_name(node) if kind else None
            if not name or not name.startswith("sglang:"):
                continue
            if kind == "counter":
                name = name[:-len("_total")] if name.endswith("_total") else name
                name += "_total"
            entry = {"type": kind, "source": path}
            labels = _labels(node)
            if labels is not None:
                entry["labels"] = labels
            out.setdefault(name, entry)
    return out


def main():
    with zipfile.ZipFile(sys.argv[1]) as zf:
        table = from_python(zf)
    json.dump({"wheel": sys.argv[1].rsplit("/", 1)[-1], "metrics": dict(sorted(table.items()))},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
