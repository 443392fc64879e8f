# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a user's request needs of the model (issue 45): token ids inside the embedding table, a chat template that
renders. Read through host/untrusted with its caps; the template is rendered in the server's Python (its jinja2, the
one transformers uses) the way Transformers renders it, with a time, memory and output limit.

Transformers (utils/chat_template_utils.py ``_compile_jinja_template``) compiles a chat template in an
``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols])``
with the filter ``tojson`` and the globals ``raise_exception`` and ``strftime_now``, and renders it with
``messages``, ``add_generation_prompt`` and the tokenizer's special tokens. SGLang's ``/v1/chat/completions`` calls
that for every request: a template that does not render answers every chat request 400.
"""

from __future__ import annotations

import json

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.host.untrusted import Refused

TOKENIZER_JSON = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
SPECIAL = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")
# a template's text (real ones: a few KB; the largest seen ~20 KB)
TEMPLATE = untrusted.Kind("chat template", 1 << 20, 16, 10000)
# what one rendering may take: seconds, bytes of output, bytes of address space of the rendering process
RENDER_SECONDS = 5
RENDER_MAX_CHARS = 1 << 20
RENDER_MAX_MEMORY = 2 << 30
SHOWN = 5

# Run by the server's python: json in on stdin ({templates: [[label, text]], tokens: {...}}), json out.
RENDER_SCRIPT = r"""
import json, os, signal, sys
job = json.loads(sys.stdin.read())
if job.get("as") and os.geteuid() == 0:  # root renders nothing: the server user's uid, gid and groups first
    try:
        os.setgroups(job["as"][2])
        os.setgid(job["as"][1])
        os.setuid(job["as"][0])
    except Exception as e:
        print(json.dumps({"error": "cannot drop to uid %%s (%%s)" %% (job["as"][0], e)}))
        sys.exit(0)
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (%(memory)d, %(memory)d))
except Exception:
    pass
try:
    import jinja2
    from datetime import datetime
    from jinja2 import nodes
    from jinja2.exceptions import TemplateError
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except Exception as e:
    print(json.dumps({"error": "jinja2 does not import (%%s: %%s)" %% (type(e).__name__, e), "uid": os.geteuid()}))
    sys.exit(0)


class AssistantTracker(Extension):
    # transformers' {%% generation %%} block: rendered as its body
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


class Late(Exception):
    pass


def late(*_a):
    raise Late()


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "ping"}
ASSISTANT = {"role": "assistant", "content": "pong"}
# what SGLang sends for a chat request, with and without a system message: [(messages, add_generation_prompt)]
FULL = [([SYSTEM, USER], True), ([SYSTEM, USER, ASSISTANT], False)]
BARE = [([USER], True), ([USER, ASSISTANT], False)]


def render(template, messages, gen):
    size = 0
    for chunk in template.generate(messages=messages, add_generation_prompt=gen, tools=None, documents=None,
                                   **job.get("tokens", {})):
        size += len(chunk)
        if size > %(chars)d:
            return "renders more than %(chars)d characters"
    return None


def judge(label, text):
    signal.signal(signal.SIGALRM, late)
    signal.alarm(%(seconds)d)
    try:
        try:
            template = env.from_string(text)
        except jinja2.TemplateSyntaxError as e:
            return {"label": label, "ok": False, "syntax": True, "error": "%%s (line %%s)" %% (e.message, e.lineno)}
        out = {"label": label, "ok": True}
        for conversations, key in ((FULL, "error"), (BARE, "bare")):
            for messages, gen in conversations:
                try:
                    said = render(template, messages, gen)
                except Late:
                    raise
                except MemoryError:
                    said = "needs more than %(memory)d bytes of memory"
                except RecursionError:
                    said = "recurses without end"
                except Exception as e:
                    said = "%%s: %%s" %% (type(e).__name__, e) if not isinstance(e, TemplateError) else str(e)
                if said:
                    out[key] = "%%s (add_generation_prompt=%%s, roles %%s)" %% (
                        said, gen, "/".join(m["role"] for m in messages))
                    break
            if key == "error" and "error" not in out:
                break
        if "error" in out:
            out["ok"] = False
        return out
    except Late:
        return {"label": label, "ok": False, "error": "does not finish rendering within %(seconds)d s"}
    finally:
        signal.alarm(0)


