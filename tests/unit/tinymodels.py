# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/models/tiny_checkpoint.py, importable from the tests."""
import importlib.util
import os

import testpaths

_spec = importlib.util.spec_from_file_location(
    "tiny_checkpoint", os.path.join(testpaths.REPO, "tools", "models", "tiny_checkpoint.py"))
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)
