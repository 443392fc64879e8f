# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The HTTP endpoint of one SGLang server, as the modules that talk to a running server reach it: the
    # documentation of module_utils/sglang/client.ENDPOINT_SPEC (the action group `endpoint` of meta/runtime.yml).
    DOCUMENTATION = r"""
options:
  url:
    description: Base URL of the server (node rank 0 of a multi-node replica).
    type: str
    default: http://127.0.0.1:30000
  api_key:
    description: Sent as C(Authorization Bearer) (the server's C(--api-key)).
    type: str
"""
