# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/gpu/make_issue45_models.py: each copy is refused by the check that owns its row, the source accepted."""
import importlib.util
import json
import os
import sys

import testpaths
from localrun import local_run

from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_pair

_spec = importlib.util.spec_from_file_location("make45", os.path.join(testpaths.REPO, "tests", "gpu",
                                                                      "make_issue45_models.py"))
make45 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make45)


def source(tmp_path):
    src = tmp_path / "llama-tiny"
    src.mkdir()
    (src / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 8, "torch_dtype": "bfloat16",
                                                 "max_position_embeddings": 4096}))
    (src / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"t%d" % i: i for i in range(8)}},
                                                    "added_tokens": []}))
    (src / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{% for m in messages %}{{ m['content'] }}"
                                                                            "{% endfor %}"}))
    return src


def check(path):
    chat = {"python": sys.executable, "run": local_run, "user": str(os.geteuid())}
    return [p for p in verify_pair(str(path), mode="structure", chat=chat)["problems"] if "safetensors" not in p]


def test_each_row_is_refused_by_its_check_and_the_source_is_not(tmp_path):
    src = source(tmp_path)
    made = make45.make(str(src), str(tmp_path / "out"))
    assert check(src) == []
    assert "Unexpected end of template" in check(made["tpl-syntax"])[0]
    assert "This model does not take chat requests" in check(made["tpl-raise"])[0]
    assert check(made["extra-tokens"])[0].startswith("target tokenizer.json: 16 token ids are at or above "
                                                     "config.json vocab_size 8 (<extra_0> (id 8)")
    with open(os.path.join(made["bfloat17"], "config.json")) as fh:
        assert json.load(fh)["torch_dtype"] == "bfloat17"  # the preflight's row (the installed torch judges it)
    with open(made["broken.jinja"]) as fh:
        assert fh.read() == make45.SYNTAX
