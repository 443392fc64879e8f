# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ``ansible_collections.llmserve.sglang``, and this folder's helpers
(``testpaths``, ``netutil``) importable from tests at any depth; fixtures every room uses; a loud summary of the
tests skipped for a host tool that is not installed."""
import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for path in (os.path.join(REPO, "collections"), HERE):
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture
def open_dir():
    """A directory every user can enter: pytest's tmp_path is 0700, so another user (the server's) could reach
    nothing in it."""
    root = tempfile.mkdtemp(prefix="llmserve-open-")
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root)


# A test skipped because the host lacks a tool says so in its reason, starting with this: the run ends with a
# banner naming each, so a green run without them is not mistaken for a whole one.
MISSING_TOOL = "missing host tool: "


def pytest_terminal_summary(terminalreporter):
    missing = sorted(set(r.longrepr[2].split(MISSING_TOOL, 1)[1] for r in terminalreporter.stats.get("skipped", ())
                         if isinstance(r.longrepr, tuple) and MISSING_TOOL in str(r.longrepr[2])))
    if missing:
        terminalreporter.section("NOT TESTED: %d case(s) skipped for a missing host tool" % len(missing), sep="!",
                                 red=True, bold=True)
        for reason in missing:
            terminalreporter.write_line("MISSING HOST TOOL " + reason, red=True, bold=True)
