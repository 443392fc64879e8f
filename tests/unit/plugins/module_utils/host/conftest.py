# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/: the process that calls spawn.start stays itself and only its child becomes the program. Checked once per
session before any test here runs: were parent and child swapped, the test process itself would exec the first
program a test starts, and the run would end with that program's status (0 for most), every later test unrun."""
import os

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import spawn


@pytest.fixture(scope="session", autouse=True)
def spawn_keeps_the_caller():
    me = os.getpid()
    says = os.dup(2)                                     # stderr as it is now: start() points 0-2 at /dev/null first

    def not_in_the_caller():                             # setup runs where the program is about to be exec'd
        if os.getpid() == me:
            os.write(says, b"host/conftest.py: spawn.start ran the child's part in the caller's own process\n")
            os._exit(1)                                  # pylint: disable=protected-access

    try:
        child = spawn.start(["/bin/sh", "-c", "exit 5"], setup=not_in_the_caller)
        assert child.pid != me and child.wait() == 5
    finally:
        os.close(says)
