#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: router_worker
short_description: Drain one worker out of the SGLang gateway before its restart, or restore it after
version_added: "0.1.0"
description:
  - Talks to the gateway's worker API (smg, sglang-router) C(GET /workers), C(DELETE /workers/{id}),
    C(POST /workers); run it where the gateway listens (roles/router delegates it to C(router_gateway_host)).
  - O(state=drained) removes every listed worker whose URL is O(worker_url) (compared without a trailing slash), waits
    until the gateway no longer lists it (O(removal_timeout)), then, with O(metrics), reads the worker's own
    C(/metrics) until C(sglang:num_running_reqs) (summed over its ranks) is 0, for at most O(timeout) seconds.
  - A worker whose C(/metrics) answers another status than 200 (401 or 403 behind a key, 404 with metrics off, 503
    while it stops) or does not answer ends that wait; so do requests still running at O(timeout) (a warning says
    how many). RV(waits) says which.
  - O(state=restored) adds the worker back (C(POST /workers)) unless the gateway lists it, then waits until the
    gateway lists it once and healthy, for at most O(timeout) seconds (past that it fails).
author:
  - llmserve maintainers (@llmserve)
options:
  gateway_url:
    description: The gateway's URL as seen from where the module runs (C(http://127.0.0.1:30000)).
    type: str
    required: true
  api_key:
    description:
      - The gateway's API key (roles/router's C(router_api_key)), sent as a Bearer token to the gateway only.
      - The worker's C(/metrics) is read without a key.
      - Never echoed (C(no_log)); a key with a control character (a newline read from a file) is refused before any
        request, in a message without the key.
    type: str
  worker_url:
    description:
      - The worker's URL as the gateway knows it (C(http://host:port)).
      - A password in it (C(http://user:password@host:port), roles/router's C(router_worker_credentials=env_file)) is
        never echoed - the result, the messages and the invocation show C(********) in its place; so is one in
        O(gateway_url).
    type: str
    required: true
  state:
    description: C(drained) takes the worker out; C(restored) puts it back.
    type: str
    choices: [drained, restored]
    required: true
  metrics:
    description: With O(state=drained), wait until the worker's C(/metrics) shows no running request.
    type: bool
    default: true
  timeout:
    description:
      - O(state=drained) - how long the worker's in-flight requests may take (roles/router's C(router_drain_timeout)).
      - O(state=restored) - how long the gateway may take to report the worker healthy (C(router_ready_timeout)).
    type: float
    default: 600
  removal_timeout:
    description: O(state=drained) - how long the gateway may keep listing the worker after C(DELETE) (smg drops it
      after its drain settle time, 5 s by default).
    type: float
    default: 30
  interval:
    description: Seconds between two looks at the gateway or the worker.
    type: float
    default: 2
  validate_certs:
    description: Check the TLS certificates of C(https) URLs.
    type: bool
    default: true
extends_documentation_fragment:
  - llmserve.sglang.attributes
attributes:
  check_mode:
    support: full
    description: Lists the gateway's workers and reports what it would remove or add (RV(removed), RV(added));
      removes, adds and waits for nothing.
seealso:
  - module: llmserve.sglang.router_argv
"""

EXAMPLES = r"""
- name: Take the worker out of the gateway before it restarts
  llmserve.sglang.router_worker:
    gateway_url: http://127.0.0.1:30080
    worker_url: http://10.0.0.11:30000
    state: drained
    timeout: 600
  delegate_to: gw1

- name: Put it back once it is up, and wait until the gateway routes to it
  llmserve.sglang.router_worker:
    gateway_url: http://127.0.0.1:30080
    api_key: "{{ router_api_key }}"
    worker_url: http://10.0.0.11:30000
    state: restored
    timeout: 600
  delegate_to: gw1
"""

RETURN = r"""
worker_url:
  description: The worker URL, without a trailing slash.
  returned: always
  type: str
  sample: http://10.0.0.11:30000
removed:
  description: The workers removed (in check mode, those that would be), C([{id, url}]).
  returned: state=drained
  type: list
  elements: dict
  sample: [{"id": "2f0c...", "url": "http://10.0.0.11:30000"}]
added:
  description: Whether the worker was added (in check mode, would be); false when the gateway listed it already.
  returned: state=restored
  type: bool
waits:
  description:
    - Each wait, C({ended, seconds}) plus C(status), C(running) or C(reason) where they apply.
    - C(removal) (drained) - C(ended) is C(unlisted).
    - C(requests) (drained) - C(ended) is C(idle), C(timeout) (C(running) still at the deadline), C(no_metrics)
      (C(/metrics) answered C(status)), C(unreachable), C(no_metric) (no C(sglang:num_running_reqs)) or
      C(skipped) (O(metrics=false)).
    - C(healthy) (restored) - C(ended) is C(healthy).
    - In check mode every C(ended) is C(check_mode).
  returned: always
  type: dict
  sample: {"removal": {"ended": "unlisted", "seconds": 5.1}, "requests": {"ended": "idle", "seconds": 12.3,
           "running": 0}}
"""

import json

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.router import drain, gateway
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client, key_problem

try:
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2 is not supported on targets
    from urlparse import urlsplit  # noqa: F401


def url_secrets(url):
    """The password (and the user:password pair) of ``url``: what the module's output must never show."""
    try:
        parts = urlsplit(str(url or ""))
        user, password = parts.username, parts.password
    except ValueError:
        return []
    return [s for s in (password, "%s:%s" % (user, password) if password else None) if s]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            gateway_url=dict(type="str", required=True),
            api_key=dict(type="str", no_log=True),
            worker_url=dict(type="str", required=True),
            state=dict(type="str", required=True, choices=["drained", "restored"]),
            metrics=dict(type="bool", default=True),
            timeout=dict(type="float", default=600.0),
            removal_timeout=dict(type="float", default=30.0),
            interval=dict(type="float", default=2.0),
            validate_certs=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for name in ("gateway_url", "worker_url"):  # masked in every output, the invocation included
        module.no_log_values.update(url_secrets(p[name]))
    if key_problem(p["api_key"]):  # before any request: http.client would quote the key into a traceback
        module.fail_json(msg=key_problem(p["api_key"]))
    url = gateway.worker_url(p["worker_url"])
    if not url:
        module.fail_json(msg="worker_url is empty: set router_drain_worker_url to the worker URL as the router knows "
                             "it (http://host:port)")
    for name, value in (("gateway_url", p["gateway_url"]), ("worker_url", url)):
        problem = values.url_problem(value, credentials=True)
        if problem:
            module.fail_json(msg="%s %s %s: give http(s)://HOST:PORT on one line" % (
                name, json.dumps(values.without_credentials(value)), problem))
    for name in ("timeout", "removal_timeout", "interval"):
        if p[name] <= 0:
            module.fail_json(msg="%s is %s: give a number of seconds above 0" % (name, p[name]))
    try:
        gw = Client(p["gateway_url"], api_key=p["api_key"], validate_certs=p["validate_certs"])
        worker = Client(url, validate_certs=p["validate_certs"])
    except ValueError as exc:
        module.fail_json(msg="%s: give gateway_url and worker_url as http(s)://HOST:PORT" % exc)
    try:
        if p["state"] == "drained":
            result = drain.drain(gw, url, metrics=worker if p["metrics"] else None, check_mode=module.check_mode,
                                 removal_timeout=p["removal_timeout"], timeout=p["timeout"], interval=p["interval"])
            if result["waits"]["requests"]["ended"] == "timeout":
                module.warn("%s: %s; going on as the drain's deadline says"
                            % (url, result["waits"]["requests"]["reason"]))
        else:
            result = drain.restore(gw, url, check_mode=module.check_mode, timeout=p["timeout"],
                                   interval=p["interval"])
    except (gateway.GatewayAPIError, drain.DrainError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
