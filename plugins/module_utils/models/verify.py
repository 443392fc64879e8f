# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a staged model whole, and does its draft fit? One verdict for model_verify and roles/server's preflight."""

from __future__ import annotations

import hashlib
import json
import os

from ansible_collections.llmserve.sglang.plugins.module_utils.host import access, mounts, untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models import serving
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import (
    check_checkpoint, read_config, structure_stamp, tensor_headers, tokenizer_problems, unexpected)
from ansible_collections.llmserve.sglang.plugins.module_utils.models.draft import (
    d2t_problems, draft_problems, shape_problems)
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import registry

MODES = ("auto", "cheap", "full", "structure")
UNKNOWN = ("refuse", "warn")


def _cache_file(cache_dir, path):
    return os.path.join(cache_dir, hashlib.sha256(os.path.realpath(path).encode("utf-8")).hexdigest() + ".json")


def _known_whole(cache_dir, path):
    if not cache_dir:
        return None
    try:
        with open(_cache_file(cache_dir, path)) as f:
            data = json.load(f)
        return data["stamp"] if data.get("path") == os.path.realpath(path) else None
    except (IOError, OSError, ValueError, KeyError, TypeError):
        return None


def _remember_whole(cache_dir, path, stamp):
    """Record that the weights under ``stamp`` were whole (root-only directory; a failure only costs a re-parse)."""
    if not cache_dir or stamp is None:
        return
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        target = _cache_file(cache_dir, path)
        with open(target + ".tmp", "w") as f:
            json.dump({"path": os.path.realpath(path), "stamp": stamp}, f)
        os.rename(target + ".tmp", target)
    except (IOError, OSError):
        pass


def verify_tree(path, mode="auto", require_tokenizer=True, workers=None, cache_dir=None):
    """Check one model tree. Returns a dict: ok, method (manifest-cheap/manifest-full/structure), problems, notes,
    hashed (files read in full).

    ``auto`` and ``cheap`` use the manifest when there is one (size + mtime, hashing only files whose mtime moved)
    and the checkpoint's structure otherwise; ``full`` hashes every file of the manifest; ``structure`` ignores it.
    The structure is checked in every mode: a manifest written for an incomplete tree must not vouch for it.
    """
    result = {"path": path, "problems": [], "notes": [], "hashed": 0, "method": "structure"}
    if not os.path.isdir(path):
        result["problems"].append("%s: no such directory (stage the model first)" % path)
        result["ok"] = False
        return result
    manifest = None
    if mode != "structure":
        try:
            manifest = mf.load(path)
        except ValueError as e:
            result["problems"].append(str(e))
    if manifest is not None:
        full = mode == "full"
        problems, hashed = mf.verify(path, manifest, full=full, workers=workers)
        result["problems"].extend(problems)
        result["hashed"] = hashed
        result["method"] = "manifest-full" if full else "manifest-cheap"
        result["source"] = manifest.get("source")
        result["revision"] = manifest.get("revision")
    elif mode == "full":
        result["notes"].append("no manifest: a full check is not possible, the structure was checked")
    # the headers of weights found whole before, unchanged since (every start re-checks: roles/server's cache_dir)
    before = _known_whole(cache_dir, path) if mode != "full" else None
    stamp = structure_stamp(path) if cache_dir else None
    structure, notes = check_checkpoint(path, require_tokenizer=require_tokenizer, known_whole=before)
    if not structure and stamp is not None and stamp != before and stamp == structure_stamp(path):
        _remember_whole(cache_dir, path, stamp)
    result["problems"].extend(p for p in structure if p not in result["problems"])
    result["notes"].extend(notes)
    result["ok"] = not result["problems"]
    return result


