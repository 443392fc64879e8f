# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 38: the cause, not the frame. Hand-built from real wordings (the file that raises each is named); the
held-out batch-6 logs are scored in test_sglang_real_logs.py. Each rule is tested from both sides: the wording
it is for, and the nearest wording it must leave alone."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import (
    CATEGORY_DOCS, R_JIT, R_KERNEL_COMPILE, R_UNSUP, R_VOCAB, R_VOCAB_DRAFT, classify_text)

TB = "[2026-12-04 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"


def frames(*paths):
    return "".join('  File "%s", line 10, in f\n    x = g()\n' % p for p in paths)


# -- a runtime check raised from a JIT kernel's source path is no failed build ------------------------------------
JIT_PATH = "/opt/venv/lib/python3.12/site-packages/sglang/jit_kernel/norm.py"


def test_runtime_check_in_a_jit_kernel_path_is_not_a_build_failure():
    v = classify_text(TB + frames(JIT_PATH) + "RuntimeError: Check failed: x.size(0) == n (3 vs. 4): rows must match\n")
    assert v["category"] != "jit_build" and v["remedy"] != R_JIT
    assert "Check failed" in v["line"]


def test_a_build_error_in_the_same_jit_path_is_still_a_build_failure():
    v = classify_text(TB + frames(JIT_PATH) + "RuntimeError: Error building extension 'norm'\n")
    assert v["category"] == "jit_build" and v["remedy"] == R_JIT


def test_a_bare_error_in_the_same_jit_path_is_placed_by_the_frame():
    v = classify_text(TB + frames(JIT_PATH) + "RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so\n")
    assert v["category"] == "jit_build"


def test_triton_compilation_error_is_a_kernel_bug_not_the_toolchain():
    text = (TB + frames("/opt/venv/lib/python3.12/site-packages/triton/compiler/compiler.py")
            + "triton.compiler.errors.CompilationError: at 18:13:\n    x_mean = tl.sum(x, axis=0) / nx\n"
            + "IncompatibleTypeErrorImpl('invalid operands of type pointer<bf16> and triton.language.float64')\n")
    v = classify_text(text)
    assert v["category"] == "jit_build" and v["remedy"] == R_KERNEL_COMPILE
    assert "toolchain" in v["remedy"] and "install" not in v["remedy"]


# -- a message-less exception quotes its assert; the assert can name the architectures -------------------------
def test_bare_assert_naming_architectures_is_arch_unsupported():
    text = (TB + '  File "/x/sglang/srt/layers/quantization/fp8.py", line 788, in __init__\n'
            "    assert is_sm100_supported() or is_sm90_supported()\nAssertionError\n")
    v = classify_text(text)
    assert v["category"] == "arch_unsupported" and "is_sm100_supported" in v["line"]


def test_bare_assert_about_something_else_stays_generic():
    text = (TB + '  File "/x/sglang/srt/mem_cache/radix_cache.py", line 3, in __init__\n'
            "    assert page_size > 0\nAssertionError\n")
    assert classify_text(text)["category"] == "scheduler_exception"


def test_an_echo_too_far_above_is_not_quoted():
    text = "    assert is_sm100_supported()\n" + "".join("line %d\n" % i for i in range(8)) + "AssertionError\n"
    v = classify_text(text)
    assert v["category"] != "arch_unsupported" and "is_sm100" not in (v["line"] or "")


# -- refusals of a setting, and "the model does not have X" ------------------------------------------------------
@pytest.mark.parametrize("text, category, flag", [
    # sglang/srt/layers/quantization/modelopt_quant.py
    ("ValueError: ModelOptFp8Config only supports static FP8 quantization in SGLang. For FP4 quantization, use "
     "ModelOptFp4Config. Check the quantization config for your model's configuration.", "bad_args", "--quantization"),
    # flashinfer's tvm-ffi check inside the MoE launcher (.cu path): no build failed
    ("tvm.error.InternalError: Check failed: gemm1_weights.dtype() == dl_float8_e4m3fn (int8 vs. float8_e4m3fn) : "
     "FP8 block scale MoE: gemm1_weights must be fp8.", "bad_args", "--quantization"),
    # DeepEP's dispatch limit (deep_ep.cpp) against the captured batch
    ("Exception: Capture cuda graph failed: Failed: Assertion error /w/DeepEP/csrc/deep_ep.cpp:1030 'x.size(0) <= "
     "num_max_dispatch_tokens_per_rank'", "bad_args", "--cuda-graph-max-bs"),
    ("AttributeError: 'Qwen2ForCausalLM' object has no attribute 'set_embed'", "model_unsupported", "set_embed"),
])
def test_a_refused_setting_or_missing_feature_names_it(text, category, flag):
    v = classify_text(text)
    assert v["category"] == category and flag in v["remedy"]


