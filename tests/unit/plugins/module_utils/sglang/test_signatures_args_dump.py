# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A piece of SGLang's server_args dump is configuration, not an event: its flag names (disable_custom_all_reduce,
enable_error_...) must not read as a failure (molecule server_ready found the P2P rule firing on one)."""
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import Classifier

DUMP = ("ttn_tp_gather=False, disable_chunked_prefix_cache=False, disable_custom_all_reduce=False, "
        "disable_decode_cuda_graph=False, enable_error_log=True, on_failure_retry=None, disable_radix_cache=False")


def test_a_server_args_fragment_is_no_failure():
    assert Classifier().feed(DUMP, "init", 0) is None


def test_a_custom_all_reduce_failure_still_is_one():
    m = Classifier().feed("custom_all_reduce.py:120: RuntimeError: peer access failed", "init", 0)
    assert m is not None and m["category"] == "nccl"
