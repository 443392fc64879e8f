# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start a program that ``run_command`` cannot run (target side, stdlib only).

``module.run_command`` (``host/run.py``) waits for its program to end. Two starts cannot: a program left running
after the module exits (the multi-node peer watch, in its own session) and a transfer watched every second against
its deadline while it runs (models/stage). ansible-core 2.21's sanity refuses ``subprocess`` and ``os.spawn*``/
``os.posix_spawn`` in module_utils, so these two fork and exec as ``subprocess`` itself does: the child only moves
file descriptors, runs ``setup`` (a few os calls) and execs. A program not on PATH raises ``FileNotFoundError`` in the
caller, as ``subprocess.Popen`` does.
"""
from __future__ import annotations

import os
import shutil
import signal
import time


def exit_code(status):
    """``os.waitpid`` status -> return code as subprocess reports it (negative: killed by that signal)."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


class Child(object):
    """A started program: ``poll``, ``wait``, ``terminate``, ``kill`` as on ``subprocess.Popen``."""

    def __init__(self, pid):
        self.pid = pid
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except OSError:  # reaped elsewhere
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = exit_code(status)
        return self.returncode

    def wait(self, timeout=None):
        """The return code, or None when it still runs after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        return self.returncode

    def send_signal(self, sig):
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except OSError:
                pass

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)


def start(argv, env=None, stdin=None, stdout=None, stderr=None, cwd=None, new_session=False, setup=None):
    """Fork and exec ``argv``; stdin/stdout/stderr are file descriptors (None: /dev/null). Returns a ``Child``."""
    path_var = (env if env is not None else os.environ).get("PATH")
    exe = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=path_var)
    if not exe or not os.access(exe, os.X_OK):
        raise FileNotFoundError("No such file or directory: %r" % (argv[0],))
    try:
        max_fd = os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        max_fd = 4096
    pid = os.fork()
    if pid == 0:  # the child: os calls only, then exec; any failure ends it with 127
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(null if fd is None else fd, target)
            if new_session:
                os.setsid()
            if cwd:
                os.chdir(cwd)
            if setup:
                setup()
            os.closerange(3, max_fd)
            os.execve(exe, list(argv), dict(os.environ) if env is None else env)
        finally:
            os._exit(127)  # pylint: disable=protected-access
    return Child(pid)
