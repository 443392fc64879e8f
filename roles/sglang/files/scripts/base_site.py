# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run with the base interpreter whose torch is reused: print, as JSON, the site dirs it sees. For a base that is
# itself a virtualenv these are its own site-packages (plus the system's when it includes them), which a
# `venv --system-site-packages` made from it would NOT see: that only reaches sys.base_prefix.
import json
import os
import site
import sys

# Only dirs that exist: Debian's site.py also names local/ and dist-packages dirs a venv never has.
print(json.dumps({"site": [d for d in site.getsitepackages() if os.path.isdir(d)], "prefix": sys.prefix,
                  "base_prefix": getattr(sys, "base_prefix", sys.prefix),
                  "version": "%d.%d.%d" % sys.version_info[:3]}))
