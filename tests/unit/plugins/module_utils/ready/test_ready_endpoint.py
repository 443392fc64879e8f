# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which endpoint says ready: /ready from SGLang 0.5.20 on, /health before; checked against the route table of the
real wheels (tests/sglang_wheels: 0.5.9, 0.5.10.post1, 0.5.15.post1 have no /ready, 0.5.23 has it)."""
import testpaths
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.ready.params import (  # noqa: E402
    BadInput, READY_ENDPOINT_SINCE, readiness_path, validate, with_defaults)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import compare  # noqa: E402


@pytest.mark.parametrize("version", W.SUPPORTED)
def test_the_version_rule_matches_the_real_route_table(version):
    src = W.read_member(version, "sglang/srt/entrypoints/http_server.py")
    has_ready = bool(re.search(r'@app\.get\("/ready"\)', src))
    assert has_ready == (compare(version, READY_ENDPOINT_SINCE) >= 0)
    assert readiness_path({"sglang_version": version}) == ("/ready" if has_ready else "/health")
    # /health stays on every version (the fallback is always there)
    assert re.search(r'@app\.get\("/health"\)', src)


@pytest.mark.parametrize("params, path", [
    ({"sglang_version": "0.5.20"}, "/ready"),
    ({"sglang_version": "0.5.20rc1"}, "/health"),
    ({"sglang_version": "0.5.19"}, "/health"),
    ({"sglang_version": "0.6.0"}, "/ready"),
    ({"sglang_version": "0.5.23", "health_path": "/health_generate"}, "/health_generate"),  # given: kept
    ({}, None),  # unknown: the probe asks /ready and keeps to /health on a 404
])
def test_readiness_path(params, path):
    assert readiness_path(with_defaults(params)) == path


def test_a_version_that_is_not_one_is_refused():
    with pytest.raises(BadInput, match="sglang_version 'latest' is not a version"):
        validate(with_defaults({"sglang_version": "latest"}))
