#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: wheel_placeholder
short_description: Write metadata-only wheels standing for packages a host already has, for pip resolution
version_added: "0.1.0"
description:
  - Writes, into O(dest), one wheel per O(packages) entry with only its name and version (no files, no
    dependencies).
  - >-
    Used by C(playbooks/sglang_wheelhouse.yml) with C(--find-links) when resolving for a host that reuses its own
    torch; pip then checks every pin against the host's torch version and does not fetch torch's own
    dependencies. The placeholders are never installed and never copied to a host.
  - Also writes C(constraints.txt) in O(dest) pinning each package to exactly that version, so that a requirement
    such as C(torch>=1.5) resolves to the host's version and not to a newer one from an index.
options:
  dest:
    description: Folder to write into (created when missing).
    type: path
    required: true
  packages:
    description: 'Packages as C({name, version}), e.g. C({name: torch, version: 2.11.0+cu130}).'
    type: list
    elements: dict
    required: true
attributes:
  check_mode:
    support: full
    description: Says what it would write.
  diff_mode:
    support: none
    description: Writes no file that a diff would show.
author:
  - llmserve maintainers (@llmserve)
"""

EXAMPLES = r"""
- name: Stand-in for the host's torch during resolution
  llmserve.sglang.wheel_placeholder:
    dest: /tmp/resolve/placeholders
    packages: [{name: torch, version: 2.11.0+cu130}]
"""

RETURN = r"""
constraints:
  description: The constraints file (C(name==version) per package), for C(pip -c).
  returned: always
  type: str
paths:
  description: The placeholder wheels.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.install.wheelhouse import placeholder_wheel


def main():
    module = AnsibleModule(
        argument_spec=dict(dest=dict(type="path", required=True),
                           packages=dict(type="list", elements="dict", required=True)),
        supports_check_mode=True,
    )
    dest = module.params["dest"]
    paths, changed = [], False
    for p in module.params["packages"]:
        if not p.get("name") or not p.get("version"):
            module.fail_json(msg="each package needs a name and a version, got %r" % (p,))
        if module.check_mode:
            paths.append(os.path.join(dest, "%s-%s (placeholder)" % (p["name"], p["version"])))
            changed = True
            continue
        if not os.path.isdir(dest):
            os.makedirs(dest)
        path, wrote = placeholder_wheel(dest, str(p["name"]), str(p["version"]))
        paths.append(path)
        changed = changed or wrote
    constraints = os.path.join(dest, "constraints.txt")
    if not module.check_mode:
        text = "".join("%s==%s\n" % (p["name"], p["version"]) for p in module.params["packages"])
        old = None
        if os.path.exists(constraints):
            with open(constraints) as fh:
                old = fh.read()
        if old != text:
            with open(constraints, "w") as fh:
                fh.write(text)
            changed = True
    module.exit_json(changed=changed, paths=paths, constraints=constraints)


if __name__ == "__main__":
    main()
