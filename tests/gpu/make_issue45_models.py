# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45's five rows as model copies, each with one thing changed (stdlib only; the tiny Llama of
make_tiny_models.py, or any checkpoint with tokenizer.json and tokenizer_config.json, as the source):

    make_issue45_models.py SRC OUT_DIR   -> OUT_DIR/<row>/ for the four model rows, OUT_DIR/broken.jinja

  tpl-syntax    tokenizer_config.json chat_template with a Jinja syntax error (no endfor)
  tpl-raise     a chat_template that calls raise_exception(...)
  extra-tokens  tokenizer.json with 16 added tokens at ids vocab_size .. vocab_size+15
  bfloat17      config.json torch_dtype "bfloat17"
  (context-length: no copy - server_args {context-length: 1000000} on the source model)
  broken.jinja  the syntax-error template as a file, for server_args {chat-template: OUT_DIR/broken.jinja}: the model
                check does not render a template given at launch, SGLang starts, READY's chat probe fails
Prints one JSON line: {row: path}.
"""
import json
import os
import shutil
import sys

SYNTAX = "{% for m in messages %}{{ m['content'] }}"
RAISE = "{{ raise_exception('This model does not take chat requests') }}"
EXTRA = 16


def _edit(path, change):
    with open(path) as fh:
        data = json.load(fh)
    change(data)
    with open(path, "w") as fh:
        json.dump(data, fh, indent=1)


def _copy(src, out, row):
    dest = os.path.join(out, row)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".llmserve-*"))  # the copy has no manifest of its source
    return dest


def make(src, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(src, "config.json")) as fh:
        vocab = json.load(fh)["vocab_size"]
    made = {}
    for row, template in (("tpl-syntax", SYNTAX), ("tpl-raise", RAISE)):
        made[row] = _copy(src, out, row)
        _edit(os.path.join(made[row], "tokenizer_config.json"), lambda c, t=template: c.update(chat_template=t))
    made["extra-tokens"] = _copy(src, out, "extra-tokens")
    _edit(os.path.join(made["extra-tokens"], "tokenizer.json"), lambda t: t.setdefault("added_tokens", []).extend(
        {"id": vocab + i, "content": "<extra_%d>" % i, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True} for i in range(EXTRA)))
    made["bfloat17"] = _copy(src, out, "bfloat17")
    _edit(os.path.join(made["bfloat17"], "config.json"), lambda c: c.update(torch_dtype="bfloat17"))
    made["broken.jinja"] = os.path.join(out, "broken.jinja")
    with open(made["broken.jinja"], "w") as fh:
        fh.write(SYNTAX)
    return made


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(json.dumps(make(sys.argv[1], sys.argv[2])))
