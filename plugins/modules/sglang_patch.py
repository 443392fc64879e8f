#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sglang_patch
short_description: Apply unified-diff patches to an installed SGLang, idempotently and all-or-nothing
version_added: "0.1.0"
description:
  - Applies a list of unified diffs to the files under O(root) (normally the virtualenv's C(site-packages)),
    in pure Python with exact context matching (hunks may move by an offset, no fuzz).
  - A patch is selected only when the installed SGLang O(version) matches its C(versions) and one of the host's
    O(compute_caps) matches its C(gpus).
  - Already-applied patches are detected by a reverse check, so a second run changes nothing and a reinstalled
    SGLang (pristine files) is patched again.
  - Every hunk of every file of every selected patch is checked in memory before anything is written; a patch that
    no longer applies fails naming the file and hunk, and no file is touched.
  - The applied set (with each diff) is recorded in O(state_file). A recorded patch that is no longer selected is
    reverted. RV(state) is a hash of the applied set, for restarting the server after a change.
  - Supports check mode and C(--diff) (before/after of every file the run changes).
options:
  root:
    description: Directory the diff paths are relative to (after stripping C(strip) components).
    type: path
    required: true
  patches:
    description: Patches, applied in order.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Unique id of the patch (recorded in the state file), e.g. V(sm120-allreduce-fusion).
        type: str
        required: true
      diff:
        description: Unified diff text (C(diff -u) or C(git diff)); paths like C(a/sglang/srt/x.py).
        type: str
        required: true
      versions:
        description:
          - SGLang versions the patch is for. A specifier string (V(>=0.5.9,<0.5.11), V(0.5.23), V(==0.5.*);
            comma means AND) or a list of them (any may match). Omitted means every version.
        type: raw
      gpus:
        description:
          - Compute capabilities the patch is for, e.g. V(["12.0"]); V(12) matches every 12.x. Omitted or empty
            means every host.
        type: list
        elements: str
      strip:
        description: Leading path components to strip from diff file names (like C(patch -p)).
        type: int
        default: 1
  version:
    description: Installed SGLang version, matched against each patch's C(versions). Omitted means no filtering.
    type: str
  compute_caps:
    description: Compute capabilities of the host's GPUs (e.g. V(["12.0", "12.0"])), matched against C(gpus).
    type: list
    elements: str
    default: []
  state_file:
    description:
      - JSON file recording the applied set (normally inside the virtualenv, so a new virtualenv starts clean).
      - Omitted means nothing is recorded and dropped patches are not reverted.
    type: path
attributes:
  check_mode:
    support: full
    description: Reports which patches would be applied or reverted and writes nothing.
  diff_mode:
    support: full
    description: With C(--diff), returns the before/after of every file it changes (or would change in check mode).
notes:
  - Pure Python; no C(patch) binary needed on the target. File modes are kept; the module's C(.pyc) in
    C(__pycache__) is removed after a change.
  - Deleting files through a patch is not supported; creating files (C(--- /dev/null)) is.
author:
  - llmserve maintainers (@llmserve)
"""

EXAMPLES = r"""
- name: Apply the SM120 patch set to SGLang 0.5.23 in a virtualenv
  llmserve.sglang.sglang_patch:
    root: /opt/sglang/venvs/0.5.23/lib/python3.11/site-packages
    version: "0.5.23"
    compute_caps: ["12.0"]
    state_file: /opt/sglang/venvs/0.5.23/llmserve-patches.json
    patches:
      - name: sm120-symm-mem
        diff: "{{ lookup('ansible.builtin.file', 'patches/0.5.23/sm120-symm-mem.diff') }}"
        versions: "==0.5.23"
        gpus: ["12"]

- name: A user patch for the 0.5.9-0.5.10 line only
  llmserve.sglang.sglang_patch:
    root: "{{ site_packages }}"
    version: "0.5.9"
    patches:
      - name: eagle-disable-above-batch
        diff: "{{ lookup('ansible.builtin.file', 'files/eagle_disable_batch.diff') }}"
        versions: ">=0.5.9,<0.5.11"
"""

RETURN = r"""
applied:
  description: Names of the patches in effect after the run, in order (also the recorded set).
  returned: always
  type: list
  elements: str
  sample: [sm120-allreduce-fusion, sm120-symm-mem]
newly_applied:
  description: Patches applied by this run.
  returned: always
  type: list
  elements: str
already_applied:
  description: Selected patches found already applied (reverse check).
  returned: always
  type: list
  elements: str
reverted:
  description: Recorded patches no longer selected, reverted by this run.
  returned: always
  type: list
  elements: str
skipped:
  description: Patches not selected, with the reason (version or GPU mismatch).
  returned: always
  type: list
  elements: dict
  sample: [{name: sm120-symm-mem, reason: "for GPUs 12, host has 9.0"}]
files_changed:
  description: Files (relative to O(root)) this run changes.
  returned: always
  type: list
  elements: str
state:
  description: Hash of the applied set (C(none) when empty); changes whenever a patch is added, removed or edited.
  returned: always
  type: str
  sample: 4af7af49a40508d3
previous_state:
  description: Hash of the set recorded before this run.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.install.patch import PatchError, run


def main():
    module = AnsibleModule(
        argument_spec=dict(
            root=dict(type="path", required=True),
            patches=dict(
                type="list",
                elements="dict",
                default=[],
                options=dict(
                    name=dict(type="str", required=True),
                    diff=dict(type="str", required=True),
                    versions=dict(type="raw"),
                    gpus=dict(type="list", elements="str"),
                    strip=dict(type="int", default=1),
                ),
            ),
            version=dict(type="str"),
            compute_caps=dict(type="list", elements="str", default=[]),
            state_file=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        result = run(
            p["root"],
            p["patches"],
            version=p["version"],
            compute_caps=p["compute_caps"],
            state_file=p["state_file"],
            check_mode=module.check_mode,
        )
    except (PatchError, ValueError) as e:
        module.fail_json(msg=str(e))
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    module.exit_json(**result)


if __name__ == "__main__":
    main()
