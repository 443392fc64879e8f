#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: model_verify
short_description: Check that a model checkpoint on the host is whole and that its speculative draft fits it
version_added: "0.1.0"
description:
  - Runs on the target host, reads the files only; nothing is changed.
  - With the manifest that roles/models writes beside staged weights (C(.llmserve-manifest.json)), every file's
    size and mtime is compared to it and files whose mtime moved are hashed (O(mode=auto) or O(mode=cheap)); with
    O(mode=full) every file is hashed again (sha256, in parallel threads over every core).
  - In every mode the checkpoint's own structure is checked too - C(config.json) and a tokenizer present (the
    draft needs no tokenizer); for sharded safetensors every shard that C(model.safetensors.index.json) names
    exists, each shard's header parses and its tensors' byte ranges fit the file (the safetensors library refuses
    a file that is not exactly that long), and every tensor of the index's C(weight_map) is in the shard it names.
    A missing, short or unreadable shard is named, with its expected and actual size.
  - With O(draft_path) and O(algorithm) C(EAGLE) or C(EAGLE3) the draft's C(config.json) is checked against the
    target's - C(architectures) against the algorithm (an EAGLE-3 draft under C(EAGLE) accepts nothing in SGLang),
    C(target_hidden_size) and C(vocab_size) against the target's, and
    C(eagle_config.eagle_aux_hidden_state_layer_ids) against the target's layers.
  - With O(python) (the server's interpreter) the C(model_type) in C(config.json) is checked against the model types
    that interpreter's Transformers knows (asked of it - C(CONFIG_MAPPING_NAMES) - with every cache pointed at a
    throwaway folder; read from the Transformers source where it cannot be asked) and SGLang's own configs.
  - With O(python) (the server's interpreter) the architectures in C(config.json) are checked against the
    installed SGLang's model registry, read from its source (C(EntryClass) in C(sglang/srt/models/)) without
    importing it; an architecture SGLang lacks is let pass where SGLang would fall back on the installed
    transformers' class or, with O(trust_remote_code), on the model's own code (C(auto_map)); otherwise it is
    refused naming the nearest architectures SGLang supports.
  - With O(draft_path) and O(algorithm=EAGLE3) the draft's tensor shapes (from its safetensors headers - C(fc),
    C(embed_tokens), C(lm_head), the layer's projections) are checked against its own C(config.json) and the
    target's hidden size, vocabulary and aux layers.
  - With O(user) the module (run as root, no become needed) checks that this user can enter every directory on
    the way to each model and read every file at its top level - asked of the kernel in a child process that
    drops to the user's uid and groups, so modes, owners and ACLs all count.
  - What a user's request needs of the target (issue 45) - every token id of C(tokenizer.json) (its model vocabulary
    and C(added_tokens)) below C(config.json)'s C(vocab_size), else refused naming the count and the first
    offending tokens; with O(python), whether the model has a chat template and that template (C(tokenizer_config.json)'s C(chat_template),
    C(chat_template.jinja), C(chat_template.json)) rendered in the server's Python the way Transformers renders it
    (its sandboxed Jinja environment) over a system/user/assistant conversation, with and without
    C(add_generation_prompt), within 5 s, 1 MiB of output and 2 GiB of memory, as O(user) (C(nobody) without
    it - a template is the publisher's code, never rendered as root) - a syntax error or an exception is
    refused quoting the template's own message. A template that refuses only the system role, or a model with no
    template (unless O(chat_template) is given), is a warning.
  - The filesystem of each model is read from C(/proc/self/mountinfo); a network one (NFS, Lustre, FUSE, SMB, ...)
    is noted.
  - roles/server runs it before the running server is touched, on every start by default
    (C(server_verify_model)); it is usable alone.
author:
  - llmserve maintainers (@llmserve)
options:
  path:
    description: Absolute path of the target model directory.
    type: path
    required: true
  draft_path:
    description: Absolute path of the speculative draft directory, if any.
    type: path
  algorithm:
    description: The speculative algorithm the server runs (C(EAGLE), C(EAGLE3); others are not judged).
    type: str
    default: ""
  mode:
    description:
      - C(auto)/C(cheap) - the manifest's sizes and mtimes (hashing only files whose mtime moved), the structure.
      - C(full) - hash every file of the manifest, and the structure.
      - C(structure) - only the checkpoint's structure, even where there is a manifest.
    type: str
    choices: [auto, cheap, full, structure]
    default: auto
  workers:
    description: Files hashed at once (default - every core).
    type: int
  user:
    description: The user the server runs as; check it can read the models. Omitted - not checked.
    type: str
  python:
    description: The server's Python interpreter; check the architectures against the SGLang it would import.
    type: path
  env:
    description: The server's environment (C(PYTHONPATH), C(SGLANG_DISABLED_MODEL_ARCHS), ...) for O(python).
    type: dict
    default: {}
  trust_remote_code:
    description: SGLang's C(--trust-remote-code) is set (the model's own code in C(auto_map) may run).
    type: bool
    default: false
  model_impl:
    description: SGLang's C(--model-impl) (C(auto), C(sglang), C(transformers)); only C(auto)/C(sglang) are judged.
    type: str
    default: auto
  tokenizer_path:
    description: SGLang's C(--tokenizer-path); the tokenizer is checked there instead of in O(path).
    type: str
  skip_tokenizer_init:
    description: SGLang's C(--skip-tokenizer-init); no tokenizer is needed.
    type: bool
    default: false
  chat_template:
    description:
      - SGLang's C(--chat-template) (a template name or file); given, chat requests use it, not the model's own
        templates, which are then not rendered.
    type: str
  cache_dir:
    description:
      - A root-only directory where the module records the weights it found whole (every shard's and the index's
        size, mtime, ctime, inode); while they still match, the next run does not parse the headers again (the
        config, tokenizer, architecture, draft fit and readability are checked every time). roles/server uses
        C(/run/llmserve-sglang/model-check). Omitted - every run parses every header.
      - It is made by root with mode C(0700); one that exists with another owner or a looser mode, or below a
        directory another user can write, is refused (not trusted, not repaired) - remove it and it is made again.
      - O(mode=full) and check mode never use it (check mode writes nothing).
    type: path
  unknown:
    description:
      - What a check that cannot judge servability makes (O(python) given, but the installed Transformers' model
        types or SGLang's model registry could not be read through it, or C(SGLANG_EXTERNAL_MODEL_PACKAGE) adds
        models not read here) - C(refuse) a problem naming what and why, C(warn) a pass with one warning line naming
        the same. Either way it is listed in RV(unchecked). roles/server sets it from C(server_model_check_unknown).
    type: str
    choices: [refuse, warn]
    default: refuse
  fail:
    description: Fail the task on a problem (C(false) - report it in RV(problems) only).
    type: bool
    default: true
