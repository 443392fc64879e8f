# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One option family for the instance (server/layout.INSTANCE_SPEC): server_info, server_drift, server_instance and
server_lock take instance, config_dir, log_dir, manager and paths from it - one set of managers (auto resolved on
the host) - and document the same choices and default."""
import importlib

import pytest
import yaml

from ansible_collections.llmserve.sglang.plugins.doc_fragments.server_instance import ModuleDocFragment
from ansible_collections.llmserve.sglang.plugins.module_utils.server import layout

MODULES = ("server_info", "server_drift", "server_instance", "server_lock")


class _Spec(Exception):
    pass


def argument_spec(name, monkeypatch):
    """The argument spec the module hands to AnsibleModule (caught there, nothing runs)."""
    mod = importlib.import_module("ansible_collections.llmserve.sglang.plugins.modules." + name)

    def catch(argument_spec, **_kw):
        raise _Spec(argument_spec)

    monkeypatch.setattr(mod, "AnsibleModule", catch)
    with pytest.raises(_Spec) as got:
        mod.main()
    return got.value.args[0], mod


def documented(mod):
    doc = yaml.safe_load(mod.DOCUMENTATION)
    options = dict(doc["options"])
    if "llmserve.sglang.server_instance" in (doc.get("extends_documentation_fragment") or []):
        for key, value in yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"].items():
            options[key] = dict(value, **options.get(key, {}))
    return options


@pytest.mark.parametrize("name", MODULES)
def test_the_instance_options_are_the_one_spec(name, monkeypatch):
    spec, mod = argument_spec(name, monkeypatch)
    shared = [k for k in layout.INSTANCE_SPEC if k in spec]
    assert "manager" in shared
    for key in shared:
        assert spec[key] == layout.INSTANCE_SPEC[key], (name, key)
        doc = documented(mod)[key]
        assert doc.get("type") == spec[key]["type"] and doc.get("default") == spec[key].get("default"), (name, key)
        assert doc.get("choices") == spec[key].get("choices"), (name, key)
    assert spec["manager"]["choices"] == ["auto", "systemd", "pidfile"] and spec["manager"]["default"] == "auto"


def test_the_four_modules_agree(monkeypatch):
    managers = [argument_spec(name, monkeypatch)[0]["manager"] for name in MODULES]
    assert all(m == managers[0] for m in managers)


def test_a_copy_per_module():
    spec = layout.instance_spec(("manager",), timeout=dict(type="int"))
    spec["manager"]["choices"].append("upstart")
    assert layout.INSTANCE_SPEC["manager"]["choices"] == ["auto", "systemd", "pidfile"]
    assert sorted(spec) == ["manager", "timeout"]


@pytest.mark.parametrize("setting, detected, manager", [
    ("auto", "systemd", "systemd"), ("auto", "other", "pidfile"), ("pidfile", "systemd", "pidfile"),
    ("systemd", "systemd", "systemd")])
def test_auto_resolves_on_the_host(setting, detected, manager):
    assert layout.resolve_manager(setting, detected)[0] == manager
