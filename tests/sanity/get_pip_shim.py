# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in for ansible-test's pip bootstrap script.

ansible-test downloads get-pip.py from a host this machine cannot reach. This shim gives
the fresh sanity venv a pip from the interpreter's own ensurepip, then installs what
ansible-test asked for (the get-pip-only flags dropped) with it.
"""
import ensurepip
import os
import subprocess
import sys

saved_env = dict(os.environ)
ensurepip.bootstrap()
# ensurepip points PIP_CONFIG_FILE at /dev/null in this process; the install below must
# read the machine's pip configuration (index, CA bundle) like any other pip run.
os.environ.clear()
os.environ.update(saved_env)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args))