notes:
  - Check mode is supported; the module never changes anything.
"""

EXAMPLES = r"""
- name: Check the target and its EAGLE-3 draft before launching
  llmserve.sglang.model_verify:
    path: /models/Kimi-K2.5-int4
    draft_path: /models/Kimi-K2.5-eagle3
    algorithm: EAGLE3

- name: Also check that SGLang has the architecture and that the service user can read every file
  llmserve.sglang.model_verify:
    path: /models/Kimi-K2.5-int4
    python: /opt/sglang/venv/bin/python
    user: sglang

- name: Hash every file again (after a disk error, say)
  llmserve.sglang.model_verify:
    path: /models/Kimi-K2.5-int4
    mode: full
"""

RETURN = r"""
ok:
  description: Whether the target (and draft) passed every check.
  returned: always
  type: bool
problems:
  description: Every problem, each naming the model (C(target)/C(draft)), the file and what is wrong.
  returned: always
  type: list
  elements: str
  sample: ["target model-00003-of-00004.safetensors: short: expected 1073741920 bytes, found 536870912"]
models:
  description: >-
    Per model (C(target), C(draft)) - C(path), C(ok), C(method) (C(manifest-cheap), C(manifest-full),
    C(structure)), C(problems), C(notes), C(hashed) (files read in full), C(source) and C(revision) from the
    manifest, C(filesystem) (C(mount), C(fstype), C(source), C(network)), C(access_method) (C(kernel), C(self),
    C(mode)); C(fit) lists the draft-target mismatches (configs and tensor shapes).
  returned: always
  type: dict
