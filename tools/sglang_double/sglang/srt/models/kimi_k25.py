# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/srt/models/kimi_k25.py of the double: its EntryClass only."""


class KimiK25ForConditionalGeneration:
    pass


EntryClass = [KimiK25ForConditionalGeneration]
