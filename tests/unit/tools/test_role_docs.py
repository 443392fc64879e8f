# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/roles/*.md carry each role's variables as generated from meta/argument_specs.yml: fail when stale."""
import testpaths
import os
import sys

REPO = testpaths.REPO
sys.path.insert(0, os.path.join(REPO, "tools", "docs"))

import role_docs  # noqa: E402  pylint: disable=wrong-import-position


def test_role_pages_match_their_argument_specs():
    assert role_docs.stale() == [], "run: python3 tools/docs/role_docs.py"


def test_a_changed_spec_makes_the_page_stale(monkeypatch):
    page = open(os.path.join(REPO, "docs", "roles", "server.md")).read()
    real = role_docs.render

    def changed(role):
        return real(role).replace("Tensor-parallel size", "Tensor parallel size (edited)")

    monkeypatch.setattr(role_docs, "render", changed)
    assert role_docs.update("server", page) != page


def test_every_variable_of_the_spec_is_on_the_page():
    import yaml

    for role in role_docs.roles():
        with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as f:
            names = yaml.safe_load(f)["argument_specs"]["main"]["options"]
        page = open(os.path.join(REPO, "docs", "roles", role + ".md")).read()
        for name in names:
            assert "| `%s` |" % name in page, (role, name)


def test_markup_becomes_markdown():
    assert role_docs.markdown("C(x) O(server_tp=1) I(it) B(b) V(0.5.23) L(t, https://x)") == (
        "`x` `server_tp=1` *it* **b** `0.5.23` [t](https://x)")
