"""Stand-in for ansible-test's pip bootstrap script.

ansible-test downloads get-pip.py from a host this machine cannot reach. This shim gives
the fresh sanity venv a pip from the interpreter's own ensurepip, points that venv's pip at
the system CA bundle (ansible-test runs pip with a scrubbed environment, and package
indexes here sit behind a TLS-intercepting proxy), then installs what ansible-test asked
for, the get-pip-only flags dropped.
"""
import ensurepip
import os
import subprocess
import sys

BUNDLE = "/etc/ssl/certs/ca-certificates.crt"

ensurepip.bootstrap()
if os.path.exists(BUNDLE):
    with open(os.path.join(sys.prefix, "pip.conf"), "w") as conf:
        conf.write("[global]\ncert = %s\n" % BUNDLE)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args))
