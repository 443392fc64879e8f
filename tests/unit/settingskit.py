# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests of a role's declared settings share (plugin_utils/_<role>_settings.py and the files
tools/settings/server_settings.py generates from it: roles/server and roles/router)."""
import copy
import os
import sys

import yaml

import testpaths

sys.path.insert(0, os.path.join(testpaths.REPO, "tools", "settings"))
import server_settings  # noqa: E402  pylint: disable=wrong-import-position


def assert_fresh(table, check_argv, fix):
    """The checkout's generated files are the declaration's, by sync() and by the tool's --check (``check_argv``);
    ``fix`` says what to run when they are not."""
    assert server_settings.sync(testpaths.REPO, table, write=False) == [], fix
    assert server_settings.main(check_argv) == 0


def stale_after_a_port_change(tmp_path, monkeypatch, table, files):
    """Copy the role's generated ``files`` into ``tmp_path`` and move the declared port's default to 31000: sync()
    rewrites every one of them and then finds them fresh. Returns them as rewritten, parsed."""
    for rel in files:
        os.makedirs(str(tmp_path / os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(testpaths.REPO, rel)) as src, open(str(tmp_path / rel), "w") as dst:
            dst.write(src.read())
    port = copy.copy(table.BY_NAME["port"])
    port.default = 31000
    monkeypatch.setattr(table, "TABLE", tuple(port if s.name == "port" else s for s in table.TABLE))
    monkeypatch.setattr(table, "BY_NAME", dict((s.name, s) for s in table.TABLE))
    assert server_settings.sync(str(tmp_path), table, write=True) == list(files)
    assert server_settings.sync(str(tmp_path), table, write=False) == []
    parsed = []
    for rel in files:
        with open(str(tmp_path / rel)) as f:
            parsed.append(yaml.safe_load(f))
    return parsed
