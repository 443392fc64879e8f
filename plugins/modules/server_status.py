#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: server_status
short_description: Ask a running SGLang server whether it is ready, what it serves and its accept length
version_added: "0.1.0"
description:
  - Runs on the target host against an SGLang server, through the collection's one SGLang client.
  - Asks the readiness endpoint (O(health_path), else the one O(sglang_version) has - C(/ready) from 0.5.20,
    C(/health) before - else C(/ready) with C(/health) where the server lacks it); only a ready server is asked
    C(/model_info) and C(/server_info), each falling back to its old name (C(/get_model_info), C(/get_server_info)).
  - Never fails on what the server answers (not ready, an error, no answer) - that is the status it reports.
  - roles/server's C(tasks_from=status) (the status playbook) uses it.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_endpoint
  - llmserve.sglang.attributes.read_only
options:
  health_path:
    description: The readiness endpoint, as the instance's view has it (C(server_view.health_path)).
    type: str
  sglang_version:
    description: The server's SGLang version, which picks the readiness endpoint when O(health_path) is not given.
    type: str
  log_path:
    description:
      - The server's log (C(server_view.paths.log)). Where C(/ready) answers 503 and C(/model_info) still answers,
        a C(Health check failed) line logged since the last start means the health latch (RV(latch)).
    type: path
  timeout:
    description: Seconds each question may take (at least 2 - SGLang takes up to its own 1 s to answer C(/health)).
    type: float
    default: 10
"""

EXAMPLES = r"""
- name: Ask the server whether it is ready and what it serves
  llmserve.sglang.server_status:
    url: http://127.0.0.1:30000
    health_path: /ready
  register: __status

- name: Report it
  ansible.builtin.debug:
    msg: "{{ 'READY' if __status.ready else 'NOT READY' }}, model {{ __status.model_path }}"
"""

RETURN = r"""
ready:
  description: Whether the readiness endpoint answered 200.
  type: bool
  returned: always
  sample: true
health:
  description: The readiness question - C(path) asked, C(status) (null when nothing answered), C(answer) in words
    (C(200), C(HTTP 503), or why nothing answered).
  type: dict
  returned: always
  sample: {"path": "/ready", "status": 200, "answer": "200"}
latch:
  description:
    - The health latch - C(latched) (a health check failed and C(/ready) answers 503 while the process serves),
      C(serving) (C(/model_info) answered; null when not asked), C(line) (the last C(Health check failed) log line
      since the start), C(note) in words. Asked only where C(/ready) answered 503.
  type: dict
  returned: always
  sample: {"latched": false, "serving": null, "line": null, "note": null}
allreduce_tuning:
  description:
    - What the last start did with FlashInfer's PCIe-IPC all-reduce tuning, from O(log_path) - C(state)
      (C(tuned) - measured and saved, C(reused) - loaded from the compile cache, C(seed) - not tuned, C(unknown)),
      C(line) (the log line that says so) and C(path) (the tuning file); null without O(log_path) or when the start
      did not use the PCIe-IPC all-reduce.
  type: dict
  returned: always
  sample: {"state": "reused", "line": "[Autotuner]: Loaded 24 configs from /var/lib/sglang/...", "path": "/var/lib/sglang/..."}
model:
  description: What C(/model_info) answered (empty when not ready or not answered).
  type: dict
  returned: always
server_info:
  description: What C(/server_info) answered (empty when not ready or not answered).
  type: dict
  returned: always
answers:
  description: What each of C(/model_info) and C(/server_info) answered, by the path that was asked last.
  type: dict
  returned: always
  sample: {"/model_info": "200", "/server_info": "200"}
accept_length:
  description: The speculative accept length, the mean over DP ranks of C(/server_info) (null when not reported).
  type: float
  returned: always
  sample: 2.9
model_path:
  description: The model the server serves (C(/model_info), else C(/server_info)).
  type: str
  returned: always
  sample: /models/kimi
served_model_name:
  description: The name it serves the model under.
  type: str
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.server import status
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client, endpoint_spec, key_problem


def main():
    module = AnsibleModule(
        argument_spec=endpoint_spec(
            health_path=dict(type="str"),
            sglang_version=dict(type="str"),
            log_path=dict(type="path"),
            timeout=dict(type="float", default=10),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if key_problem(p["api_key"]):  # before any request: http.client would quote the key into a traceback
        module.fail_json(msg=key_problem(p["api_key"]))
    if p["timeout"] < gates.MIN_PROBE_TIMEOUT_S:
        module.fail_json(msg="timeout=%s: give at least %g s (SGLang takes up to its own %g s to answer /health)"
                         % (p["timeout"], gates.MIN_PROBE_TIMEOUT_S, gates.SGLANG_HEALTH_BUDGET_S))
    if p["health_path"] and not p["health_path"].startswith("/"):
        module.fail_json(msg="health_path %r must start with '/' (e.g. /ready)" % p["health_path"])
    try:
        client = Client(p["url"], p["api_key"])
    except ValueError as exc:
        module.fail_json(msg="url: %s" % exc)
    answer = status.read(client, p["health_path"], p["sglang_version"], p["timeout"], p["log_path"])
    module.exit_json(changed=False, **answer)


if __name__ == "__main__":
    main()
