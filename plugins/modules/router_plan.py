#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: router_plan
short_description: Decide roles/router's workers and check its settings, on the controller
version_added: "0.1.0"
description:
  - The plan step of roles/router. An action plugin; it runs on the controller and makes no round trip to the host.
  - Reads the role's C(router_*) settings from the task's variables and the workers' instance views (the fact
    C(server_view) roles/server published, else their C(server_*) variables), and returns the worker URLs - one per
    replica, its rank-0 host - and how many must be healthy.
  - Fails, before anything is touched, listing every refused setting with its fix (no workers, an expected count out
    of range, an unknown policy or package, a health-check timeout under SGLang's floor, a probe port that is
    another listener's, a router on the port of the SGLang server of its own host), and every value that reaches the
    unit file, the environment file or the gateway's argv by the one rule of its kind (module_utils/host/values.py) -
    a URL (http/https, a host, a port, no credentials unless C(router_worker_credentials=env_file)), a port, the unit
    name, user and group, listen addresses, C(router_args) (no value that reads as a flag), the unit's settings, and
    no control character (CR, LF, NUL, ...) in any of them. A refusal names the variable, the problem and the fix,
    with a secret hidden and a URL's password shown as C(***).
  - Returns the gateway's view (RV(view), plugins/plugin_utils/_router_view.py) - where it listens, what it runs,
    its workers, the health endpoint it probes on them (C(auto) decided here from the workers' SGLang versions) and
    its flag table in its command line's order - and publishes it as the host's fact C(router_view), which
    playbooks/restart.yml and roles/monitoring read (filter C(llmserve.sglang._router_view)).
  - Takes no options.
author:
  - llmserve maintainers (@llmserve)
options: {}
attributes:
  action:
    support: full
    description: Runs on the controller.
  check_mode:
    support: full
    description: Decides the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
seealso:
  - module: llmserve.sglang.router_argv
"""

EXAMPLES = r"""
- name: Plan the router
  llmserve.sglang.router_plan:
  register: __router_plan
"""

RETURN = r"""
urls:
  description: One worker URL per replica (C(router_worker_urls) when given), a password shown as C(***).
  returned: always
  type: list
  elements: str
  sample: ["http://gpu1:30000", "http://gpu3:30000"]
expected:
  description: How many workers must be healthy (C(router_expected_workers), else every URL); null when refused.
  returned: always
  type: int
urls_in_env:
  description: The worker URLs go to the gateway through the 0600 environment file, not its argv
    (C(router_worker_credentials=env_file)).
  returned: always
  type: bool
refusals:
  description: Every refused setting with its fix (the task fails when there is one).
  returned: always
  type: list
  elements: str
view:
  description:
    - The gateway's view, also set as the fact C(router_view). It carries no secret (no C(router_api_key), worker
      URLs' passwords masked).
    - C(state), C(package), C(version), C(venv), C(python), C(install_os_packages), C(user), C(group), C(service_name), C(config_dir),
      C(host), C(port), C(prometheus_host), C(prometheus_port), C(policy), C(log_level), C(health_check_port),
      C(worker_scheme), C(worker_port), C(args), C(wait), C(ready_timeout), C(ready_interval) are the settings;
      C(url) is where a client on the gateway's host reaches it; C(health_endpoint) what it probes on each worker;
      C(workers), C(expected) and C(urls_in_env) the plan's; C(argv_workers) the URLs on its command line (none
      when they go through the environment file); C(flags) and C(optional_flags) what router_argv renders.
  returned: success
  type: dict
  sample:
    url: http://127.0.0.1:30000
    port: 30000
    health_endpoint: /ready
    workers: ["http://gpu1:30000", "http://gpu3:30000"]
    expected: 2
    flags: {host: 0.0.0.0, port: 30000, policy: cache_aware, health-check-endpoint: /ready}
"""
