# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state of the host's whole tree: every path under / on the root file system with its type, size, mode,
owner, mtime and link target, and a sha256 of each regular file's content: the whole content of a file up to
HASHED bytes (1 MiB), the first HASHED bytes of a larger one (weights: a write to them moves their size or mtime,
which the listing holds; a same-size edit past the first MiB with its mtime put back is the one change it misses).
Prints the digest of the listing; writes the listing to argv[1]. ``--flip FILE``: the positive control's edit. tests/unit/tools/test_tree_state.py shows it
catching a same-size, same-mtime edit of a small file (the positive control) and names what it leaves out.

Left out, because they change on their own while nothing of ours runs (the scenario checks that first, with two
snapshots around a no-op task): /proc, /sys, /dev, /run (kernel and runtime state), /tmp and /var/tmp (scratch:
Ansible's and systemd's private temporaries), /var/log (journald, sshd), /var/lib/systemd (timer stamps),
/root/.ansible (Ansible's module transfers), and the paths given after argv[1] (a refused model's own
<dest>.partial/.lock beside its dest, which the role may write; their parent directory is listed without its
mtime and size, which such an entry moves).
"""
import hashlib
import os
import stat
import sys

SKIP = ["/proc", "/sys", "/dev", "/run", "/tmp", "/var/tmp", "/var/log", "/var/lib/systemd", "/root/.ansible"]
HASHED = 1 << 20


def listing(extra, root="/", skip_default=None):
    """The listing's lines for the tree at root (the host's / in the scenario; a test's folder in the unit test)."""
    skip = set((SKIP if skip_default is None else skip_default) + extra)
    parents = set(os.path.dirname(x) for x in extra)
    lines = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) not in skip)
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            if path in skip:
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if os.path.isdir(path) and not os.path.islink(path) and os.path.ismount(path):
                dirnames[:] = [d for d in dirnames if d != name]
            if path in parents:
                line = "%s\t%o\t-\t%d:%d\t-" % (path, st.st_mode, st.st_uid, st.st_gid)
            else:
                line = "%s\t%o\t%d\t%d:%d\t%d" % (path, st.st_mode, st.st_size, st.st_uid, st.st_gid,
                                                  st.st_mtime_ns)
            if stat.S_ISLNK(st.st_mode):
                line += "\t-> " + os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                try:
                    with open(path, "rb") as f:
                        line += "\t" + hashlib.sha256(f.read(HASHED)).hexdigest()
                except OSError:
                    line += "\tunreadable"
            lines.append(line)
    return lines


def flip(path, offset=0):
    """Flip the low bit of one byte in place and put the file's mtime back (twice = as it was): the scenario's
    positive control, a change only the content hash can see."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 1]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def main(out, extra):
    lines = listing(extra)
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    print(hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest(), len(lines))


if __name__ == "__main__":
    if sys.argv[1] == "--flip":
        flip(sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2:])
