# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server/layout.py: the service-manager rule and the instance's directories, shared by the plan and server_info."""
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout
from ansible_collections.llmserve.sglang.plugins.module_utils.server.layout import paths


def test_auto_follows_the_host():
    assert layout.resolve_manager("auto", "systemd") == ("systemd", None)
    assert layout.resolve_manager("auto", "sysvinit") == ("pidfile", None)
    assert layout.resolve_manager("auto", None) == ("systemd", None)   # no fact: systemd, as ansible assumes


def test_explicit_choices():
    assert layout.resolve_manager("pidfile", "systemd") == ("pidfile", None)
    manager, problem = layout.resolve_manager("systemd", "openrc", "gpu1")
    assert manager == "systemd" and "gpu1 runs openrc" in problem and "auto or pidfile" in problem
    assert layout.resolve_manager("upstart", "systemd") == ("systemd", None)  # validate() refuses the value itself


def test_dirs_in_creation_order():
    p = paths({"instance": "kimi", "config_dir": "/etc/sglang", "log_dir": "/var/log/sglang"})
    dirs = layout.instance_dirs("/var/lib/sglang", "/etc/sglang", "/var/log/sglang", p, "sglang", "sglang")
    assert [d[0] for d in dirs] == ["/var/lib/sglang", "/etc/sglang", "/etc/sglang/kimi", "/etc/sglang/kimi/previous",
                                    "/var/log/sglang", "/run/llmserve-sglang/kimi", "/usr/local/lib/llmserve-sglang"]
    assert dirs[0][1:] == ("sglang", "sglang", "0750") and dirs[2][1:] == ("root", "sglang", "0750")
