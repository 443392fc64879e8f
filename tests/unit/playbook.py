# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests' one way to run a play through real ansible-playbook: the one beside this Python, under the checkout's
ansible.cfg, from the checkout's root, with this Python as the hosts' interpreter."""
import os
import subprocess
import sys

import testpaths

ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def playbook(play, *args, inventory=None, environ=None):
    """Run ``ansible-playbook [-i inventory] play args... -e ansible_python_interpreter=<this Python>`` with
    ``environ`` added to the environment; assert it exited 0 (the output's tail says why not) and return its output
    (stdout and stderr together)."""
    argv = [ANSIBLE_PLAYBOOK] + (["-i", str(inventory)] if inventory is not None else []) + [str(play)]
    argv += [str(a) for a in args] + ["-e", "ansible_python_interpreter=%s" % sys.executable]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(testpaths.REPO, "ansible.cfg"))
    env.update(environ or {})
    run = subprocess.run(argv, cwd=testpaths.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    return run.stdout