elapsed:
  description: Seconds the checks took on the host.
  returned: always
  type: float
chat_template:
  description: Whether chat requests have a template (the model's own, or O(chat_template)); roles/server's READY
    sends one chat completion only then.
  returned: always
  type: bool
notes:
  description: Notes on the check (the model types read from the Transformers source, for one).
  returned: always
  type: list
  elements: str
unchecked:
  description: What could not be judged, and why (no sglang found for O(python), for one); refused or warned as
    O(unknown) says.
  returned: always
  type: list
  elements: str
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.host.run import module_runner
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import MODES, UNKNOWN, verify_pair
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import registry


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            draft_path=dict(type="path"),
            algorithm=dict(type="str", default=""),
            mode=dict(type="str", choices=list(MODES), default="auto"),
            workers=dict(type="int"),
            fail=dict(type="bool", default=True),
            user=dict(type="str"),
            python=dict(type="path"),
            env=dict(type="dict", default={}),
            trust_remote_code=dict(type="bool", default=False),
            model_impl=dict(type="str", default="auto"),
            tokenizer_path=dict(type="str", no_log=False),
            skip_tokenizer_init=dict(type="bool", default=False),
            cache_dir=dict(type="path"),
            unknown=dict(type="str", choices=list(UNKNOWN), default="refuse"),
            chat_template=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for key in ("path", "draft_path"):
        if p[key] and not p[key].startswith("/"):
            module.fail_json(msg="%s %r is a relative path; give the model directory's absolute path" % (key, p[key]))
    if p["cache_dir"]:
        # the cache is read back and trusted: made by root, root's alone, below directories only root writes
        # (host/owned_dirs); an existing one with another owner or a looser mode is refused, not used
        try:
            owned_dirs.ensure_all([{"path": p["cache_dir"], "uid": os.geteuid(), "gid": os.getegid(), "mode": 0o700,
                                    "what": "the model check's cache_dir", "cache": True}], check=module.check_mode)
        except owned_dirs.Refused as e:
            module.fail_json(msg=str(e))
    # what no reader may open (a FIFO shard, a link out of the tree or to /dev/zero), refused before any is read
    hostile = ["%s %s" % (what, x) for key, what in (("path", "target"), ("draft_path", "draft")) if p[key]
               and os.path.isdir(p[key]) for x in contain.hostile_entries(p[key])]
    if hostile:
        module.fail_json(msg="the model is not fit to serve:\n  - " + "\n  - ".join(hostile), ok=False,
                         problems=hostile, changed=False)
    start = time.time()
    notes, unchecked, sglang = [], [], None
    if p["python"]:
        sglang = registry.installed(p["python"], p["env"], module_runner(module), notes, unchecked)
    verdict = verify_pair(p["path"], p["draft_path"], p["algorithm"], p["mode"], p["workers"], user=p["user"],
                          sglang=sglang, trust_remote_code=p["trust_remote_code"], model_impl=p["model_impl"],
                          tokenizer_path=p["tokenizer_path"], skip_tokenizer_init=p["skip_tokenizer_init"],
                          cache_dir=None if module.check_mode else p["cache_dir"],  # check mode writes nothing
                          unchecked=unchecked, unknown=p["unknown"],
                          chat={"python": p["python"], "env": p["env"], "run": module_runner(module),
                                "given": p["chat_template"], "user": p["user"]} if p["python"] else None)
    if verdict["unchecked"] and p["unknown"] == "warn":
        module.warn("model check: not judged (unknown: warn lets it pass): " + "; ".join(verdict["unchecked"]))
    for warning in verdict.pop("warnings"):
        module.warn(warning)
    for key, what in (("path", "the model"), ("draft_path", "the draft")):
        loose = contain.world_writable_warning(p[key], what) if p[key] and os.path.isdir(p[key]) else None
        if loose:
            module.warn(loose)
    result = dict(changed=False, elapsed=round(time.time() - start, 3), notes=notes, **verdict)
    if not verdict["ok"] and p["fail"]:
        module.fail_json(msg="the model is not fit to serve:\n  - " + "\n  - ".join(verdict["problems"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
