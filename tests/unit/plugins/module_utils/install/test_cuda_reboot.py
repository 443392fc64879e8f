# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""install/cuda_reboot.py: roles/cuda's reboot decision, every policy against every state that matters."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.install import cuda_reboot as cr

OLD = {"present": True, "driver_version": "570.172.08", "kernel_module_flavor": "open"}
NEW = {"present": True, "driver_version": "580.95.05", "kernel_module_flavor": "open"}
CHANGED = ["driver packages changed"]


def decide(policy="if_needed", gpu=None, changes=None, marker=False, serving=(), if_serving=False):
    return cr.decide(policy, OLD if gpu is None else gpu, "580", "open", CHANGED if changes is None else changes, marker,
                     list(serving), if_serving)


@pytest.mark.parametrize("policy, gpu, changes, marker, serving, if_serving, action, required", [
    ("if_needed", OLD, CHANGED, False, [], False, "reboot", True),
    ("if_needed", NEW, CHANGED, False, [], False, "none", False),        # already loaded (e.g. after a reload)
    ("if_needed", OLD, [], False, [], False, "none", False),             # nothing changed, nothing pending
    ("if_needed", OLD, [], True, [], False, "reboot", True),             # an earlier run's marker
    ("never", OLD, CHANGED, False, [], False, "skip-policy", True),
    ("never", NEW, CHANGED, False, [], False, "none", False),
    ("if_needed", OLD, CHANGED, False, ["sglang-default.service"], False, "skip-serving", True),
    ("if_needed", OLD, CHANGED, False, ["port 30000"], True, "reboot", True),
    ("always", NEW, [], False, [], False, "reboot", False),               # always means always
    ("always", NEW, [], False, ["port 30000"], False, "skip-serving", False),
])
def test_actions(policy, gpu, changes, marker, serving, if_serving, action, required):
    d = decide(policy, gpu, changes, marker, serving, if_serving)
    assert (d["action"], d["required"]) == (action, required)
    assert d["reasons"] == ((changes or [cr.PENDING]) if required else [])


def test_flavour_and_absent_gpus():
    assert not cr.driver_loaded(dict(NEW, kernel_module_flavor="proprietary"), "580", "open")
    assert cr.driver_loaded(dict(NEW, kernel_module_flavor=None), "580", "open")   # flavour unknown: trust the branch
    assert not cr.driver_loaded({"present": False}, "580", "open")
    assert not cr.driver_loaded(dict(NEW, driver_version="5800.1"), "580", "open")


def test_serving_units_reads_every_line():
    out = ("sglang-a.service loaded active running SGLang a\n"
           "sglang-b.service loaded active running SGLang b\n")
    assert cr.serving_units([out, "", None, out]) == ["sglang-a.service", "sglang-b.service"]


def test_a_bad_policy_names_the_fix():
    with pytest.raises(ValueError, match="set never, if_needed or always"):
        decide("sometimes")
