#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sglang_install_plan
short_description: Read what an installed SGLang requires and decide the rest of its install (torch reuse, exact wheelhouse)
version_added: "0.1.0"
description:
  - Runs O(python) (a virtualenv's interpreter, where C(sglang) is already installed without dependencies) to read
    the C(sglang) wheel's C(Requires-Dist) and the torch family that interpreter sees.
  - Groups the requirements into the torch family (C(torch), C(torchvision), C(torchaudio)), the kernel package
    (C(sgl-kernel)/C(sglang-kernel)) and FlashInfer, for the role's next C(pip) calls.
  - With O(reuse_torch), the torch already visible to the virtualenv (a base interpreter's) must satisfy sglang's
    pin; otherwise the module fails saying what was found, what is needed and how to fix it.
  - With O(exact), lists the wheels in O(wheelhouse) for an install of exactly those files (no dependency
    resolution) and fails when a project appears twice or the sglang wheel is missing or of another version.
  - With O(settings) (roles/sglang's settings), also returns the pip commands that follow, in RV(pip), so the role
    only runs them.
  - Reads only; changes nothing.
options:
  python:
    description: Interpreter of the virtualenv (C(<venv>/bin/python)).
    type: path
    required: true
  version:
    description: The SGLang version wanted (C(sglang_version)); the wheelhouse's sglang wheel must have it.
    type: str
    required: true
  reuse_torch:
    description: Torch comes from the base interpreter (not installed); check it against sglang's pin.
    type: bool
    default: false
  base_python:
    description: The base interpreter whose torch is reused, named in messages.
    type: str
    default: ""
  exact:
    description: Install exactly the wheels of O(wheelhouse) (C(pip install --no-index --no-deps <wheels>)).
    type: bool
    default: false
  wheelhouse:
    description: Folder of wheels on the host (needed with O(exact)).
    type: path
  torch_family:
    description: Distributions treated as the torch family.
    type: list
    elements: str
    default: [torch, torchvision, torchaudio]
  kernel_packages:
    description: Distributions treated as SGLang's kernel package.
    type: list
    elements: str
    default: [sgl-kernel, sglang-kernel]
  settings:
    description:
      - roles/sglang's install settings (C(version), C(venv), C(torch_index_url), C(kernel_index_url), the wheelhouse
        and index settings, C(flashinfer_extra), C(flashinfer_prebuilt_packages), C(extra_packages),
        C(install_dependencies), C(force_reinstall), C(exact)); with them the module returns RV(pip).
    type: dict
attributes:
  check_mode:
    support: full
    description: Reads only, in check mode too.
  diff_mode:
    support: none
    description: Changes nothing.
notes:
  - A reused torch matches a pin like C(torch==2.11.0) with a local build label (C(2.11.0+cu130)), as PEP 440 says.
  - Missing C(torchvision)/C(torchaudio) next to a reused torch are returned in RV(torch_install) (installed
    against the reused torch) unless O(exact), where they are only reported in RV(notes).
author:
  - llmserve maintainers (@llmserve)
"""

EXAMPLES = r"""
- name: Decide the rest of the install (torch from /opt/torch/.venv, a hand-made wheelhouse)
  llmserve.sglang.sglang_install_plan:
    python: /opt/sglang/venvs/0.5.15.post1/bin/python
    version: "0.5.15.post1"
    reuse_torch: true
    base_python: /opt/torch/.venv/bin/python3
    exact: true
    wheelhouse: /opt/wheels
  register: plan
"""

RETURN = r"""
version:
  description: The installed sglang version.
  returned: always
  type: str
  sample: 0.5.15.post1
requires_python:
  description: sglang's Requires-Python.
  returned: always
  type: str
torch:
  description: sglang's torch-family requirements.
  returned: always
  type: list
  elements: str
  sample: [torch==2.11.0, torchaudio==2.11.0, torchvision]
kernel:
  description: sglang's kernel-package requirements.
  returned: always
  type: list
  elements: str
  sample: [sglang-kernel==0.4.4]
flashinfer:
  description: sglang's FlashInfer requirements.
  returned: always
  type: list
  elements: str
  sample: ["flashinfer_python[cu13]==0.6.12", flashinfer_cubin==0.6.12]
installed:
  description: Torch-family versions the virtualenv sees (null when absent).
  returned: always
  type: dict
  sample: {torch: 2.11.0+cu130, torchvision: null, torchaudio: null}
torch_install:
  description: Torch-family specs the role installs next (all of them unless torch is reused; none when exact).
  returned: always
  type: list
  elements: str
wheels:
  description: With O(exact), the wheel files to install, one per project.
  returned: always
  type: list
  elements: str
notes:
  description: What was reused or left out, for the log.
  returned: always
  type: list
  elements: str
pip:
  description:
    - The pip commands after sglang itself, each an argv list, empty when it is not to run - C(torch) (the torch
      family from the CUDA index, or the wheelhouse), C(exact) (the wheelhouse's wheels, no resolution) and C(rest)
      (dependencies, kernel package, FlashInfer with its extra, prebuilt and extra packages).
  returned: when O(settings) is given
  type: dict
  sample: {torch: [], exact: [], rest: [/opt/sglang/venvs/0.5.23/bin/python, -m, pip, install, sglang==0.5.23]}
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner

from ansible_collections.llmserve.sglang.plugins.module_utils.install.plan import (
    READ_SCRIPT, pip_argv, plan, read_json_output)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type="path", required=True),
            version=dict(type="str", required=True),
            reuse_torch=dict(type="bool", default=False),
            base_python=dict(type="str", default=""),
            exact=dict(type="bool", default=False),
            wheelhouse=dict(type="path"),
            torch_family=dict(type="list", elements="str", default=["torch", "torchvision", "torchaudio"]),
            kernel_packages=dict(type="list", elements="str", default=["sgl-kernel", "sglang-kernel"]),
            settings=dict(type="dict"),
        ),
        required_if=[("exact", True, ("wheelhouse",))],
        supports_check_mode=True,
    )
    p = module.params
    rc, out, err = module_runner(module, timeout=300)([p["python"], "-c", READ_SCRIPT, json.dumps(p["torch_family"])])
    if rc != 0:
        module.fail_json(msg="could not read the virtualenv's packages with %s (rc=%d): %s"
                         % (p["python"], rc, (err or out).strip()[-2000:]))
    try:
        facts = read_json_output(out)
    except ValueError as e:
        module.fail_json(msg="unreadable answer from %s: %s: %r" % (p["python"], e, out[-500:]))
    files = []
    if p["exact"]:
        try:
            files = [os.path.join(p["wheelhouse"], f) for f in os.listdir(p["wheelhouse"]) if f.endswith(".whl")]
        except OSError as e:
            module.fail_json(msg="cannot list the wheelhouse %s: %s" % (p["wheelhouse"], e))
    result = plan(facts, p["version"], p["reuse_torch"], p["base_python"] or p["python"], p["exact"], files,
                  p["torch_family"], p["kernel_packages"])
    errors = result.pop("errors")
    if errors:
        module.fail_json(msg=" ".join(errors), **result)
    if p["settings"]:
        result["pip"] = pip_argv(p["settings"], result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
