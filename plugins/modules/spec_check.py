#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: spec_check
short_description: Check that a speculative (EAGLE/EAGLE-3) draft fits its target, with bounded requests
version_added: "0.1.0"
description:
  - Runs on the target host against a READY SGLang server launched with C(--speculative-algorithm).
  - Sends O(requests) short greedy generations one after the other, each bounded by O(request_timeout), then reads
    C(internal_states[].avg_spec_accept_length) from C(/server_info) (bounded by O(info_timeout)) and the
    C(accept len) of the decode log at O(log_path).
  - The accept length used is the first available of - the generations' own C(meta_info)
    (C(completion_tokens / spec_verify_ct)), C(/server_info), the decode log. All are returned.
  - Below O(min_accept_length) the draft does not fit the target (trained for another model, tokenizer or vocabulary
    mismatch, wrong C(num_steps)/C(eagle_topk)); the message names those remedies.
  - A generation that does not finish within its bound is reported as C(stalled) (with what C(/health) and
    C(/server_info) answered), never waited on further.
  - O(mode=warn) returns a warning; O(mode=fail) fails the task on C(low), C(stalled) or C(error). An accept length
    that no source reported (C(unknown)) only warns.
  - With O(requests=0) nothing is generated - a read-only look at C(/server_info) and the log, as the status
    playbook uses it; then an accept length that no source reported is not warned about.
  - A server whose C(/server_info) says C(speculative_algorithm) is empty gives C(off) (not a finding).
  - With O(adaptive) (the launch asked for C(--speculative-adaptive)), fails whatever O(mode) when SGLang runs static
    instead - its C(speculative_adaptive disabled:) warning in O(log_path), or C(/server_info) saying
    C(speculative_adaptive) false - with RV(category) C(adaptive_disabled), the reason and the remedy.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.server_endpoint
options:
  min_accept_length:
    description: Floor for the average accept length (tokens per verify step; 1.0 means no draft token accepted).
    type: float
    default: 1.3
  mode:
    description: What a finding does - C(warn) or C(fail) the task.
    type: str
    choices: [warn, fail]
    default: warn
  requests:
    description: Greedy generations to send, one after the other (0 = only read C(/server_info) and the log).
    type: int
    default: 3
  max_new_tokens:
    description: Tokens per generation (C(ignore_eos) is set, so each produces exactly this many).
    type: int
    default: 48
  request_timeout:
    description: Seconds one generation may take before it counts as stalled.
    type: float
    default: 30
  info_timeout:
    description: Seconds C(/server_info) (and C(/health) after a stall) may take.
    type: float
    default: 10
  log_path:
    description: Server log to read C(accept len) from (its last 256 KiB). Optional.
    type: path
  adaptive:
    description: The launch asked for C(--speculative-adaptive); fail when SGLang turned it off and serves static.
    type: bool
    default: false
notes:
  - Supports check mode; it only reads and generates, it changes nothing on the host.
"""

EXAMPLES = r"""
- name: Check the EAGLE-3 draft after the server is ready
  llmserve.sglang.spec_check:
    url: http://127.0.0.1:30000
    log_path: /var/log/sglang/default.log
    min_accept_length: 1.3
    mode: fail

- name: Read the accept length only (no generations)
  llmserve.sglang.spec_check:
    url: http://127.0.0.1:30000
    requests: 0
  register: spec
"""

RETURN = r"""
status:
  description: C(ok), C(low) (below the floor), C(stalled) (a generation did not finish in time), C(error)
    (generations failed), C(unknown) (no source reported an accept length), C(off) (the server does not
    speculate), C(adaptive_disabled) (O(adaptive) and SGLang serves static).
  type: str
  returned: always
  sample: low
category:
  description: C(adaptive_disabled) when O(adaptive) and SGLang turned adaptive speculation off.
  type: str
  returned: failure of the adaptive check
remedy:
  description: What to change so that SGLang runs adaptive.
  type: str
  returned: failure of the adaptive check
reason:
  description: The reason SGLang gave (its warning), or what C(/server_info) said.
  type: str
  returned: failure of the adaptive check
accept_length:
  description: The accept length judged (null when unknown).
  type: float
  returned: always
  sample: 1.0
