# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45 before launch: what a user's request needs of the model. Token ids inside vocab_size; a chat template
rendered in a real Python with jinja2 (this venv's: the server's venv has it with transformers) the way Transformers
renders it. Each refusal next to its good twin; hostile files refused by name."""
import json
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from localrun import local_run

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.models import serving
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_pair

LLAMA = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}<<SYS>>{{ m['content'] }}<</SYS>>"
         "{% else %}[{{ m['role'] }}] {{ m['content'] | trim }}{% endif %}{% endfor %}"
         "{% if add_generation_prompt %}[assistant]{% endif %}")
GEMMA = ("{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
         "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
         "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


def model(tmp_path, vocab_size=8, vocab=None, added=(), chat_template=None, files=None):
    d = tmp_path / "m"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": vocab_size}))
    tok = {"model": {"type": "BPE", "vocab": vocab if vocab is not None else {"t%d" % i: i for i in range(8)}},
           "added_tokens": [{"id": i, "content": c} for i, c in added]}
    (d / "tokenizer.json").write_text(json.dumps(tok))
    cfg = {"bos_token": "<s>", "eos_token": {"content": "</s>"}}
    if chat_template is not None:
        cfg["chat_template"] = chat_template
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    for name, text in (files or {}).items():
        (d / name).write_text(text)
    return d


def chat(d, python=sys.executable, given=None):
    with untrusted.Tree(str(d)) as tree:
        return serving.chat_problems(tree, python, {}, local_run, given)


def vocab(d):
    with untrusted.Tree(str(d)) as tree:
        return serving.vocab_problems(tree, json.loads((d / "config.json").read_text()))


# -- token ids and vocab_size

def test_a_tokenizer_inside_vocab_size_is_accepted_one_past_it_is_refused_naming_the_tokens(tmp_path):
    assert vocab(model(tmp_path, 8)) == []
    assert vocab(model(tmp_path, 9, added=[(8, "<tool>")])) == []
    problems = vocab(model(tmp_path, 8, added=[(8, "<tool>")]))
    assert len(problems) == 1 and problems[0].startswith(
        "tokenizer.json: 1 token ids are at or above config.json vocab_size 8 (<tool> (id 8)): a prompt holding one")


def test_many_offending_tokens_are_counted_and_the_first_five_named(tmp_path):
    d = model(tmp_path, 4, added=[(8 + i, "<x%d>" % i) for i in range(16)])
    (problem,) = vocab(d)
    assert "20 token ids are at or above config.json vocab_size 4 (t4 (id 4), t5 (id 5), t6 (id 6), t7 (id 7), " \
           "<x0> (id 8) and 15 more)" in problem


def test_a_unigram_vocabulary_is_numbered_from_zero(tmp_path):
    assert vocab(model(tmp_path, 3, vocab=[["a", 0.0], ["b", -1.0], ["c", -2.0]])) == []
    assert "1 token ids" in vocab(model(tmp_path, 2, vocab=[["a", 0.0], ["b", -1.0], ["c", -2.0]]))[0]


@pytest.mark.parametrize("text, named", [
    ("not json", "tokenizer tokenizer.json: not JSON"),
    ('{"model": {"vocab": {"a": "zero"}}}', "tokenizer tokenizer.json model.vocab: the ids of 1 tokens are not"),
    ('{"model": {"vocab": {}}, "added_tokens": [{"content": "x"}]}', "tokenizer tokenizer.json added_tokens[0].id: missing"),
    ('{"model": {"vocab": 5}}', "tokenizer tokenizer.json model.vocab: is an integer"),
])
def test_a_tokenizer_json_that_is_not_one_is_refused_by_name(tmp_path, text, named):
    d = model(tmp_path)
    (d / "tokenizer.json").write_text(text)
    assert vocab(d)[0].startswith(named)


def test_a_huge_tokenizer_json_is_refused_by_its_cap_unread(tmp_path):
    d = model(tmp_path)
    with open(str(d / "tokenizer.json"), "wb") as f:
        f.truncate(untrusted.TOKENIZER.max_bytes + 1)
    assert vocab(d) == ["tokenizer tokenizer.json: %d bytes, above the check's cap of %d for a tokenizer file: "
                        "replace it with the publisher's file" % (untrusted.TOKENIZER.max_bytes + 1,
                                                                  untrusted.TOKENIZER.max_bytes)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
                    max_leaves=20))
def test_any_json_in_tokenizer_json_is_a_verdict_never_a_traceback(tmp_path, value):
    d = model(tmp_path)
    (d / "tokenizer.json").write_text(json.dumps({"model": {"vocab": value}, "added_tokens": value}))
    problems = vocab(d)
    assert all(p.startswith("tokenizer") for p in problems)


# -- the chat template

def test_a_template_that_renders_is_accepted_with_the_special_tokens(tmp_path):
    assert chat(model(tmp_path, chat_template=LLAMA)) == ([], [], True)


@pytest.mark.parametrize("template, quoted", [
    ("{% for m in messages %}{{ m['content'] }}", "unexpected end of template"),
    ("{{ raise_exception('Conversation roles must alternate user/assistant') }}",
     "Conversation roles must alternate user/assistant"),
    ("{{ messages[7]['content'] | upper }}", "list object has no element 7"),
])
def test_a_template_that_does_not_render_is_refused_quoting_its_message(tmp_path, template, quoted):
    problems, warnings, has = chat(model(tmp_path, chat_template=template))
    assert has and warnings == [] and len(problems) == 1
    assert problems[0].startswith("tokenizer_config.json chat_template does not render: ")
    assert quoted.lower() in problems[0].lower()
    assert "every /v1/chat/completions would answer 400" in problems[0]


def test_a_template_refusing_only_the_system_role_is_a_warning(tmp_path):
    problems, warnings, has = chat(model(tmp_path, chat_template=GEMMA))
    assert problems == [] and has and len(warnings) == 1
    assert "refuses a system message: System role not supported" in warnings[0]


def test_every_template_file_is_rendered_and_named(tmp_path):
    d = model(tmp_path, chat_template=[{"name": "default", "template": LLAMA}, {"name": "tool_use", "template": "{%"}],
              files={"chat_template.jinja": LLAMA, "chat_template.json": json.dumps({"chat_template": "{{ x.y.z }}"})})
    problems, _w, has = chat(d)
    assert has and [p.split(" does not render")[0] for p in problems] == [
        "tokenizer_config.json chat_template tool_use", "chat_template.json chat_template"]


def test_transformers_generation_block_and_its_filters_render(tmp_path):
    template = ("{% for m in messages %}{% if m['role'] == 'assistant' %}{% generation %}{{ m['content'] }}"
                "{% endgeneration %}{% else %}{{ m | tojson }}{% endif %}{% if loop.last %}{% break %}{% endif %}"
                "{% endfor %}{{ strftime_now('%Y') }}")
    assert chat(model(tmp_path, chat_template=template)) == ([], [], True)


def test_no_template_warns_that_chat_needs_one_unless_given(tmp_path):
    d = model(tmp_path)
    problems, warnings, has = chat(d)
    assert problems == [] and not has and "server_args chat-template" in warnings[0]
    assert chat(d, given="chatml") == ([], [], True)


@pytest.mark.parametrize("template, why", [
    ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}", "does not finish rendering"),
    ("{% for i in range(99999) %}{% for j in range(99999) %}xxxxxxxxxx{% endfor %}{% endfor %}",
     "renders more than %d characters" % serving.RENDER_MAX_CHARS),
    ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "recurses without end"),
])
def test_a_template_that_loops_or_floods_is_refused_within_its_limits(tmp_path, template, why):
    problems, _w, _h = chat(model(tmp_path, chat_template=template))
    assert len(problems) == 1 and why in problems[0], problems


def test_the_sandbox_refuses_what_transformers_refuses(tmp_path):
    problems, _w, _h = chat(model(tmp_path, chat_template="{{ messages.append(1) }}"))
    assert "access to attribute 'append' of 'list' object is unsafe" in problems[0]


@pytest.mark.parametrize("name, text, named", [
    ("tokenizer_config.json", "{", "tokenizer_config.json: not JSON"),
    ("tokenizer_config.json", '{"chat_template": 5}', "tokenizer_config.json chat_template: is an integer"),
    ("chat_template.json", "[]", "chat_template.json: is a list, not an object"),
])
def test_a_template_file_that_is_not_json_is_refused_by_name(tmp_path, name, text, named):
    d = model(tmp_path, files={name: text})
    assert chat(d)[0][0].startswith(named)


def test_a_huge_template_is_refused_by_its_cap(tmp_path):
    d = model(tmp_path, files={"chat_template.jinja": "x" * (serving.TEMPLATE.max_bytes + 1)})
    assert chat(d)[0][0].startswith("chat_template.jinja: %d bytes, above the check's cap"
                                    % (serving.TEMPLATE.max_bytes + 1))


def test_a_python_without_jinja2_says_so(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"error\": \"jinja2 does not import (ImportError: x)\"}'\n")
    fake.chmod(0o755)
    problems, _w, has = chat(model(tmp_path, chat_template=LLAMA), python=str(fake))
    assert has and problems == ["the chat template could not be rendered in the server's python: jinja2 does not "
                                "import (ImportError: x): check the server venv (jinja2 comes with transformers)"]


def test_verify_pair_refuses_the_bad_template_and_the_tokens_and_reports_the_template(tmp_path):
    d = model(tmp_path, chat_template=LLAMA)
    chat = {"python": sys.executable, "run": local_run, "user": str(os.geteuid())}  # the tests' own user
    ok = verify_pair(str(d), mode="structure", chat=chat)
    assert not any("chat_template" in p or "vocab_size" in p for p in ok["problems"]) and ok["chat_template"] is True
    bad = model(tmp_path, 8, added=[(8, "<tool>")], chat_template="{% if %}")
    v = verify_pair(str(bad), mode="structure", chat=chat)
    assert any(p.startswith("target tokenizer.json: 1 token ids") for p in v["problems"])
    assert any(p.startswith("target tokenizer_config.json chat_template does not render") for p in v["problems"])


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another uid needs root")
def test_root_renders_nothing_the_script_drops_to_the_server_user_first(tmp_path):
    import pwd
    nobody = pwd.getpwnam("nobody")
    job = {"templates": [["t", LLAMA]], "tokens": {}, "as": [nobody.pw_uid, nobody.pw_gid, [nobody.pw_gid]]}
    rc, out, err = local_run([sys.executable, "-c", serving.RENDER_SCRIPT], data=json.dumps(job), timeout=60)
    data = json.loads(out.splitlines()[-1])
    # rendered as nobody (or, where nobody cannot read this venv's Python, refused as nobody: never as root)
    assert data["uid"] == nobody.pw_uid, (rc, err)
    assert data.get("results") == [{"label": "t", "ok": True}] or "jinja2 does not import" in data["error"]
    job["as"] = None
    assert json.loads(local_run([sys.executable, "-c", serving.RENDER_SCRIPT], data=json.dumps(job),
                                timeout=60)[1].splitlines()[-1])["uid"] == 0
