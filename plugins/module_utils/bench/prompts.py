# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The user's prompt set (``benchmark_prompts``, issue 44): a JSONL file of chat conversations or prompts.

One JSON object a line - ``{"messages": [{"role": "user", "content": "..."}, ...]}`` (a chat conversation; a trailing
assistant turn is the reply and is not sent) or ``{"prompt": "..."}``; blank lines are skipped. The file is the
user's, so it is read as untrusted (host/untrusted.py: opened by directory descriptor, no link followed, nothing
that blocks, a size cap) with caps on lines, line bytes, JSON depth and messages; every bad line is a refusal naming
the file, the line number and the field. The load sends the set in one shuffled order (a fixed seed: every mode and
repeat sends the same requests), each with its own length, so the threshold is measured on the user's kind of text.
"""

from __future__ import annotations

import os
import random

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted

MAX_BYTES = 64 * untrusted.MIB      # the whole file
MAX_LINES = 100000                  # lines, blank ones included
MAX_LINE_BYTES = untrusted.MIB      # one line
MAX_MESSAGES = 256                  # turns of one conversation
ROLES = ("system", "developer", "user", "assistant", "tool")
FIX = ('one JSON object a line: {"messages": [{"role": "user", "content": "..."}]} (a chat conversation) or '
       '{"prompt": "..."}')
FILE = untrusted.Kind("prompt set", MAX_BYTES, fix="give a JSONL file of at most %d MiB" % (MAX_BYTES >> 20))
LINE = untrusted.Kind("prompt set line", MAX_LINE_BYTES, max_depth=8, max_values=4 * MAX_MESSAGES + 16, fix=FIX)


def read(path):
    """The entries of the prompt set at ``path`` (see :func:`parse`); Refused naming what is wrong and the fix."""
    path = str(path or "")
    if not os.path.isabs(path):
        raise untrusted.Refused(untrusted.printable(path) or "benchmark_prompts", "is not an absolute path",
                                "give the prompt set's absolute path on the host that runs the load")
    folder, base = os.path.split(path)
    with untrusted.Tree(folder) as tree:
        data = tree.read(base, FILE)
    return parse(data, untrusted.printable(path))


def parse(data, name="prompt set"):
    """[{"messages": [...]} | {"prompt": str}, each with "chars" (the text's length)] of the JSONL bytes ``data``."""
    if len(data) > MAX_BYTES:
        raise untrusted.Refused(name, "%d bytes, above the cap of %d" % (len(data), MAX_BYTES), FILE.fix)
    lines = data.split(b"\n")
    if len(lines) > MAX_LINES + 1 or (len(lines) == MAX_LINES + 1 and lines[-1].strip()):
        raise untrusted.Refused(name, "more than %d lines" % MAX_LINES, "sample at most %d prompts into it" % MAX_LINES)
    entries = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        where = "line %d" % number
        if len(raw) > MAX_LINE_BYTES:
            raise untrusted.Refused(name, "%d bytes, above the cap of %d for one line" % (len(raw), MAX_LINE_BYTES),
                                    "shorten that conversation", field=where)
        try:
            obj = untrusted.parse_json(raw, name, LINE)
        except untrusted.Refused as exc:
            raise untrusted.Refused(name, exc.what, FIX, field=where)
        entries.append(entry(obj, name, where))
    if not entries:
        raise untrusted.Refused(name, "holds no prompt", FIX)
    return entries


def entry(obj, name, where):
    """One line's object as the load sends it; Refused naming ``where`` (its line) and the field."""
    if not isinstance(obj, dict):
        raise untrusted.Refused(name, "is %s, not an object" % untrusted.type_name(obj), FIX, field=where)
    given = [k for k in ("messages", "prompt") if k in obj]
    if len(given) != 1:
        what = "both messages and prompt" if given else "neither messages nor prompt"
        raise untrusted.Refused(name, "has %s" % what, FIX, field=where)
    if given == ["prompt"]:
        text = untrusted.field(obj, "prompt", str, name, "%s prompt" % where, required=True, fix=FIX)
        if not text.strip():
            raise untrusted.Refused(name, "is empty", FIX, field="%s prompt" % where)
        return {"prompt": text, "chars": len(text)}
    messages = untrusted.field(obj, "messages", list, name, "%s messages" % where, required=True, fix=FIX)
    if len(messages) > MAX_MESSAGES:
        raise untrusted.Refused(name, "%d turns, above the cap of %d" % (len(messages), MAX_MESSAGES),
                                "keep the last %d turns" % MAX_MESSAGES, field="%s messages" % where)
    out = []
    for i, message in enumerate(messages):
        at = "%s messages[%d]" % (where, i)
        if not isinstance(message, dict):
            raise untrusted.Refused(name, "is %s, not an object" % untrusted.type_name(message), FIX, field=at)
        role = untrusted.field(message, "role", str, name, at + ".role", required=True, fix=FIX)
        if role not in ROLES:
            raise untrusted.Refused(name, "is %s, not one of %s" % (untrusted.printable(role, 40), ", ".join(ROLES)),
                                    FIX, field=at + ".role")
        content = untrusted.field(message, "content", str, name, at + ".content", required=True,
                                  fix="give each turn's text as a string")
        out.append({"role": role, "content": content})
    while out and out[-1]["role"] == "assistant":
        out.pop()  # the reply: what the server generates
    if not any(m["role"] == "user" for m in out):
        raise untrusted.Refused(name, "has no user turn to answer", FIX, field="%s messages" % where)
    return {"messages": out, "chars": sum(len(m["content"]) for m in out)}


def order(count, seed=0):
    """The order the load sends ``count`` entries in: shuffled once with ``seed``, the same for every mode."""
    idx = list(range(int(count)))
    random.Random(seed).shuffle(idx)
    return idx


def describe(entries, path):
    """What the report says of the load: {"kind": "prompts", "file", "entries", "conversations", "prompts",
    "chars_median", "chars_max"}."""
    chars = sorted(e["chars"] for e in entries)
    return {"kind": "prompts", "file": path, "entries": len(entries),
            "conversations": sum(1 for e in entries if "messages" in e),
            "prompts": sum(1 for e in entries if "prompt" in e),
            "chars_median": chars[len(chars) // 2] if chars else None, "chars_max": chars[-1] if chars else None}


def synthetic(input_len):
    """The load when no prompt set is given."""
    return {"kind": "synthetic", "input_len": int(input_len)}
