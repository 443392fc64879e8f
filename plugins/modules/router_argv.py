#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: router_argv
short_description: The gateway's command line, checked against the installed launcher's own --help
version_added: "0.1.0"
description:
  - Runs C(<python> -m <package>.launch_router --help) in the gateway's venv (read-only - argparse prints and
    exits), reads the options it lists, and renders the launcher argv from the role's settings.
  - O(flags) are settings every supported package takes; O(optional) are the role's defaults that only newer
    packages take (C(--health-check-port) in smg), left out with a note when the installed one lacks them;
    O(extra) are the user's C(router_args), refused when the installed launcher does not list them.
  - A value outside an option's choices (C(--policy)) is refused, naming the choices the installed package has.
author:
  - llmserve maintainers (@llmserve)
options:
  python:
    description: The venv's Python (C(<router_venv>/bin/python)).
    type: path
    required: true
  package:
    description: The gateway package installed in the venv.
    type: str
    choices: [smg, sglang-router]
    default: smg
  version:
    description: Its installed version, for the messages only.
    type: str
    default: ""
  worker_urls:
    description: The workers' URLs (C(--worker-urls)).
    type: list
    elements: str
    required: true
  worker_urls_in_env:
    description:
      - The worker URLs reach the launcher through its 0600 environment file (C(ROUTER_WORKER_URLS), roles/router's
        C(router_worker_credentials=env_file)), so the argv has no C(--worker-urls) and O(worker_urls) may be empty.
    type: bool
    default: false
  flags:
    description: Flags and values every supported package takes (C(true) is a bare flag, a list several values).
    type: dict
    default: {}
  optional:
    description: Flags and values left out, with a note in RV(left_out), when the installed package lacks the flag.
    type: dict
    default: {}
  extra:
    description: The user's flags and values (C(router_args)); refused when the installed package lacks the flag.
    type: dict
    default: {}
extends_documentation_fragment:
  - llmserve.sglang.attributes.read_only
attributes:
  check_mode:
    support: full
    description: Reads only. When the venv does not exist yet (check mode before the install), the argv is rendered
      unchecked and RV(checked) is false.
seealso:
  - module: llmserve.sglang.server_plan
"""

EXAMPLES = r"""
- name: Render the gateway's argv from the installed smg's --help
  llmserve.sglang.router_argv:
    python: /opt/sglang-router/venv-smg/bin/python
    package: smg
    version: 1.13.0
    worker_urls: [http://10.0.0.1:30000, http://10.0.0.2:30000]
    flags:
      port: 30080
      policy: cache_aware
      health-check-endpoint: /ready
      health-check-interval-secs: 5
    optional:
      health-check-port: 30081
  register: __router_argv
"""

RETURN = r"""
argv:
  description: The launcher's arguments (after C(-m <package>.launch_router)).
  returned: success
  type: list
  elements: str
left_out:
  description: Optional flags the installed package does not have, C([{flag, why}]).
  returned: success
  type: list
  elements: dict
health_port:
  description: The dedicated probe port when rendered (C(--health-check-port)), else null.
  returned: success
  type: int
checked:
  description: Whether the argv was checked against the installed launcher's --help.
  returned: success
  type: bool
options:
  description: How many options the installed launcher's --help lists (0 when not checked).
  returned: success
  type: int
launcher_module:
  description: The Python module that starts the gateway (C(smg.launch_router), C(sglang_router.launch_router)).
  returned: success
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.router import gateway

HELP_TIMEOUT_S = 120  # the launcher's --help (a Python import): killed with its process group past it


def main():
    module = AnsibleModule(
        argument_spec=dict(
            python=dict(type="path", required=True),
            package=dict(type="str", default=gateway.DEFAULT_PACKAGE, choices=sorted(gateway.PACKAGES)),
            version=dict(type="str", default=""),
            worker_urls=dict(type="list", elements="str", required=True),
            worker_urls_in_env=dict(type="bool", default=False),
            flags=dict(type="dict", default={}),
            optional=dict(type="dict", default={}),
            extra=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    p = module.params
    options = None
    if os.path.exists(p["python"]) or not module.check_mode:
        cmd = gateway.help_command(p["python"], p["package"])
        rc, out, err = module_runner(module, timeout=HELP_TIMEOUT_S)(cmd)  # a hung launcher is killed, named
        if rc != 0:
            module.fail_json(msg="%s failed (rc=%s): %s - is %s installed in this venv?"
                             % (" ".join(cmd), rc, (err or out)[-2000:], p["package"]))
        options = gateway.parse_help(out)
        if not options:
            module.fail_json(msg="%s printed no options: not argparse help? %s" % (" ".join(cmd), out[-2000:]))
    try:
        result = gateway.render(p["worker_urls"], p["flags"], optional=p["optional"], extra=p["extra"],
                                options=options, package=p["package"], version=p["version"],
                                urls_in_env=p["worker_urls_in_env"])
    except gateway.GatewayError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, checked=options is not None, options=len(options or {}),
                     launcher_module=gateway.launcher_module(p["package"]), **result)


if __name__ == "__main__":
    main()