def readable_problems(path, user, what):
    """What ``user`` (the server's) cannot read of the model at ``path``: the directories on the way, the directory
    itself and every file at its top level. ``(problems, method)``; method as host/access.denied says."""
    checks = [(d, access.ENTER) for d in access.ancestors(path)] + [(path, access.LIST)]
    try:
        names = sorted(os.listdir(path))
    except OSError:
        names = []  # the directory's own LIST check below names it
    checks += [(os.path.join(path, n), access.READ) for n in names
               if not n.startswith(".") and os.path.isfile(os.path.join(path, n))]
    try:
        ident = access.identity(user)
    except KeyError:
        return ["%s: the server user %s does not exist on this host: create it or set server_user" % (what, user)], None
    denied, method = access.denied(user, checks)
    who = "the server user %s (uid %d, groups %s)" % (user, ident[0], ",".join(str(g) for g in ident[2]))
    fix = ("make it readable for that user (chmod o+r / o+x on directories, or a group it is in) or set server_user "
           "to one that can")
    problems, groups = [], {}
    for p, want, why in denied:
        if want == access.READ:  # files alike (one cause, one mode and owner) are named in one line
            groups.setdefault((os.path.dirname(p), why, access.describe(p)), []).append(os.path.basename(p))
            continue
        verb = "enter this directory" if want == access.ENTER else "list this directory"
        problems.append("%s %s: %s cannot %s (%s; %s): %s" % (what, p, who, verb, why, access.describe(p), fix))
    for (folder, why, mode), names in sorted(groups.items()):
        if len(names) == 1:
            problems.append("%s %s: %s cannot read this file (%s; %s): %s"
                            % (what, os.path.join(folder, names[0]), who, why, mode, fix))
        else:
            shown = ", ".join(names[:3]) + (" and %d more" % (len(names) - 3) if len(names) > 3 else "")
            problems.append("%s %s: %s cannot read %d files (%s; %s): %s: %s"
                            % (what, folder, who, len(names), why, mode, shown, fix))
    return problems, method


def _filesystem(path):
    fs = mounts.filesystem(path)
    notes = []
    if fs and fs["network"]:
        notes.append("%s is on a network filesystem (%s at %s, from %s): every shard is read over the network "
                     "at each start" % (path, fs["fstype"], fs["mount"], fs["source"]))
    return fs, notes


def verify_pair(target_path, draft_path=None, algorithm=None, mode="auto", workers=None, user=None, sglang=None,
                trust_remote_code=False, model_impl="auto", tokenizer_path=None, skip_tokenizer_init=False,
                cache_dir=None, unchecked=(), unknown="refuse", chat=None):
    """The verdict on a target (and its draft): every problem named with its model.

    ``user``: also check the server user can read what SGLang reads. ``sglang``: {models, transformers, disabled,
    model_types, model_types_error}: the installed packages' model directories (registry.find_models_dirs), the
    model types its Transformers knows (None: unreadable, and why) and SGLANG_DISABLED_MODEL_ARCHS - also check that
    SGLang has the architectures and AutoConfig the model type. ``tokenizer_path`` / ``skip_tokenizer_init``:
    SGLang's flags of those names (the tokenizer is checked where SGLang will read it).

    ``unchecked``: what the caller could not check (the registry could not be read, say). With what this check could
    not judge either, it is returned as ``unchecked``; ``unknown`` says what it makes: ``refuse`` (the default) a
    problem each, ``warn`` a pass (the caller warns in one line). Never a silent pass.
    ``chat``: {python, env, run, given (SGLang's --chat-template)}: also render the chat template in the server's
    python (models/serving.py); the tokenizer's ids are held to vocab_size in any case.
    """
    own_tokenizer = not tokenizer_path and not skip_tokenizer_init
    results = {"target": verify_tree(target_path, mode, require_tokenizer=own_tokenizer, workers=workers,
                                     cache_dir=cache_dir)}
    if draft_path:
        results["draft"] = verify_tree(draft_path, mode, require_tokenizer=False, workers=workers, cache_dir=cache_dir)
    if tokenizer_path and not skip_tokenizer_init and str(tokenizer_path).startswith("/"):
        if os.path.isdir(tokenizer_path):
            results["target"]["problems"].extend("tokenizer-path %s: %s" % (tokenizer_path, p)
                                                 for p in tokenizer_problems(tokenizer_path))
        else:
            results["target"]["problems"].append("tokenizer-path %s: no such directory" % tokenizer_path)
    paths = [("target", target_path)] + ([("draft", draft_path)] if draft_path else [])
    configs = {}
    not_judged = list(unchecked or ())
    for what, path in paths:
        res = results[what]
        res["filesystem"], notes = _filesystem(path)
        res["notes"].extend(notes)
        if not os.path.isdir(path):
            continue
        try:
            configs[what] = _config(path)
        except (untrusted.Refused, OSError):
            configs[what] = None  # named by the structure check
        config = configs[what]
        if sglang and sglang.get("models") and isinstance(config, dict):
            try:
                res["problems"].extend(_servable(sglang, config, path, trust_remote_code, model_impl,
                                                 not_judged, what))
            except untrusted.Refused as e:
                res["problems"].append(str(e))
            except Exception as e:  # never a traceback: pylint: disable=broad-except
                res["problems"].append(unexpected("config.json", e, "reading what the installed SGLang serves"))
        if what == "target" and isinstance(config, dict) and not skip_tokenizer_init:
            problems, warnings, has = _request_problems(tokenizer_path or path, config, chat)
            res["problems"].extend(problems)
            res.setdefault("warnings", []).extend(warnings)
            results["chat_template"] = has
        if user is not None:
            denied, res["access_method"] = readable_problems(path, user, "")
            res["problems"].extend(p.strip() for p in denied)
        res["ok"] = not res["problems"]
    problems = ["target %s" % p for p in results["target"]["problems"]]
    if draft_path:
        problems += ["draft %s" % p for p in results["draft"]["problems"]]
        fit = []
        if algorithm and configs.get("draft") is not None and configs.get("target") is not None:
            fit = fit_problems(draft_path, configs["draft"], configs["target"], algorithm)
        results["fit"] = fit
        problems += fit
    if unknown != "warn":
        problems += ["%s: the servability of the model cannot be judged, refused (set server_model_check_unknown: "
                     "warn, or model_verify's unknown: warn, to let it pass)" % u for u in not_judged]
    return {"ok": not problems, "problems": problems, "models": results, "unchecked": not_judged,
            "chat_template": bool(results.pop("chat_template", False)),
            "warnings": results["target"].pop("warnings", [])}


