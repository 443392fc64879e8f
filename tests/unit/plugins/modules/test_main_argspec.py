# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The modules of the modules/main mutation room take exactly the options they document - type, default, elements,
choices, required, suboptions - as ansible-test validate-modules holds them to, and mark as secret only their
secrets: what users write in a task is what main() accepts."""
import importlib

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

# module -> its options' no_log (True: a secret, never logged nor returned; False: said not to be one)
MODULES = {
    "server_ready": {"api_key": True, "resume_state": False},
    "owned_dir": {},
    "server_instance": {"files": False, "peer_watch": False},  # a secret file's content is hidden by the role's no_log
}


class _Built(Exception):
    pass


def built(name, monkeypatch):
    """The module and what its main() hands to AnsibleModule (caught there, nothing runs)."""
    mod = importlib.import_module("ansible_collections.llmserve.sglang.plugins.modules." + name)

    def catch(**kw):
        raise _Built(kw)

    monkeypatch.setattr(mod, "AnsibleModule", catch)
    with patch_module_args({}):
        with pytest.raises(_Built) as got:
            mod.main()
    return mod, got.value.args[0]


def documented_options(mod):
    doc = yaml.safe_load(mod.DOCUMENTATION)
    options = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        name = fragment.rpartition(".")[2]
        frag = importlib.import_module("ansible_collections.llmserve.sglang.plugins.doc_fragments." + name)
        options.update(yaml.safe_load(frag.ModuleDocFragment.DOCUMENTATION).get("options") or {})
    options.update(doc["options"])
    return options


def spec_of(doc_options):
    """The argument spec the documentation promises."""
    spec = {}
    for name, doc in doc_options.items():
        want = {"type": doc.get("type", "str")}
        for key in ("default", "elements", "choices"):
            if key in doc:
                want[key] = doc[key]
        if doc.get("required"):
            want["required"] = True
        if "suboptions" in doc:
            want["options"] = spec_of(doc["suboptions"])
        spec[name] = want
    return spec


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_argument_spec_is_the_documented_one(name, monkeypatch):
    mod, kw = built(name, monkeypatch)
    got = kw["argument_spec"]
    no_log = dict((k, got[k].pop("no_log")) for k in list(got) if "no_log" in got[k])
    assert no_log == MODULES[name]
    assert got == spec_of(documented_options(mod))
    assert kw["supports_check_mode"] is True


def test_server_readys_watched_process_options_exclude_each_other(monkeypatch):
    _mod, kw = built("server_ready", monkeypatch)
    assert kw["mutually_exclusive"] == [("unit", "pid", "pid_file")]
    assert set(kw) == {"argument_spec", "mutually_exclusive", "supports_check_mode"}


@pytest.mark.parametrize("name", ["owned_dir", "server_instance"])
def test_no_other_constraint(name, monkeypatch):
    _mod, kw = built(name, monkeypatch)
    assert set(kw) == {"argument_spec", "supports_check_mode"}
