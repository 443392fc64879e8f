# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/cuda's reboot decision (pure; controller side, through the private filter _cuda_reboot_decision).

After a driver install the new kernel module is loaded only by a reboot. Whether to reboot follows the policy
(``cuda_reboot``: never, if_needed, always), whether one is required (something changed, or an earlier run left
its marker, and the loaded driver is not the wanted branch and flavour) and whether the host is serving.
"""

from __future__ import annotations

POLICIES = ("never", "if_needed", "always")
PENDING = "an earlier run installed a driver that is not loaded yet"


def driver_loaded(gpu, branch, flavor):
    """True when ``gpu`` (ansible_facts.gpu) shows the wanted branch loaded, of the wanted flavour (or unknown)."""
    gpu = gpu or {}
    version = str(gpu.get("driver_version") or "")
    return bool(gpu.get("present")) and version.startswith("%s." % branch) \
        and gpu.get("kernel_module_flavor") in (None, flavor)


def serving_units(list_units_stdouts):
    """Unit names from ``systemctl list-units --plain --no-legend`` outputs (one output per pattern, one unit a line)."""
    names = []
    for text in list_units_stdouts:
        for line in (text or "").splitlines():
            words = line.split()
            if words and words[0] not in names:
                names.append(words[0])
    return names


def decide(policy, gpu, branch, flavor, module_changes, marker_exists, serving, reboot_if_serving):
    """``{policy, required, reasons, serving, action}``; action is none, skip-policy, skip-serving or reboot.

    ``module_changes``: why this run needs a reboot (packages that touch the kernel module); ``marker_exists``: an
    earlier run recorded a pending one; ``serving``: what serves right now (unit names, ``port N``).
    """
    if policy not in POLICIES:
        raise ValueError("cuda_reboot=%r is not one of %s: set never, if_needed or always" % (policy, ", ".join(POLICIES)))
    reasons = list(module_changes or [])
    if marker_exists and not reasons:
        reasons.append(PENDING)
    required = bool(reasons) and not driver_loaded(gpu, branch, flavor)
    serving = list(dict.fromkeys(serving or []))
    if policy != "always" and not required:
        action = "none"
    elif policy == "never":
        action = "skip-policy"
    elif serving and not reboot_if_serving:
        action = "skip-serving"
    else:
        action = "reboot"
    return {"policy": policy, "required": required, "reasons": reasons if required else [], "serving": serving,
            "action": action}
