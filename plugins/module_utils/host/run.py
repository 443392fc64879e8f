# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one command runner of the modules: ``module.run_command`` with a deadline (target side, stdlib only).

ansible-core 2.21's sanity (pylint ``ansible-bad-function``) refuses ``subprocess`` and ``os.system``/``os.popen``/
``os.spawn*`` in modules and module_utils: "Call run_command instead". The room functions that run a program take a
runner ``run(argv, data=None, environ_update=None, timeout=None) -> (rc, stdout, stderr)``; a module hands them
``module_runner(module)``, the tests a local one. ``run_command`` has no deadline: coreutils ``timeout`` (present on
every supported host) gives one, rc 124 when it struck. A program that cannot start is rc 127, never a traceback.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

TIMED_OUT = 124
NOT_RUN = 127


def module_runner(module, timeout=None, environ_update=None):
    """A runner over ``module.run_command``; ``timeout`` (s) is the default deadline of each call."""
    timeout_bin = module.get_bin_path("timeout")
    default_timeout, default_env = timeout, dict(environ_update or {})

    def run(argv, data=None, environ_update=None, timeout=None):
        cmd = [str(a) for a in argv]
        limit = timeout if timeout is not None else default_timeout
        if limit and timeout_bin:
            cmd = [timeout_bin, "-k", "5", "%d" % max(1, int(limit + 0.999))] + cmd
        env = dict(default_env)
        env.update(environ_update or {})
        try:
            rc, out, err = module.run_command(cmd, data=data, binary_data=data is not None, environ_update=env or None,
                                              expand_user_and_vars=False, errors="surrogate_or_replace",
                                              handle_exceptions=False)
        except (OSError, IOError) as exc:
            return NOT_RUN, "", "cannot run %s: %s" % (cmd[0], exc)
        if rc == TIMED_OUT and limit and timeout_bin:
            err = (err or "") + "\n%s ran past its %s s deadline and was stopped" % (argv[0], limit)
        return rc, out, err

    return run
