# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health latch in sglang/gates.py: who probes what per version, the liveness timeout derived from the longest
prefill (bounds at, below and above SGLang's 20 s floor), and the environment the renderer gives the server."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import render

# tokens whose derived timeout is exactly SGLang's default: 2 x tokens / 4000 = 20
AT_FLOOR = int(gates.HEALTH_CHECK_TIMEOUT_DEFAULT_S * gates.PREFILL_FLOOR_TOKENS_PER_S / gates.HEALTH_TIMEOUT_MARGIN)


@pytest.mark.parametrize("ctx, expected", [
    (AT_FLOOR, 20),  # at the floor
    (AT_FLOOR - 2000, 20),  # below it: SGLang's own 20 s stays
    (AT_FLOOR + 1, 21),  # just above: rounded up
    (131072, 66),  # 128k context
    (None, 66),  # no context_length: the model's own is not known here, 128k stands for it
    (0, 66), ("garbage", 66), (True, 66),
])
def test_the_timeout_fits_the_longest_prefill(ctx, expected):
    args = {"chunked_prefill_size": 8192}
    if ctx is not None:
        args["context_length"] = ctx
    assert gates.health_check_timeout(args) == expected


def test_an_override_wins_and_chunking_does_not_shorten_the_prefill():
    assert gates.health_check_timeout({"context_length": 131072}, override=45) == 45
    assert gates.health_check_timeout({"context_length": 131072}, override=0) == 66
    # prefill runs before decode: a chunked prompt emits nothing until its last chunk, whatever the chunk size
    assert gates.health_check_timeout({"context_length": 131072, "chunked_prefill_size": 2048}) == 66
    assert gates.longest_prefill_tokens({"context_length": 32768, "chunked_prefill_size": -1}) == (32768, 32768)
    assert gates.longest_prefill_tokens({"context_length": 32768, "chunked_prefill_size": 4096}) == (32768, 4096)


def test_the_env_sets_what_the_user_did_not():
    env = gates.health_env("0.5.23", {"context_length": 65536})
    assert env == {"SGLANG_HEALTH_CHECK_TIMEOUT": "33", "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "0"}
    assert gates.health_env("0.5.23", {}, status_check=False) == {"SGLANG_HEALTH_CHECK_TIMEOUT": "66"}
    given = {"SGLANG_HEALTH_CHECK_TIMEOUT": "5", "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "1"}
    assert gates.health_env("0.5.23", {}, env=given) == {}
    assert gates.health_env("0.5.8", {}) == {}  # older than any wheel read: nothing is known of its knobs


@pytest.mark.parametrize("version, gateway", [("0.5.23", "/ready"), ("0.5.20", "/ready"), ("0.5.15.post1", "/health"),
                                              ("0.5.9", "/health")])
def test_who_probes_what(version, gateway):
    p = gates.probes(version)
    assert p["gateway"] == gateway and p["liveness"] == "/health_generate" and p["latch"]
    assert p["liveness_failures"] >= 2 and not p["health_generates"]
    assert gates.HEALTH_LATCH_LINE in p["latched"] and ("/ready 503" in p["latched"]) == (gateway == "/ready")
    assert gates.probes(version, status_check=False)["health_generates"]


def test_the_renderer_puts_it_in_the_servers_env_and_a_setting_flips_it():
    base = {"model_path": "/m", "tp": 1, "host": "127.0.0.1", "port": 30000, "args": {"context_length": 32768}}
    out = render(base, "0.5.23")
    assert out["env"]["SGLANG_HEALTH_CHECK_TIMEOUT"] == "20" and out["env"]["SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION"] == "0"
    out = render(dict(base, health_status_check=False, health_check_timeout=90), "0.5.23")
    assert out["env"]["SGLANG_HEALTH_CHECK_TIMEOUT"] == "90" and "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION" not in out["env"]
    out = render(base, "0.5.23", env={"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "1"})
    assert "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION" not in out["env"]  # the user's server_env wins
