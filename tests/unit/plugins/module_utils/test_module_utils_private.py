# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils ships to the hosts and is private to the collection: every file of it says so in its first lines
(community.crypto's wording), so nobody outside builds on it."""
import os

import pytest

import testpaths

NOTE = ("# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.\n"
        "# Do not use this from other collections or standalone plugins/modules!\n")
ROOT = os.path.join(testpaths.REPO, "plugins", "module_utils")


def says_private(path):
    """True when one of the file's first five lines starts the note and the next ends it; an empty file is fine."""
    with open(path) as handle:
        head = [handle.readline() for _line in range(6)]
    return not any(head) or any("".join(head[i:i + 2]) == NOTE for i in range(5))


def files():
    return sorted(os.path.relpath(os.path.join(root, n), ROOT) for root, _d, names in os.walk(ROOT)
                  for n in names if n.endswith(".py"))


@pytest.mark.parametrize("rel", files())
def test_every_module_utils_file_says_it_is_private(rel):
    assert says_private(os.path.join(ROOT, rel)), (
        "plugins/module_utils/%s: add after its coding line:\n%s" % (rel, NOTE))


def test_the_check_can_fail(tmp_path):
    bare = tmp_path / "bare.py"
    bare.write_text("# -*- coding: utf-8 -*-\n# Copyright: (c) 2026, llmserve.sglang contributors\n")
    noted = tmp_path / "noted.py"
    noted.write_text("# -*- coding: utf-8 -*-\n" + NOTE + "# Copyright: (c) 2026, llmserve.sglang contributors\n")
    half = tmp_path / "half.py"
    half.write_text("# -*- coding: utf-8 -*-\n" + NOTE.splitlines(True)[0])
    empty = tmp_path / "__init__.py"
    empty.write_text("")
    assert [says_private(str(p)) for p in (bare, noted, half, empty)] == [False, True, False, True]
    assert len(files()) > 50
