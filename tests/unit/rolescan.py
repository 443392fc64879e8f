# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scan behind "a role's tasks read its plan, not its raw settings" (roles/server, roles/router): which
``<role>_<setting>`` variables a role's files read raw."""
import os
import re

import testpaths


def texts(role, folders):
    """``(folder/name, text)`` of each file in ``folders`` of roles/<role>, in name order."""
    for folder in folders:
        path = os.path.join(testpaths.REPO, "roles", role, folder)
        for name in sorted(os.listdir(path)):
            with open(os.path.join(path, name)) as handle:
                yield "%s/%s" % (folder, name), handle.read()


def raw_reads(text, role, settings):
    """The ``settings`` that ``text`` reads raw as ``<role>_<setting>`` (comment lines and `` # `` comments left
    out; ``.<role>_x``, a key of something else, is no read)."""
    raw = re.compile(r"(?<![.\w])%s_([a-z0-9_]+)" % role)
    found = set()
    for line in text.splitlines():
        if line.strip().startswith("#"):
            continue
        found.update(m.group(1) for m in raw.finditer(line.split(" # ")[0]) if m.group(1) in settings)
    return found


def scan(role, folders, settings):
    """``folder/name`` -> the settings it reads raw, for each file of ``folders`` of roles/<role> that reads any."""
    out = {}
    for rel, text in texts(role, folders):
        found = raw_reads(text, role, settings)
        if found:
            out[rel] = found
    return out
