#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the SGLang versions of plugins/module_utils/sglang/gates.py (VERIFIED_VERSIONS, DEFAULT_VERSION) into the
files that cannot import it: roles/sglang's default and argument spec, the playbooks' defaults, the demo's pin,
the Makefile's help and the real-parser venv script. Run after changing gates.py, then tools/docs/role_docs.py.

    python3 tools/versions/sync_versions.py           # rewrite what is stale
    python3 tools/versions/sync_versions.py --check   # list what is stale (exit 1 when any); a unit test runs it

A new plain SGLang release is then: its entry in gates.VERIFIED (and DEFAULT_VERSION when it becomes the default),
its flag table and cli_flags.py (tools/sglang_double/gen_flag_table.py), this script and the role docs; the SGLang
double, tools/signature_coverage and the tests read the list from gates.py or from the flag tables.
"""
import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gates():
    sys.path.insert(0, os.path.join(REPO, "collections"))
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
    return gates.VERIFIED_VERSIONS, gates.DEFAULT_VERSION


def targets(verified, default):
    """[(path, pattern, text)]: the pattern's group 1 and 2 enclose the text that follows gates.py."""
    others = [v for v in verified if v != default]
    also = (", ".join(others[:-1]) + " and " + others[-1]) if len(others) > 1 else "".join(others)
    return [
        ("roles/sglang/defaults/main.yml", r'^(sglang_version: ")[^"\n]*(")', default),
        ("roles/sglang/meta/argument_specs.yml", r"(description: SGLang release to install \()[^\n]*?(\)\.\n)",
         "%s; %s supported too" % (default, also) if others else default),
        ("playbooks/demo/prepare.yml", r"(demo_sglang_version \| default\(')[^'\n]*('\))", default),
        ("playbooks/demo/inventory.yml", r'(demo_sglang_version: ")[^"\n]*(")', default),
        ("Makefile", r"(checked by the real SGLang argument parsers \()[^)\n]*(\))", ", ".join(verified)),
        ("tests/real_parser/build_venvs.sh", r"(\|\| VERSIONS=\()[^)\n]*(\))", " ".join(verified)),
    ]


def sync(repo, verified, default, write=True):
    """The files that differed (rewritten when ``write``); a pattern that matches nothing is a RuntimeError."""
    stale = []
    for rel, pattern, text in targets(verified, default):
        path = os.path.join(repo, rel)
        with open(path) as handle:
            old = handle.read()
        new, count = re.subn(pattern, lambda m: m.group(1) + text + m.group(2), old, flags=re.M)
        if count == 0:
            raise RuntimeError("%s: nothing matches %s - restore the line or update tools/versions/sync_versions.py"
                               % (rel, pattern))
        if new != old:
            stale.append(rel)
            if write:
                with open(path, "w") as handle:
                    handle.write(new)
    return stale


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only list the stale files (exit 1 when any)")
    args = parser.parse_args(argv)
    verified, default = _gates()
    stale = sync(REPO, verified, default, write=not args.check)
    for rel in stale:
        print(("stale: %s" if args.check else "wrote: %s") % rel)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
