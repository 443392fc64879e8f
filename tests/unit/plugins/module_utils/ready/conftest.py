# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures the ready/ readers' tests share."""
import subprocess
import sys

import pytest


@pytest.fixture
def sleeper():
    """A real child process that sleeps two minutes (killed at the end if the test did not)."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield p
    if p.poll() is None:
        p.kill()
        p.wait()
