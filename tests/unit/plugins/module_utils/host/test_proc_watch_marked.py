# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/proc_watch.end_marked: the processes started with a one-time environment marker (a probe and the ranks it
spawned, in another session too) are killed and gone when it returns; a process without the marker is untouched."""
import os
import subprocess
import sys

from ansible_collections.llmserve.sglang.plugins.module_utils.host import proc_watch

TREE = r'''
import os, subprocess, sys, time
rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
print(rank.pid, flush=True)
time.sleep(600)
'''


def gone(pid):
    st = proc_watch.proc_stat(pid)
    return st is None or st[0] in ("Z", "X")


def test_the_marked_tree_is_gone_when_it_returns_and_a_bystander_lives():
    marker = "test-%d" % os.getpid()
    env = dict(os.environ, MARK_UNDER_TEST=marker)
    probe = subprocess.Popen([sys.executable, "-c", TREE], env=env, stdout=subprocess.PIPE, universal_newlines=True)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 env=dict(os.environ, MARK_UNDER_TEST="another"))
    try:
        rank = int(probe.stdout.readline())
        assert proc_watch.marked("MARK_UNDER_TEST", marker) == sorted([probe.pid, rank])
        assert proc_watch.end_marked("MARK_UNDER_TEST", marker) == []
        assert gone(probe.pid) and gone(rank)  # no wait here: gone when end_marked returned
        assert bystander.poll() is None and not gone(bystander.pid)
        assert proc_watch.marked("MARK_UNDER_TEST", "another") == [bystander.pid]
    finally:
        bystander.kill()
        bystander.wait()
        probe.wait()
        probe.stdout.close()


def test_nothing_marked_returns_at_once_and_a_prefix_of_the_marker_is_not_it():
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 env=dict(os.environ, MARK_UNDER_TEST="abc-1"))
    try:
        assert proc_watch.marked("MARK_UNDER_TEST", "abc") == []
        assert proc_watch.end_marked("MARK_UNDER_TEST", "abc", wait=0) == []
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