def test_attribute_error_of_a_non_model_object_stays_generic():
    assert classify_text("AttributeError: 'NoneType' object has no attribute 'shape'")["category"] == "scheduler_exception"


def test_lora_frame_places_a_bare_exception_as_the_lora_setting():
    text = (TB + frames("/x/sglang/srt/lora/utils.py") + "    raise NotImplementedError()\nNotImplementedError\n")
    v = classify_text(text)
    assert v["category"] == "bad_args" and "--lora-paths" in v["remedy"]


# -- model_type missing or unknown is a model problem, never "check --model-path" -----------------------------------
MODEL_ARGS = "[2026-12-04 10:00:00] server_args=ServerArgs(model_path='/models/tiny', tokenizer_path='/models/tiny', tp_size=1)\n"


@pytest.mark.parametrize("line", [
    # transformers' configuration_auto.py (the H200 capture: config.json without model_type)
    "ValueError: Unrecognized model in /models/tiny. Should have a `model_type` key in its config.json, or contain one "
    "of the following strings in its name: albert, align",
    # transformers, a model_type it does not know
    "ValueError: The checkpoint you are trying to load has model type `qwen9` but Transformers does not recognize "
    "this architecture. This could be because of an issue with the checkpoint, or because your version of "
    "Transformers is out of date.",
])
def test_model_type_missing_or_unknown_is_a_model_problem(line):
    text = MODEL_ARGS + TB + frames("/x/transformers/models/auto/configuration_auto.py") + line + "\n"
    v = classify_text(text)
    assert v["category"] == "model_unsupported", v
    assert "model_type" in v["remedy"] and "architectures" not in v["remedy"] and v["remedy"] != R_UNSUP
    assert "check --model-path" not in v["remedy"]


def test_model_type_missing_names_the_draft_flag_when_the_draft_is_the_one():
    text = (TB + frames("/x/sglang/srt/arg_groups/speculative_hook.py", "/x/transformers/models/auto/configuration_auto.py")
            + "ValueError: Unrecognized model in /w/draft. Should have a `model_type` key in its config.json.\n")
    v = classify_text(text)
    assert v["category"] == "model_unsupported" and "--speculative-draft-model-path" in v["remedy"]


def test_a_missing_config_json_is_still_model_not_found():
    v = classify_text("OSError: /models/m does not appear to have a file named config.json.")
    assert v["category"] == "model_not_found"


# -- a device-side index assert names the likely cause --------------------------------------------------------------
ASSERT = ("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1422: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] "
          "Assertion `srcIndex < srcSelectDimSize` failed.\nRuntimeError: CUDA error: device-side assert triggered\n")


def test_index_assert_with_a_draft_in_the_launch_names_the_draft_vocabulary():
    args = ("[2026-12-04 10:00:00] server_args=ServerArgs(model_path='/m/t', speculative_algorithm='EAGLE3', "
            "speculative_draft_model_path='/m/d', tp_size=1)\n")
    v = classify_text(args + ASSERT)
    assert v["category"] == "cuda_error" and v["remedy"] == R_VOCAB_DRAFT
    assert "--speculative-draft-model-path" in v["remedy"] and "CUDA_LAUNCH_BLOCKING" not in v["remedy"]


def test_index_assert_without_speculation_names_the_tokenizer():
    v = classify_text("[2026-12-04 10:00:00] server_args=ServerArgs(model_path='/m/t', tp_size=1)\n" + ASSERT)
    assert v["category"] == "cuda_error" and v["remedy"] == R_VOCAB


