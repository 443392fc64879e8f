# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # What every module that runs on the target says of itself (community.general's attributes fragment habit): a
    # module keeps its own check_mode entry, or takes READ_ONLY's; a key it writes itself wins over the fragment's.
    DOCUMENTATION = r"""
attributes:
  diff_mode:
    support: none
    description: Changes no file a diff would show, so there is nothing to diff.
notes:
  - Runs on the target with the Python standard library only (Python 3.8 or later).
"""

    # Modules that only read the host.
    READ_ONLY = r"""
attributes:
  check_mode:
    support: full
    description: Reads only, so it runs the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing on the host, so there is nothing to diff.
notes:
  - Runs on the target with the Python standard library only (Python 3.8 or later).
"""