print(json.dumps({"results": [judge(label, text) for label, text in job["templates"]], "uid": os.geteuid()}))
""" % {"memory": RENDER_MAX_MEMORY, "chars": RENDER_MAX_CHARS, "seconds": RENDER_SECONDS}


def _vocab_size(config):
    """config.json's vocab_size (a multimodal config's text_config when the top level has none), or None."""
    size = config.get("vocab_size")
    if size is None and isinstance(config.get("text_config"), dict):
        size = config["text_config"].get("vocab_size")
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def token_ids(tokenizer):
    """{id: token} of tokenizer.json's model vocabulary (a {token: id} map, or Unigram's [[piece, score]] list
    numbered from 0) and its added_tokens; Refused naming the field when they are not that."""
    name = TOKENIZER_JSON
    model = untrusted.field(tokenizer, "model", dict, name) or {}
    vocab = untrusted.field(model, "vocab", (dict, list), name, path="model.vocab")
    ids = {}
    if isinstance(vocab, dict):
        odd = [t for t, i in vocab.items() if not isinstance(i, int) or isinstance(i, bool) or i < 0]
        if odd:
            raise Refused(name, "the ids of %d tokens are not token ids (%s)" % (len(odd), untrusted.sample(odd)),
                          "restore the publisher's tokenizer.json", field="model.vocab")
        ids.update((i, t) for t, i in vocab.items())
    elif isinstance(vocab, list):
        ids.update((i, p[0] if isinstance(p, list) and p else p) for i, p in enumerate(vocab))
    for n, added in enumerate(untrusted.field(tokenizer, "added_tokens", list, name) or []):
        i = untrusted.int_field(added, "id", name, path="added_tokens[%d].id" % n, required=True, minimum=0)
        ids[i] = added.get("content")
    return ids


def vocab_problems(tree, config):
    """tokenizer.json ids at or above config.json's vocab_size: a prompt holding one reads past the embedding table."""
    size = _vocab_size(config)
    if size is None or TOKENIZER_JSON not in set(tree.names()):
        return []
    try:
        ids = token_ids(tree.json(TOKENIZER_JSON, untrusted.TOKENIZER))
    except Refused as e:
        return ["tokenizer %s" % e]
    over = sorted(i for i in ids if i >= size)
    if not over:
        return []
    shown = ", ".join("%s (id %d)" % (untrusted.printable(ids[i], 40), i) for i in over[:SHOWN])
    more = " and %d more" % (len(over) - SHOWN) if len(over) > SHOWN else ""
    return ["tokenizer.json: %d token ids are at or above config.json vocab_size %d (%s%s): a prompt holding one "
            "reads past the model's embedding table (undefined output, no error); use the tokenizer made for these "
            "weights, or remove those tokens from tokenizer.json's model.vocab/added_tokens (tokenizer_config.json's "
            "added_tokens_decoder too)" % (len(over), size, shown, more)]


def _text(tree, name):
    try:
        return tree.read(name, TEMPLATE).decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refused(name, "not UTF-8 (byte %d)" % e.start, "restore the publisher's file")


