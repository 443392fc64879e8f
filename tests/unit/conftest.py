# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ``ansible_collections.llmserve.sglang``, and this folder's helpers
(``testpaths``, ``netutil``) importable from tests at any depth; fixtures every room uses."""
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