def test_an_illegal_access_keeps_the_generic_cuda_remedy():
    v = classify_text("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert v["category"] == "cuda_error" and v["remedy"] not in (R_VOCAB, R_VOCAB_DRAFT)


# -- every transport's set-up failure: the collectives are nccl, the KV transfer engines transfer_engine (issue 46) -----
@pytest.mark.parametrize("text, category, word", [
    ("RuntimeError: Failed: CUDA error /build/DeepEP/csrc/deep_ep.cpp:112 'invalid resource handle'\n"
     "RuntimeError: Failed: CUDA error /build/DeepEP/csrc/deep_ep.cpp:278 'an illegal memory access was encountered'\n",
     "nccl", "DeepEP"),
    ("RuntimeError: Mooncake memory registration failed.", "transfer_engine", "Mooncake"),
    ("E0115 05:20:19.945191   309 rdma_transport.cpp:662] RdmaTransport: No available RNIC", "transfer_engine", "RDMA"),
    ("E0717 07:30:06.719655  994396 nixl_agent.cpp:359] createBackend: backend 'UCX' encountered error during "
     "intra-agent transfer setup with status NIXL_ERR_BACKEND", "transfer_engine", "NIXL"),
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:6000",
     "nccl", "NCCL"),
])
def test_transport_set_up_failures_are_communication_failures(text, category, word):
    v = classify_text(text)
    assert v["category"] == category and word in v["remedy"]


def test_first_transport_error_is_the_cause_before_the_illegal_access_that_follows():
    v = classify_text("RuntimeError: Failed: CUDA error /b/DeepEP/csrc/deep_ep.cpp:112 'invalid resource handle'\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert v["category"] == "nccl" and "deep_ep.cpp:112" in v["line"]


def test_a_segfault_through_a_transport_library_is_that_transport():
    text = ("[host:1:1:2] Caught signal 11 (Segmentation fault: invalid permissions for mapped object at address 0x7f)\n"
            "==== backtrace (tid:  2) ====\n 0  /x/nixl.libs/libucs-97f10f8d.so.0.0.0(ucs_handle_error+0x294) [0x7f]\n")
    v = classify_text(text)
    assert v["category"] == "transfer_engine" and "Caught signal 11" in v["line"] and "NIXL" in v["remedy"]


def test_a_segfault_elsewhere_stays_a_crash():
    text = ("[host:1:1:2] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)\n"
            "==== backtrace (tid:  2) ====\n 0  /usr/lib/libc.so.6(+0x1a07cd) [0x7f]\n")
    assert classify_text(text)["category"] == "scheduler_exception"


def test_the_category_docs_name_every_transport():
    docs = dict(CATEGORY_DOCS)
    for word in ("NCCL", "Gloo", "DeepEP"):
        assert word in docs["nccl"] and word not in docs["transfer_engine"]
    for word in ("Mooncake", "NIXL", "UCX", "RDMA"):
        assert word in docs["transfer_engine"] and word not in docs["nccl"]


# -- a port taken under any flag's name ------------------------------------------------------------------------------
@pytest.mark.parametrize("line, flag", [
    ("ValueError: metrics_port at 40290 is not available in 30 seconds. metrics_port is used by a process already.",
     "--metrics-port"),
    ("ValueError: nccl_port at 29500 is not available in 30 seconds.", "--nccl-port"),
])
def test_a_port_taken_under_a_flags_name_names_the_flag(line, flag):
    v = classify_text(line)
    assert v["category"] == "port_in_use" and flag in v["remedy"]


def test_a_port_without_a_flag_name_keeps_the_generic_remedy():
    v = classify_text("OSError: [Errno 98] Address already in use")
    assert v["category"] == "port_in_use" and "--port" in v["remedy"]


def test_a_port_number_alone_is_no_port_in_use():
    assert classify_text("[2026-12-04] Using port 30000 for the metrics exporter")["category"] == "unknown"


# -- an old version's misspelled out-of-memory message ---------------------------------------------------------------
@pytest.mark.parametrize("word", ["enough", "enought"])
def test_not_enough_memory_in_either_spelling_is_kv_room(word):
    v = classify_text("RuntimeError: Not %s memory. Please try to increase --mem-fraction-static." % word)
    assert v["category"] == "oom_kv"