source:
  description: Where RV(accept_length) came from - C(generate), C(server_info) or C(log).
  type: str
  returned: always
  sample: generate
sources:
  description: Every accept length found, by source.
  type: dict
  returned: always
  sample: {"generate": 1.0, "server_info": 1.0, "log": 1.0}
min_accept_length:
  description: The floor used.
  type: float
  returned: always
requests:
  description: One entry per generation sent - index, seconds, finished, status, error, completion_tokens,
    spec_verify_ct, accept_length.
  type: list
  elements: dict
  returned: always
health:
  description: What C(/health) answered after a stall.
  type: str
  returned: when a generation stalled
server_info:
  description: What C(/server_info) answered (C(200), C(HTTP 503), or the error such as C(no answer within 10 s)).
  type: str
  returned: always
elapsed:
  description: Seconds the check took.
  type: float
  returned: always
msg:
  description: The verdict in words, with the remedy when the draft does not fit or a generation stalled.
  type: str
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.spec_accept import check
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive as adaptive_rule
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.api import MIN_ACCEPT_LENGTH
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.client import Client, endpoint_spec, key_problem
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.log import read_tail

LOG_TAIL = 4 * 1024 * 1024  # bytes of the log read for SGLang's "speculative_adaptive disabled:" warning


def adaptive_disabled(url, api_key, log_path, timeout):
    """The reason SGLang runs static although the launch asked for adaptive (sglang/adaptive.py), or None."""
    text = read_tail(log_path, LOG_TAIL) or ""  # a link or a FIFO as the log is never read (sglang/log)
    info = None
    if not adaptive_rule.disabled(text):
        status, body, _err = Client(url, api_key).server_info(timeout=timeout)
        info = body if status == 200 else None
    return adaptive_rule.disabled(text, info)


def main():
    module = AnsibleModule(
        argument_spec=endpoint_spec(
            min_accept_length=dict(type="float", default=MIN_ACCEPT_LENGTH),
            mode=dict(type="str", choices=["warn", "fail"], default="warn"),
            requests=dict(type="int", default=3),
            max_new_tokens=dict(type="int", default=48, no_log=False),
            request_timeout=dict(type="float", default=30),
            info_timeout=dict(type="float", default=10),
            log_path=dict(type="path"),
            adaptive=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if key_problem(p["api_key"]):  # before any request: http.client would quote the key into a traceback
        module.fail_json(msg=key_problem(p["api_key"]))
    if p["requests"] < 0 or p["max_new_tokens"] < 1:
        module.fail_json(msg="requests must be >= 0 and max_new_tokens >= 1 (got %d, %d)"
                         % (p["requests"], p["max_new_tokens"]))
    if p["request_timeout"] <= 0 or p["info_timeout"] <= 0:
        module.fail_json(msg="request_timeout and info_timeout must be positive seconds")
    if p["min_accept_length"] < 1.0:
        module.fail_json(msg="min_accept_length=%s is below 1.0, the least any speculative step emits: give a floor "
                             ">= 1.0 (1.3 flags a draft that almost never hits)" % p["min_accept_length"])
    if p["adaptive"]:
        why = adaptive_disabled(p["url"], p["api_key"], p["log_path"], p["info_timeout"])
        if why:
            module.fail_json(msg="the launch asked for --speculative-adaptive, but SGLang runs static speculation (%s: "
                                 "%s): %s" % (adaptive_rule.DISABLED_LINE, why, adaptive_rule.DISABLED_REMEDY),
                             category=adaptive_rule.DISABLED_CATEGORY, remedy=adaptive_rule.DISABLED_REMEDY,
                             reason=why, status="adaptive_disabled", ok=False)
    res = check(p["url"], api_key=p["api_key"], requests=p["requests"], max_new_tokens=p["max_new_tokens"],
                request_timeout=p["request_timeout"], info_timeout=p["info_timeout"],
                min_accept_length=p["min_accept_length"], log_path=p["log_path"])
    res["changed"] = False
    if not res["ok"]:
        if p["mode"] == "fail" and res["status"] in ("low", "stalled", "error"):
            module.fail_json(**res)
        if res["status"] != "unknown" or p["requests"] > 0:
            module.warn(res["msg"])
    module.exit_json(**res)


if __name__ == "__main__":
    main()
