# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one command runner of the modules: a program run with a deadline and a cap on what it prints (target side,
stdlib only).

ansible-core 2.21's sanity (pylint ``ansible-bad-function``) refuses ``subprocess`` and ``os.system``/``os.popen``/
``os.spawn*`` in modules and module_utils. The room functions that run a program take a runner
``run(argv, data=None, environ_update=None, timeout=None) -> (rc, stdout, stderr)``; a module hands them
``module_runner(module)``, the tests a local one. ``module.run_command`` has neither a deadline nor a cap (a hung
``nvidia-smi`` hung the module, a 150 MB one was read whole; coreutils ``timeout`` waits for a child stuck in the
driver), so the program is started with ``host/spawn`` in its own process group and read here:

- past its deadline the whole group is killed and the run is rc 124 (``TIMED_OUT``), the words saying so after
  stderr; a program that does not die even then (uninterruptible in the kernel) is left behind after ``GRACE_S``,
  never waited for;
- more than ``cap`` bytes on stdout or stderr (``CAP`` by default) kills the group too: rc 125 (``TOO_BIG``), named;
- a program that cannot start is rc 127 (``NOT_RUN``), never a traceback.
"""
from __future__ import annotations

import os
import selectors
import signal
import tempfile
import time

from ansible_collections.llmserve.sglang.plugins.module_utils.host import spawn

TIMED_OUT = 124
TOO_BIG = 125
NOT_RUN = 127
CAP = 16 << 20   # bytes per stream: nvidia-smi -q of 8 GPUs is ~200 KiB; a pip resolver's log a few MiB
GRACE_S = 5.0    # how long a killed group is waited for before it is left behind
_CHUNK = 65536


def _own_group():
    os.setpgid(0, 0)


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def capture(argv, env=None, data=None, timeout=None, cap=CAP):
    """Run ``argv`` (strings) -> ``(rc, stdout bytes, stderr bytes, why)``; ``why`` names a struck deadline or cap
    (None otherwise). Raises ``FileNotFoundError`` when the program cannot start, as ``host/spawn`` does."""
    stdin = None
    if data is not None:
        stdin = tempfile.TemporaryFile()
        stdin.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
        stdin.seek(0)
    pipes = [os.pipe(), os.pipe()]
    try:
        child = spawn.start(argv, env=env, stdin=stdin.fileno() if stdin else None, stdout=pipes[0][1],
                            stderr=pipes[1][1], setup=_own_group)
    except BaseException:
        for read_end, write_end in pipes:
            os.close(read_end)
            os.close(write_end)
        raise
    finally:
        if stdin is not None:
            stdin.close()
    for _r, write_end in pipes:
        os.close(write_end)
    bufs = {pipes[0][0]: bytearray(), pipes[1][0]: bytearray()}
    deadline = time.monotonic() + timeout if timeout else None
    why = None
    with selectors.DefaultSelector() as sel:
        for fd in bufs:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map() and why is None:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                why = TIMED_OUT
                break
            for key, _mask in sel.select(wait):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                bufs[key.fd] += chunk
                if len(bufs[key.fd]) > cap:
                    why = TOO_BIG
                    break
    for fd in bufs:
        os.close(fd)
    if why is None:  # the output ended: the program has the rest of its deadline to exit
        rc = child.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if rc is None:
            why = TIMED_OUT
    if why is not None:
        _kill_group(child.pid)  # the leader is not reaped yet: the group is still the one started here
        child.wait(GRACE_S)
        rc = why
    out, err = bytes(bufs[pipes[0][0]]), bytes(bufs[pipes[1][0]])
    if why == TOO_BIG:
        out, err = out[:cap], err[:cap]
        why = "%s printed more than %d bytes: refused as no answer of this tool (its process group was killed)" % (
            argv[0], cap)
    elif why == TIMED_OUT:
        why = "%s ran past its %s s deadline and was stopped" % (argv[0], timeout)
    return rc, out, err, why


def module_runner(module, timeout=None, environ_update=None, cap=CAP):
    """A runner for ``module``'s programs; ``timeout`` (s) is the default deadline of each call, ``cap`` the most
    bytes read of stdout and of stderr. The environment is the module's, as ``run_command`` gives it."""
    default_timeout, default_env = timeout, dict(environ_update or {})

    def run(argv, data=None, environ_update=None, timeout=None):
        cmd = [str(a) for a in argv]
        limit = timeout if timeout is not None else default_timeout
        env = dict(os.environ)
        env.update(getattr(module, "run_command_environ_update", None) or {})
        env.update(default_env)
        env.update(environ_update or {})
        try:
            rc, out, err, why = capture(cmd, env=env, data=data, timeout=limit or None, cap=cap)
        except (OSError, IOError) as exc:
            return NOT_RUN, "", "cannot run %s: %s" % (cmd[0], exc)
        out, err = out.decode("utf-8", "surrogateescape"), err.decode("utf-8", "surrogateescape")
        if why:
            err = err + "\n" + why
        return rc, out, err

    return run
