# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/srt/models/llama_eagle3.py of the double: its EntryClass only."""


class LlamaForCausalLMEagle3:
    pass


EntryClass = [LlamaForCausalLMEagle3]
