#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: model_plan
short_description: Check the model list and decide, for this host, where each model is fetched from
version_added: "0.1.0"
description:
  - Pure decision, nothing is read or changed on the host. Every problem of the list is named at once - an unknown
    C(kind), a relative path, a C(revision) that is not a commit sha while O(require_pinned) is set, a C(token)
    given inline (its value is never printed), duplicate names or destinations, two targets.
  - With O(fanout), the seed host fetches every model from its source (phase 1) and every other host copies the
    seed's verified tree with rsync over SSH (phase 2), so N hosts do not fetch N times from the Hub or the
    artifact server. Without it every host fetches from the source in phase 1.
author:
  - llmserve maintainers (@llmserve)
options:
  models:
    description: The models, as llmserve.sglang.model_stage takes each.
    type: list
    elements: dict
    required: true
  require_pinned:
    description: Refuse a C(hub) C(revision) that is not a 40-hex commit sha.
    type: bool
    default: false
  fanout:
    description: Copy from the seed host instead of fetching on every host.
    type: bool
    default: false
  host:
    description: This host's inventory name.
    type: str
    default: ""
  seed:
    description: The seed's inventory name.
    type: str
    default: ""
  seed_address:
    description: Address the other hosts reach the seed at over SSH.
    type: str
    default: ""
  ssh:
    description: C(ssh_user), C(ssh_port), C(ssh_key) the other hosts use to reach the seed.
    type: dict
    default: {}
notes:
  - Check mode is supported.
"""

EXAMPLES = r"""
- name: Plan the transfers
  llmserve.sglang.model_plan:
    models: "{{ models_list }}"
    require_pinned: true
    fanout: true
    host: "{{ inventory_hostname }}"
    seed: gpu1
    seed_address: 10.0.0.11
  register: __models_plan
"""

RETURN = r"""
models:
  description: Each model as this host stages it, with C(phase) (1 - from the source, 2 - from the seed).
  returned: always
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.models.plan import (
    PlanError, fanout, inline_tokens, validate)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            models=dict(type="list", elements="dict", required=True),
            require_pinned=dict(type="bool", default=False),
            fanout=dict(type="bool", default=False),
            host=dict(type="str", default=""),
            seed=dict(type="str", default=""),
            seed_address=dict(type="str", default=""),
            ssh=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    p = module.params
    # A token given inline is refused below; its value must not come back in the invocation either.
    module.no_log_values.update(inline_tokens(p["models"]))
    try:
        models = validate(p["models"], p["require_pinned"])
    except PlanError as e:
        module.fail_json(msg=str(e))
    if p["fanout"] and not (p["seed"] and p["seed_address"]):
        module.fail_json(msg="fan-out needs the seed host and the address the others reach it at "
                             "(models_fanout_seed, models_fanout_address)")
    planned = []
    for model in models:
        mine = fanout(model, p["host"], p["seed"], p["seed_address"], p["fanout"])
        if mine is not model:
            mine.update(dict((k, v) for k, v in (p["ssh"] or {}).items() if v))
        mine["phase"] = 2 if mine is not model else 1
        planned.append(mine)
    module.exit_json(changed=False, models=planned)


if __name__ == "__main__":
    main()
