# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module's documentation and the classifier share one category list."""
import testpaths
import ast
import os
import re

import yaml

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import (
    BUILTIN, CATEGORIES, CATEGORY_DOCS, FRAME_RULES)

MODULE = os.path.join(testpaths.REPO, "plugins", "modules", "server_ready.py")


def _doc(name):
    with open(MODULE, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == name:
            return yaml.safe_load(node.value.value)
    raise AssertionError(name)


def test_return_category_lists_exactly_the_categories():
    desc = _doc("RETURN")["category"]["description"]
    listed = re.findall(r"^C\((\w+)\) - ", "\n".join(desc), re.M)
    assert listed == list(CATEGORIES)
    for name, text in CATEGORY_DOCS:
        assert "C(%s) - %s." % (name, text) in desc


def test_every_signature_reports_a_documented_category():
    used = {row[0] for row in BUILTIN} - {"oom", "sigbus"} | {c for c, _rx, _r in FRAME_RULES}
    assert used <= set(CATEGORIES), used - set(CATEGORIES)
    # and every category but unknown can be reached
    # (oom_* are resolved from the generic oom row; draft_mismatch from a shape error raised where the draft runs;
    # weights_sigbus from the generic sigbus row; chat_template from the READY chat probe, ready/verdicts.chat_fails)
    assert set(CATEGORIES) - {"unknown", "oom_weights", "oom_kv", "oom_cuda_graph", "oom_runtime", "draft_mismatch",
                              "weights_sigbus", "chat_template"} <= used
