# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a staged model whole, and does its draft fit? One verdict for model_verify and roles/server's preflight."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models.checkpoint import check_checkpoint, read_json
from ansible_collections.llmserve.sglang.plugins.module_utils.models.draft import draft_problems

MODES = ("auto", "cheap", "full", "structure")


def verify_tree(path, mode="auto", require_tokenizer=True, workers=None):
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
    structure, notes = check_checkpoint(path, require_tokenizer=require_tokenizer)
    result["problems"].extend(p for p in structure if p not in result["problems"])
    result["notes"].extend(notes)
    result["ok"] = not result["problems"]
    return result


def verify_pair(target_path, draft_path=None, algorithm=None, mode="auto", workers=None):
    """The verdict on a target (and its draft): every problem named with its model."""
    results = {"target": verify_tree(target_path, mode, require_tokenizer=True, workers=workers)}
    if draft_path:
        results["draft"] = verify_tree(draft_path, mode, require_tokenizer=False, workers=workers)
    problems = ["target %s" % p for p in results["target"]["problems"]]
    if draft_path:
        problems += ["draft %s" % p for p in results["draft"]["problems"]]
        fit = []
        if algorithm:
            try:
                fit = draft_problems(read_json(os.path.join(draft_path, "config.json")),
                                     read_json(os.path.join(target_path, "config.json")), algorithm)
            except ValueError:
                fit = []  # an unreadable config.json is already named above
        results["fit"] = fit
        problems += fit
    return {"ok": not problems, "problems": problems, "models": results}
