# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which architectures can the installed SGLang serve? Read from its source, never imported (stdlib only).

SGLang's model registry (``sglang/srt/models/registry.py``, the same in 0.5.9, 0.5.10.post1, 0.5.15.post1 and
0.5.23) imports every module of ``sglang/srt/models/`` and registers the class names its ``EntryClass`` holds: one
class (``EntryClass = LlamaForCausalLM``) or a list (``EntryClass = [A, B]``), at module level. Importing them needs
torch and a GPU stack; reading them does not. ``get_model_architecture`` (srt/model_loader/utils.py) serves a
config's ``architectures`` natively when one of them is registered; otherwise it falls back to the Transformers
implementation when the installed transformers has that class, or to the model's own code when ``auto_map`` names
an ``AutoModel`` (which needs ``--trust-remote-code``); otherwise it raises ``Model architectures [...] are not
supported`` or ``'X' is not a registered model``.

Before any of that, SGLang's get_config (srt/utils/hf_transformers_utils.py) loads config.json with Transformers'
AutoConfig, which needs a ``model_type`` it knows: one of ``CONFIG_MAPPING_NAMES``
(transformers/models/auto/configuration_auto.py) or of the configs SGLang registers (sglang/srt/configs/*.py,
``model_type = "..."``); without ``model_type`` it guesses from the path (a known type in the directory's name),
else it raises - SGLang then reports ``model_not_found`` (issue 33, on the H200).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import stat
import tempfile

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import caches

# Module-level assignment, a single name or a bracketed list (possibly over several lines).
_ENTRY = re.compile(r"^EntryClass\s*=\s*(\[[^\]]*\]|\(?[A-Za-z_][\w.]*\)?)", re.M)
_ENTRY_BYTES = re.compile(br"EntryClass\s*=\s*(?:\[[^\]]*\]|\(?[A-Za-z_][\w.]*\)?)")
_NAME = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*")
# importlib.util.find_spec of a top-level package locates it without running its __init__.
FIND_SOURCE = ("import importlib.util, json\n"
               "def loc(n):\n"
               "    s = importlib.util.find_spec(n)\n"
               "    return list(s.submodule_search_locations or []) if s else []\n"
               "print(json.dumps({'sglang': loc('sglang'), 'transformers': loc('transformers')}))\n")


def entry_classes(source):
    """Class names a model module's ``EntryClass`` registers (an empty list when it has none)."""
    names = []
    for m in _ENTRY.finditer(source):
        text = re.sub(r"#[^\n]*", "", m.group(1))
        names.extend(n.rsplit(".", 1)[-1] for n in _NAME.findall(text))
    return names


def supported_architectures(models_dir, disabled=()):
    """{architecture: module file} for every EntryClass under ``models_dir`` (``sglang/srt/models``).

    ``disabled``: module names SGLANG_DISABLED_MODEL_ARCHS leaves out (SGLang skips them by module name).
    """
    found = {}
    for name in sorted(os.listdir(models_dir)):
        if not name.endswith(".py") or name[:-3] in disabled:
            continue
        try:
            with open(os.path.join(models_dir, name), "rb") as f:
                data = f.read()
        except (IOError, OSError):
            continue
        # only the declarations are decoded: reading ~200 modules stays a few milliseconds
        at = data.find(b"EntryClass")
        while at != -1:
            m = _ENTRY_BYTES.match(data, at) if at == 0 or data[at - 1:at] == b"\n" else None
            if m:
                for arch in entry_classes(m.group(0).decode("utf-8", "replace")):
                    found.setdefault(arch, name)
            at = data.find(b"EntryClass", at + 10)
    return found


# Asked of the server's own Python: the model types its Transformers' AutoConfig knows, as it sees them (the source
# moved: 5.x keeps CONFIG_MAPPING_NAMES in auto_mappings.py and configuration_auto.py only updates it - a reader of
# one file found nothing on the H100 with 5.12.1 and the check turned itself off, issue 43).
TYPES_SOURCE = ("import json\n"
                "try:\n"
                "    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES as m\n"
                "    out = {'types': sorted(str(k) for k in m)}\n"
                "except BaseException as e:\n"
                "    out = {'error': '%s: %s' % (type(e).__name__, str(e)[:300])}\n"
                "print(json.dumps(out))\n")


def installed_model_types(python, env=None, timeout=120, run=None):
    """``(types, error)``: the model types the Transformers that ``python`` imports knows (``CONFIG_MAPPING_NAMES``,
    asked of that interpreter with the server's environment), or None and why not. The import runs with every
    cache it could make (SGLang's, Triton's, the Hub's) in a throwaway folder, removed afterwards: the check makes
    nothing where the server keeps its own."""
    if not python:
        return None, "no server python given"
    scratch = tempfile.mkdtemp(prefix="llmserve-sglang-types-")
    environ = {k: str(v) for k, v in (env or {}).items()}
    environ.update(caches.under(scratch))
    environ.update(HF_HOME=scratch + "/hf", HF_HUB_CACHE=scratch + "/hf/hub", HF_MODULES_CACHE=scratch + "/hf/modules",
                   TRANSFORMERS_CACHE=scratch + "/hf/hub", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    try:
        rc, stdout, stderr = run([python, "-c", TYPES_SOURCE], environ_update=environ, timeout=timeout)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in reversed(stdout.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("types"), list) and data["types"]:
            return set(t for t in data["types"] if isinstance(t, str)), None
        if isinstance(data, dict) and data.get("error"):
            return None, "%s could not import Transformers' AutoConfig table (%s)" % (
                python, untrusted.printable(data["error"], 300))
        break
    tail = (stderr.strip().splitlines() or ["no output, rc %d" % rc])[-1]
    return None, "%s did not list Transformers' model types (%s)" % (python, untrusted.printable(tail, 300))


def find_models_dirs(python, env=None, timeout=60, run=None):
    """``(sglang_models, transformers_models, error)``: ``sglang/srt/models`` and ``transformers/models`` of the
    packages ``python`` would import, found without importing either (None where absent)."""
    if not python:
        return None, None, "no server python given"
    rc, stdout, stderr = run([python, "-c", FIND_SOURCE], environ_update={k: str(v) for k, v in (env or {}).items()},
                             timeout=timeout)
    if rc in (124, 127):
        return None, None, "could not run %s (%s)" % (python, stderr.strip() or "rc %d" % rc)
    try:
        found = json.loads((stdout.strip().splitlines() or ["{}"])[-1])
    except ValueError:
        found = {}
    dirs = []
    for pkg, sub in (("sglang", ("srt", "models")), ("transformers", ("models",))):
        dirs.append(next((os.path.join(loc, *sub) for loc in found.get(pkg) or []
                          if os.path.isdir(os.path.join(loc, *sub))), None))
    error = None if dirs[0] else "no sglang/srt/models in the sglang %s imports" % python
    return dirs[0], dirs[1], error


def installed(python, env, run, notes, unchecked):
    """What the server's ``python`` would import, for the servability check: ``{models, transformers, disabled,
    model_types, model_types_error}``, or None when SGLang's registry cannot be read (said in ``unchecked``, as is
    an external model package no one reads here). The model types are asked of ``python``
    (:func:`installed_model_types`), else read from the Transformers source (said in ``notes``)."""
    env = env or {}
    models, transformers, error = find_models_dirs(python, env, run=run)
    if error:
        unchecked.append("architectures and model types not checked: %s" % error)
        return None
    if env.get("SGLANG_EXTERNAL_MODEL_PACKAGE"):
        unchecked.append("architectures and model types not checked: SGLANG_EXTERNAL_MODEL_PACKAGE %s adds models "
                         "not read here" % untrusted.printable(str(env["SGLANG_EXTERNAL_MODEL_PACKAGE"]), 120))
        return None
    types, why = installed_model_types(python, env, run=run)
    if types is None:
        types = transformers_model_types(transformers)
        if types is not None:
            notes.append("model types read from the Transformers source in %s (%s)" % (transformers, why))
            why = None
        elif not transformers:
            why = "%s; no transformers package found either" % why
        else:
            why = "%s; nor could they be read from %s" % (why, transformers)
    disabled = [m for m in str(env.get("SGLANG_DISABLED_MODEL_ARCHS", "")).split(",") if m]
    return {"models": models, "transformers": transformers, "disabled": disabled, "model_types": types,
            "model_types_error": why}


def _transformers_has(models_root, model_type, arch):
    """Does the installed transformers define ``arch`` for ``model_type`` (transformers/models/<type>/modeling_*)?"""
    if not models_root or not model_type:
        return False
    d = os.path.join(models_root, str(model_type).replace("-", "_"))
    if not os.path.isdir(d):
        return False
    pattern = re.compile(r"^class %s\(" % re.escape(arch), re.M)
    for name in os.listdir(d):
        if name.startswith("modeling_") and name.endswith(".py"):
            try:
                with open(os.path.join(d, name), "rb") as f:
                    if pattern.search(f.read().decode("utf-8", "replace")):
                        return True
            except (IOError, OSError):
                continue
    return False


_CONFIG_NAMES_AT = re.compile(r"^CONFIG_MAPPING_NAMES\s*(?::[^=\n]*)?(?:=\s*[\w.\[\], ]*|\.update)\(", re.M)
_CONFIG_PAIR = re.compile(r'\(\s*"([^"\s]+)"\s*,\s*"(\w+)"\s*,?\s*\)')
_CONFIG_ENTRY = re.compile(r'"([^"\s]+)"\s*:\s*"(\w+Config)"')
_SGLANG_MODEL_TYPE = re.compile(r'^\s+model_type\s*(?::\s*\w+\s*)?=\s*["\']([^"\']+)["\']', re.M)


def _balanced(text, start):
    """The text from the bracket at ``start`` to the one that closes it (to the end when none does)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i + 1]
    return text[start:]


def transformers_model_types(transformers_models):
    """The model types the installed Transformers' AutoConfig knows, read from its source without importing it (the
    fallback when its Python cannot be asked, :func:`installed_model_types`): every ``("type", "...Config")`` pair
    and ``"type": "...Config"`` entry of a ``CONFIG_MAPPING_NAMES`` assignment or ``.update`` in
    ``auto/configuration_auto.py`` and ``auto/auto_mappings.py`` (where 5.x moved the table). None when neither
    can be read or has that form."""
    if not transformers_models:
        return None
    found = set()
    for name in ("configuration_auto.py", "auto_mappings.py"):
        try:
            with open(os.path.join(transformers_models, "auto", name), "rb") as f:
                text = f.read(8 << 20).decode("utf-8", "replace")
        except (IOError, OSError):
            continue
        for m in _CONFIG_NAMES_AT.finditer(text):
            body = _balanced(text, m.end() - 1)
            found.update(p.group(1) for p in _CONFIG_PAIR.finditer(body))
            found.update(p.group(1) for p in _CONFIG_ENTRY.finditer(body))
    return found or None


def sglang_model_types(sglang_models):
    """The model types SGLang registers its own configs for (sglang/srt/configs/*.py beside srt/models)."""
    found = set()
    configs = os.path.join(os.path.dirname(sglang_models.rstrip("/")), "configs") if sglang_models else None
    if not configs or not os.path.isdir(configs):
        return found
    for name in os.listdir(configs):
        if name.endswith(".py"):
            try:
                with open(os.path.join(configs, name), "rb") as f:
                    found.update(_SGLANG_MODEL_TYPE.findall(f.read(4 << 20).decode("utf-8", "replace")))
            except (IOError, OSError):
                continue
    return found


def model_type_problems(config, sglang_models, transformer_types, model_dir=None, trust_remote_code=False,
                        what="config.json", unchecked=None, why=None):
    """Why AutoConfig (SGLang's get_config) cannot load ``config``: model_type missing or unknown to the installed
    Transformers and SGLang. Empty when it can. ``transformer_types``: the types the installed Transformers knows
    (:func:`installed_model_types`); None when they could not be read (``why``): then nothing is judged and what
    was not checked is added to ``unchecked``, never a silent pass."""
    auto_map = config.get("auto_map") if isinstance(config.get("auto_map"), dict) else {}
    if trust_remote_code and "AutoConfig" in auto_map:
        return []  # the model's own code defines its config
    if transformer_types is None:
        if unchecked is None:
            raise ValueError("model_type_problems: no model types and nowhere to say so")
        unchecked.append("%s model_type %s not checked: the model types of the installed Transformers could not be "
                         "read (%s)" % (what, untrusted.printable(config.get("model_type"), 80),
                                        why or "not given"))
        return []
    known = set(transformer_types) | sglang_model_types(sglang_models)
    model_type = untrusted.field(config, "model_type", str, what, fix="set it to the model's type (llama, qwen3, ...)")
    if model_type is None:
        if model_dir and any(t in str(model_dir) for t in known):
            return []  # AutoConfig guesses it from the path, as Transformers does
        return ["%s has no model_type: Transformers' AutoConfig cannot tell which model this is (SGLang stops with "
                "model_not_found): add model_type (the publisher's config.json has it: llama, qwen3, ...)" % what]
    if model_type in known:
        return []
    near = difflib.get_close_matches(model_type, sorted(known), n=3, cutoff=0.6)
    return ["%s model_type %s is unknown to the installed Transformers (%d types) and SGLang: AutoConfig cannot "
            "load it (SGLang stops with model_unsupported)%s: fix model_type, or install a Transformers that has "
            "it" % (what, untrusted.printable(model_type, 80), len(known),
                    ("; the nearest it knows: %s" % ", ".join(near)) if near else "")]


def _auto_map_files(auto_map):
    """Local module files ``auto_map`` refers to (``module.Class``; ``repo--module.Class`` lives elsewhere)."""
    files = set()
    for ref in auto_map.values():
        refs = ref if isinstance(ref, list) else [ref]
        for r in refs:
            if isinstance(r, str) and "--" not in r and "." in r:
                files.add(r.rsplit(".", 1)[0].replace(".", "/") + ".py")
    return sorted(files)


def _is_file_in(model_dir, rel):
    """Is ``rel`` a regular file inside ``model_dir`` (no link followed, no path out of the tree)?"""
    try:
        with untrusted.Tree(model_dir) as tree:
            st = tree.lstat(rel)
    except untrusted.Refused:
        return False
    return st is not None and stat.S_ISREG(st.st_mode)


def servable_problems(config, supported, model_dir=None, trust_remote_code=False, model_impl="auto",
                      transformers_models=None, what="model", unchecked=None):
    """Why the installed SGLang cannot serve a checkpoint whose config.json is ``config`` (empty: it can).

    ``supported``: the architectures SGLang registers; ``transformers_models``: the installed transformers'
    ``models`` directory, for the Transformers fallback (None: that fallback cannot be judged - said in
    ``unchecked``, or the model is let pass when no ``unchecked`` list is given).
    """
    archs = untrusted.field(config, "architectures", (list, str), what) or []
    if isinstance(archs, str):
        archs = [archs]
    if not all(isinstance(a, str) for a in archs):
        raise untrusted.Refused(what, "%s is not a list of class names" % untrusted.printable(archs, 80),
                                "restore the publisher's config.json", field="architectures")
    if not archs:
        return []  # SGLang warns and falls back; nothing certain to refuse
    impl = (model_impl or "auto").lower()
    if impl not in ("auto", "sglang") or any(a in supported for a in archs):
        return []
    auto_map = config.get("auto_map") if isinstance(config.get("auto_map"), dict) else {}
    if "AutoModel" in auto_map:
        if not trust_remote_code:
            return ["%s architectures %s are not in SGLang's registry and run only from the model's own code "
                    "(auto_map.AutoModel %s): set trust-remote-code (server_args: {trust-remote-code: true}) if "
                    "you trust that code" % (what, untrusted.printable(archs, 200),
                                             untrusted.printable(auto_map["AutoModel"], 120))]
        missing = [f for f in _auto_map_files(auto_map) if model_dir and not _is_file_in(model_dir, f)]
        if missing:
            return ["%s auto_map names %s, not in %s: the model's own code is missing"
                    % (what, ", ".join(missing), model_dir)]
        return []
    model_type = config.get("model_type")
    if transformers_models is None:
        if unchecked is not None:
            unchecked.append("%s architectures %s not checked: not in SGLang's registry, and the installed "
                             "Transformers' models could not be found to see whether SGLang can fall back on them"
                             % (what, untrusted.printable(archs[:5], 300)))
        return []
    if any(_transformers_has(transformers_models, model_type, a) for a in archs):
        return []
    near = []
    for arch in archs:
        near.extend(n for n in difflib.get_close_matches(arch, list(supported), n=4, cutoff=0.6) if n not in near)
    hint = ("; the nearest it supports: %s" % ", ".join(near[:5])) if near else ""
    return ["%s architectures %s (model_type %s): the installed SGLang has no such model (%d architectures in its "
            "registry, sglang/srt/models) and transformers has none to fall back on%s: use a checkpoint of a "
            "supported architecture, a newer SGLang, or fix config.json's architectures"
            % (what, untrusted.printable(archs[:5], 300) + (" and %d more" % (len(archs) - 5) if len(archs) > 5 else ""),
               untrusted.printable(model_type, 80), len(supported), hint)]
