# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang's ``envs`` (srt/environ.py), the one variable the collection's checks ask of it."""
import os


class EnvBool(object):
    def __init__(self, name, default):
        self.name, self.default = name, default

    def get(self):
        value = os.environ.get(self.name)
        if value is None or value == "":
            return self.default
        return value.strip().lower() in ("true", "1", "yes", "y")


class _Envs(object):
    SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN = EnvBool("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", False)


envs = _Envs()
