# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Post-launch categories of issue 26: an architecture SGLang lacks is model_unsupported (not a generic scheduler
exception), a tokenizer that fails to load is tokenizer (not model_not_found: the model path exists). The lines
are SGLang 0.5.15.post1's and transformers 5.12.1's own wording (srt/models/registry.py,
srt/model_loader/utils.py, transformers/tokenization_utils_base.py and _tokenizers.py)."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.signatures import classify_text

TB = ('Traceback (most recent call last):\n'
      '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 3100, in run_scheduler_process\n'
      '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/model_loader/utils.py", line 160, in resolve_transformers_arch\n')


@pytest.mark.parametrize("line", [
    "ValueError: Cannot find model module. 'LlamaForCausalLMM' is not a registered model in the Transformers library "
    "(only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present in the model config's "
    "'auto_map' (relevant if the model is custom).",
    "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: "
    "dict_keys(['LlamaForCausalLM'])",
    "ValueError: FooForCausalLM has no SGlang implementation and the Transformers implementation is not compatible "
    "with SGLang.",
])
def test_an_architecture_sglang_lacks_is_model_unsupported(line):
    v = classify_text("[2026-12-04 09:00:00] Scheduler hit an exception: " + TB + line + "\n")
    assert v["category"] == "model_unsupported" and "config.json's architectures" in v["remedy"]


@pytest.mark.parametrize("line", [
    "OSError: Can't load tokenizer for '/srv/models/no-tok'. If you were trying to load it from "
    "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
    "ValueError: Couldn't instantiate the backend tokenizer from one of: \n",
    "OSError: Unable to load vocabulary from file. Please check that the provided vocabulary is accessible and not "
    "corrupted.",
])
def test_a_tokenizer_that_does_not_load_is_tokenizer_not_model_not_found(line):
    v = classify_text("[2026-12-04 09:00:00] server_args=ServerArgs(model_path='/srv/models/no-tok', port=30000)\n"
                      + line + "\n")
    assert v["category"] == "tokenizer"
    assert "tokenizer.json" in v["remedy"] and "--tokenizer-path" in v["remedy"]


def test_a_bare_error_raised_in_the_tokenizer_loader_is_tokenizer():
    log = ('Traceback (most recent call last):\n'
           '  File "/v/site-packages/sglang/srt/utils/hf_transformers_utils.py", line 400, in get_tokenizer\n'
           '  File "/v/site-packages/transformers/models/auto/tokenization_auto.py", line 700, in from_pretrained\n'
           '    raise ValueError(\n'
           'ValueError: something the tokenizer loader said\n')
    assert classify_text(log)["category"] == "tokenizer"
