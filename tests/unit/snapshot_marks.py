# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The check that each of server_ready's readers (ready/read_*.py) fills its own part of the snapshot and no other:
a verdicts.Snapshot whose every field holds a mark no reader writes, but for the inputs a test gives."""
from ansible_collections.llmserve.sglang.plugins.module_utils.ready.verdicts import Snapshot

MARK = object()


def marked(**inputs):
    """A snapshot with ``inputs`` set and every other field at MARK."""
    s = Snapshot(**inputs)
    for name in Snapshot.FIELDS:
        if name not in inputs:
            setattr(s, name, MARK)
    return s


def written(s, **inputs):
    """The fields a reader wrote: no longer MARK, inputs left out (each input must still hold its value)."""
    for name, value in inputs.items():
        assert getattr(s, name) == value, "input %s was overwritten" % name
    return set(name for name in Snapshot.FIELDS if getattr(s, name) is not MARK) - set(inputs)