def _identity(user):
    """(uid, gid, [gids]) of the server user to render a template as; 'nobody' when none is given, or the user is
    unknown (root never renders it)."""
    for name in (user, "nobody"):
        if name is not None:
            try:
                return access.identity(name)
            except KeyError:
                continue
    return None


def _request_problems(tok_dir, config, chat):
    """What a request needs (issue 45): the tokenizer's ids inside vocab_size, and with ``chat`` a chat template
    that renders. (problems, warnings, has a chat template)."""
    if not str(tok_dir).startswith("/") or not os.path.isdir(tok_dir):
        return [], [], False
    try:
        with untrusted.Tree(tok_dir) as tree:
            problems = serving.vocab_problems(tree, config)
            if chat is None:
                return problems, [], False
            found, warnings, has = serving.chat_problems(tree, chat.get("python"), chat.get("env"), chat.get("run"),
                                                         chat.get("given"), _identity(chat.get("user")))
            return problems + found, warnings, has
    except untrusted.Refused as e:
        return [str(e)], [], False
    except Exception as e:  # never a traceback: pylint: disable=broad-except
        return [unexpected("the tokenizer", e, "checking what a request needs")], [], False


def _config(path):
    with untrusted.Tree(path) as tree:
        return read_config(tree)


def _servable(sglang, config, path, trust_remote_code, model_impl, unchecked, model="target"):
    supported = registry.supported_architectures(sglang["models"], sglang.get("disabled") or ())
    own = []
    problems = registry.model_type_problems(config, sglang["models"], sglang.get("model_types"), path,
                                            trust_remote_code, what="config.json", unchecked=own,
                                            why=sglang.get("model_types_error"))
    problems += registry.servable_problems(config, supported, path, trust_remote_code, model_impl,
                                           sglang.get("transformers"), what="config.json", unchecked=own)
    unchecked.extend("%s %s" % (model, u) for u in own)
    return problems


def fit_problems(draft_path, draft_cfg, target_cfg, algorithm):
    """Does the draft fit the target: configs, tensor shapes, the d2t mapping; every error a named problem."""
    try:
        fit = draft_problems(draft_cfg, target_cfg, algorithm)
        with untrusted.Tree(draft_path) as tree:
            headers = tensor_headers(tree)  # only shards the index check let through
            shapes = dict((n, list(h.tensors[n][1])) for n, (_s, h) in headers.items())
            fit += shape_problems(shapes, draft_cfg, target_cfg, algorithm)
            d2t = next((n for n in headers if n.split(".")[-1] == "d2t"), None)
            if d2t is not None and (algorithm or "").upper() == "EAGLE3":
                shard, header = headers[d2t]
                try:
                    fit += d2t_problems(tree.tensor_values(shard, header, d2t), target_cfg)
                except untrusted.Refused as e:
                    fit.append("draft %s" % e)
        return fit
    except untrusted.Refused as e:
        return ["%s" % e]
    except Exception as e:  # never a traceback: pylint: disable=broad-except
        return [unexpected("the draft's config.json", e, "matching the draft to the target")]
