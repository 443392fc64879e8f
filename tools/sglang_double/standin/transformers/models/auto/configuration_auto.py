# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AutoConfig's table of model types, a few of transformers 5.12.1's (the form 4.x kept here)."""
from collections import OrderedDict

CONFIG_MAPPING_NAMES = OrderedDict(
    [
        ("deepseek_v3", "DeepseekV3Config"),
        ("gemma3", "Gemma3Config"),
        ("kimi_k25", "KimiK25Config"),
        ("llama", "LlamaConfig"),
        ("mistral", "MistralConfig"),
        ("mixtral", "MixtralConfig"),
        ("qwen2", "Qwen2Config"),
        ("qwen3", "Qwen3Config"),
        ("qwen3_moe", "Qwen3MoeConfig"),
    ]
)
