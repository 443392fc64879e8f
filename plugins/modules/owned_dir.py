#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: owned_dir
short_description: A directory the collection owns, made or changed only under the collection's one rule
version_added: "0.1.0"
description:
  - What the roles use instead of C(ansible.builtin.file) with C(state=directory) for a directory whose path comes
    from a setting - it runs as root, and C(ansible.builtin.file) would C(chmod) and C(chown) whatever already
    exists there.
  - The path is normalised (C(//), C(.), C(..), a trailing C(/)) and its links resolved on the host; a system
    directory (C(/etc), C(/var/lib), C(/usr/local), ...) or one that holds one is refused, and so is anything
    inside C(/proc), C(/sys), C(/dev) or C(/run) (a directory made under C(/sys/fs/cgroup) is a cgroup), the
    collection's own C(/run/llmserve-sglang) aside.
  - A missing directory is created with the owner, group and mode asked for, and the collection's marker
    (C(.llmserve-sglang-dir), owned by root, naming the directory). An existing one that already has them is left as
    it is; one that would need a C(chmod) or C(chown) is changed only when it holds the marker or is named in
    O(adopt), else refused naming it and O(adopt_setting).
  - O(cache=true) - a directory whose contents the collection reads back - is refused when it exists with another
    owner or a looser mode, or lies below a directory another user can write (marker or not).
  - The rule is C(plugins/module_utils/host/owned_dirs.py); roles/server's directories and the model check's cache
    go through it too.
author:
  - llmserve maintainers (@llmserve)
extends_documentation_fragment:
  - llmserve.sglang.attributes
options:
  path:
    description: The directory (absolute).
    type: path
    required: true
  owner:
    description: Its owner (a user name).
    type: str
    default: root
  group:
    description: Its group (a group name); V("") for any group (an existing directory keeps its own, a new one gets
      root's).
    type: str
    default: root
  mode:
    description: Its mode, octal as a string.
    type: str
    default: "0755"
  cache:
    description: Its contents are read back and trusted - refuse it with another owner or a looser mode.
    type: bool
    default: false
  adopt:
    description: Existing directories the collection may take over (C(chmod), C(chown), mark).
    type: list
    elements: path
    default: []
  adopt_setting:
    description: The setting that fills O(adopt), named in the refusal.
    type: str
    default: adopt
  follow:
    description:
      - Whether a path reached through a symbolic link (the directory itself or one above it) is judged as the
        directory it leads to. V(false) refuses it, naming both - for a directory the role then writes files into
        (a linked rules directory would have them written elsewhere).
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Judges the directory and reports what would change; makes and changes nothing.
seealso:
  - module: llmserve.sglang.server_instance
"""

EXAMPLES = r"""
- name: The folder of the CUDA environment file
  llmserve.sglang.owned_dir:
    path: "{{ cuda_env_file | dirname }}"
    mode: "0755"
"""

RETURN = r"""
path:
  description: The directory, normalised and with its links resolved on the host.
  returned: success
  type: str
changes:
  description: What was (or, in check mode, would be) created or changed.
  returned: always
  type: list
  elements: str
"""

import grp
import pwd

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host import owned_dirs


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            owner=dict(type="str", default="root"),
            group=dict(type="str", default="root"),
            mode=dict(type="str", default="0755"),
            cache=dict(type="bool", default=False),
            adopt=dict(type="list", elements="path", default=[]),
            adopt_setting=dict(type="str", default="adopt"),
            follow=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        mode = int(p["mode"], 8)
        uid, gid = pwd.getpwnam(p["owner"]).pw_uid, grp.getgrnam(p["group"]).gr_gid if p["group"] else -1
    except (ValueError, KeyError) as e:
        module.fail_json(msg="owned_dir %s: owner %s, group %s, mode %s: %s"
                         % (p["path"], p["owner"], p["group"], p["mode"], e), changes=[])
    spec = {"path": p["path"], "uid": uid, "gid": gid, "mode": mode, "what": "directory", "cache": p["cache"],
            "follow": p["follow"]}
    try:
        real = owned_dirs.resolve(p["path"])
        changes = owned_dirs.ensure_all([spec], p["adopt"], p["adopt_setting"], check=module.check_mode)
    except owned_dirs.Refused as e:
        module.fail_json(msg=str(e), changes=[])
    module.exit_json(changed=bool(changes), path=real, changes=changes)


if __name__ == "__main__":
    main()