def templates(tree):
    """([(label, template text)], special tokens) of the model: tokenizer_config.json's chat_template (a string or a
    list of {name, template}), chat_template.jinja, chat_template.json's chat_template; Refused naming the file."""
    names = set(tree.names())
    found, tokens = [], {}
    if TOKENIZER_CONFIG in names:
        cfg = tree.json(TOKENIZER_CONFIG, untrusted.TOKENIZER)
        value = untrusted.field(cfg, "chat_template", (str, list), TOKENIZER_CONFIG)
        if isinstance(value, str):
            found.append(("%s chat_template" % TOKENIZER_CONFIG, value))
        for n, item in enumerate(value if isinstance(value, list) else []):
            text = untrusted.field(item, "template", str, TOKENIZER_CONFIG, path="chat_template[%d].template" % n,
                                   required=True)
            found.append(("%s chat_template %s" % (TOKENIZER_CONFIG, untrusted.printable(item.get("name"), 40)), text))
        for key in SPECIAL:
            token = cfg.get(key) if isinstance(cfg, dict) else None
            token = token.get("content") if isinstance(token, dict) else token
            if isinstance(token, str):
                tokens[key] = token
    if "chat_template.jinja" in names:
        found.append(("chat_template.jinja", _text(tree, "chat_template.jinja")))
    if "chat_template.json" in names:
        data = tree.json("chat_template.json", TEMPLATE)
        found.append(("chat_template.json chat_template",
                      untrusted.field(data, "chat_template", str, "chat_template.json", required=True)))
    return found, tokens


def render(python, found, tokens, env=None, run=None, timeout=RENDER_SECONDS * 4 + 30, user=None):
    """Render each template in ``python``: ([results], error). A result: label, ok, error (the template's own
    message), bare (the message without a system role), syntax. ``user``: (uid, gid, [gids]) the rendering process
    drops to when it starts as root (the server's user: a template is the model publisher's code)."""
    job = {"templates": found, "tokens": tokens, "as": list(user) if user else None}
    rc, stdout, stderr = run([python, "-c", RENDER_SCRIPT], data=json.dumps(job),
                             environ_update={k: str(v) for k, v in (env or {}).items()}, timeout=timeout)
    if rc in (124, 127):
        return None, "could not run %s (%s)" % (python, stderr.strip()[-200:] or "rc %d" % rc)
    try:
        data = json.loads((stdout.strip().splitlines() or ["{}"])[-1])
    except ValueError:
        data = {}
    if not isinstance(data, dict) or data.get("error") or not isinstance(data.get("results"), list):
        why = data.get("error") if isinstance(data, dict) else None
        return None, why or "no answer from %s (%s)" % (python, (stderr.strip().splitlines() or ["rc %d" % rc])[-1][-200:])
    return data["results"], None


def chat_problems(tree, python, env=None, run=None, given=None, user=None):
    """(problems, warnings, has_template) of the model's chat template. ``given``: SGLang's --chat-template (then the
    model's templates are not what chat requests use). Without ``python`` nothing is rendered (a warning says so).
    ``user``: the identity to render as (see render)."""
    if given:
        return [], [], True
    try:
        found, tokens = templates(tree)
    except Refused as e:
        return [str(e)], [], False
    if not found:
        return [], ["the model has no chat template (tokenizer_config.json chat_template, chat_template.jinja or "
                    "chat_template.json): unless SGLang takes one of its built-in templates for the model's name, "
                    "/v1/chat/completions will answer 400; set server_args chat-template (a template name or file) "
                    "if clients send chat requests"], False
    if not python:
        return [], ["the chat template was not rendered: no server python given"], True
    results, error = render(python, found, tokens, env, run, user=user)
    if error:
        return ["the chat template could not be rendered in the server's python: %s: check the server venv "
                "(jinja2 comes with transformers)" % error], [], True
    problems, warnings = [], []
    for r in results:
        if r.get("ok"):
            continue
        if r.get("bare") is None and not r.get("syntax") and "roles system/" in str(r.get("error")):
            warnings.append("%s refuses a system message: %s; chat requests with a system role will answer 400"
                            % (r["label"], untrusted.printable(str(r["error"]), 300)))
            continue
        quoted = untrusted.printable(str(r.get("bare") or r.get("error")), 300)
        problems.append("%s does not render: %s: every /v1/chat/completions would answer 400; fix the template (or "
                        "restore the publisher's), or set server_args chat-template to a template that works"
                        % (r["label"], quoted))
    return problems, warnings, True
