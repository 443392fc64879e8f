# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests' command runner: what host/run.module_runner(module) is on a target, without a module (subprocess is
allowed here: ansible-core's sanity forbids it in plugins/modules and plugins/module_utils only)."""
import os
import subprocess


def local_run(argv, data=None, environ_update=None, timeout=None):
    """``(rc, stdout, stderr)``: rc 124 past ``timeout``, 127 when argv[0] cannot run (as host/run.py)."""
    env = dict(os.environ)
    env.update(environ_update or {})
    try:
        proc = subprocess.run([str(a) for a in argv], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return 124, "", "%s ran past its %s s deadline" % (argv[0], timeout)
    except OSError as exc:
        return 127, "", "cannot run %s: %s" % (argv[0], exc)
    return proc.returncode, proc.stdout, proc.stderr


def shown(result):
    """A module's raw result as the controller shows it: ansible-core 2.22 hands the values to mask over as
    ``_ansible_new_secrets`` and drops that key before anyone sees the result."""
    return {k: v for k, v in result.items() if k != "_ansible_new_secrets"}


_ANSWERS = {}


def remembered_run(argv, data=None, environ_update=None):
    """local_run, but the fake nvidia-smi (tools/fake_nvidia: the same argv under the same FAKE_NVIDIA_* settings
    answers the same) is asked once per session, so tests that gather the same GPU facts many times stay fast. With
    registered compute apps (live pids) it is asked each time."""
    env = dict(os.environ, **(environ_update or {}))
    apps = env.get("FAKE_NVIDIA_APPS") or "/run/fake-nvidia/apps"
    if os.path.basename(os.path.dirname(str(argv[0]))) != "fake_nvidia" or os.path.exists(apps):
        return local_run(argv, data, environ_update)
    key = (tuple(str(a) for a in argv), data,
           tuple(sorted((k, v) for k, v in env.items() if k.startswith("FAKE_NVIDIA") and k != "FAKE_NVIDIA_APPS")))
    if key not in _ANSWERS:
        _ANSWERS[key] = local_run(argv, data, environ_update)
    return _ANSWERS[key]
