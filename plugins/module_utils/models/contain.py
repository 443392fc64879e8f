# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a source may name, and where the role may write: the one containment rule of roles/models (stdlib only).

The role runs as root. Every path that comes from outside - a manifest's entries, an index's shard names, a
tarball's members, a directory or host listing - goes through ``check_names`` before a byte is written: it must be
relative, already normalised (no ``.``/``..``/empty component, no leading ``/``), free of control characters and
backslashes, and name a plain file that is not also the directory of another entry. One bad entry refuses the
whole model, naming it. Files are then opened and removed through ``open_in``/``remove_in``, which walk the tree
one directory at a time with ``O_NOFOLLOW``: a symlink anywhere below the root is refused, never followed, even if
it appeared after the check. ``check_dest`` says which trees the role may own at all.
"""

from __future__ import annotations

import errno
import os
import stat

from ansible_collections.llmserve.sglang.plugins.module_utils.host import boundary, owned_dirs
# The one refusal, printable and control-character rule of the host boundary (host/boundary.py); the system-path
# rule is host/owned_dirs.py's (one rule for every directory the collection owns). These names stay here for the
# readers of this module.
from ansible_collections.llmserve.sglang.plugins.module_utils.host.boundary import CONTROL, Refused, printable

SYSTEM_PATHS, SYSTEM_TREES, MIN_DEPTH = owned_dirs.SYSTEM_PATHS, owned_dirs.SYSTEM_TREES, owned_dirs.MIN_DEPTH


def check_rel(rel, what="entry"):
    """``rel`` if it is a contained relative file path, else Refused naming it (escaped) and the rule it breaks."""
    if not isinstance(rel, str) or not rel:
        raise Refused("%s %s is not a path" % (what, printable(rel)))
    if CONTROL.search(rel) or "\\" in rel:
        raise Refused("%s %s has a control character or a backslash" % (what, printable(rel)))
    if rel.startswith("/"):
        raise Refused("%s %s is absolute" % (what, printable(rel)))
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise Refused("%s %s is not a normalised path inside the tree (empty, . or .. component)"
                      % (what, printable(rel)))
    if any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts) or len(rel) > 4000:
        raise Refused("%s %s is longer than a file system allows" % (what, printable(rel)[:80]))
    return rel


def check_names(rels, what="entry"):
    """Every name of ``rels`` checked; Refused naming each bad one (all at once). A name that is also another
    name's directory (``a`` and ``a/b``) is refused: one of them could not be a plain file."""
    problems = []
    names = set()
    for rel in rels:
        try:
            names.add(check_rel(rel, what))
        except Refused as e:
            problems.append(str(e))
    for rel in sorted(names):
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in names:
                problems.append("%s %s is both a file and the directory of %s" % (what, "/".join(parts[:i]), rel))
                break
    if problems:
        raise Refused("; ".join(problems[:10]) + ("; and %d more" % (len(problems) - 10) if len(problems) > 10 else ""))
    return sorted(names)


def _dir_fd(root, parts, create):
    """An fd of ``root``/``parts`` reached without following a symlink below ``root`` (created with ``create``)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return boundary.walk(fd, parts, create)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused("%s/%s is a symlink or not a directory; refused (nothing is followed out of the tree)"
                          % (printable(root), printable("/".join(parts))))
        raise
    finally:
        os.close(fd)


def open_in(root, rel, flags, mode=0o644):
    """os.open of ``root``/``rel`` for a contained ``rel``, no symlink followed anywhere below ``root``; parent
    directories are created for a write. The file opened must be a plain file."""
    check_rel(rel)
    parts = rel.split("/")
    writing = bool(flags & (os.O_WRONLY | os.O_RDWR))
    dfd = _dir_fd(root, parts[:-1], create=writing)
    try:
        try:
            fd = os.open(parts[-1], flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=dfd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise Refused("%s/%s is a symlink; refused" % (printable(root), printable(rel)))
            raise
    finally:
        os.close(dfd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused("%s/%s is not a plain file; refused" % (printable(root), printable(rel)))
    return fd


def lstat_in(root, rel):
    """os.lstat of ``root``/``rel`` reached without following a symlink; None when it does not exist."""
    check_rel(rel)
    parts = rel.split("/")
    try:
        dfd = _dir_fd(root, parts[:-1], create=False)
    except OSError:
        return None
    try:
        return os.lstat(parts[-1], dir_fd=dfd)
    except OSError:
        return None
    finally:
        os.close(dfd)


def remove_in(root, rel):
    """Remove the file ``root``/``rel`` (never a directory, never through a symlink); whether it was there."""
    check_rel(rel)
    parts = rel.split("/")
    try:
        dfd = _dir_fd(root, parts[:-1], create=False)
    except OSError:
        return False
    try:
        os.unlink(parts[-1], dir_fd=dfd)
        return True
    except OSError as e:
        if e.errno == errno.ENOENT:
            return False
        raise
    finally:
        os.close(dfd)


under = owned_dirs.under


def check_dest(dest):
    """Problems with ``dest`` as a tree the role would own and replace: [] when it may be used.

    Relative, unnormalised, control characters, a system directory or a parent of one, anything below a system
    tree, a home directory itself, too shallow; the same rules for where it really points (a symlink on the way
    to /etc). Existence and ownership are ``ownership``'s business, on the host."""
    if not isinstance(dest, str) or not dest:
        return ["dest %s is not a path" % printable(dest)]
    if CONTROL.search(dest):
        return ["dest %s has a control character" % printable(dest)]
    if not dest.startswith("/"):
        return ["dest %s is a relative path; give an absolute one" % dest]
    problems = []
    clean = owned_dirs.normalise(dest, "dest")
    if ".." in dest.split("/"):
        problems.append("dest %s has a .. component; give the path it means" % dest)
    seen = [clean]
    real = os.path.realpath(clean)
    if real != clean:
        seen.append(real)
    for path in seen:
        label = dest if path == clean else "%s (really %s)" % (dest, path)
        reason = owned_dirs.system_reason(path, trees=True)
        if reason == "system":
            problems.append("dest %s is a system directory or holds one; the role replaces its dest whole - "
                            "give a directory of its own, e.g. /models/<name>" % label)
        elif reason in ("tree", "live"):
            problems.append("dest %s is inside a system tree; weights do not belong there" % label)
        elif reason == "shallow":
            problems.append("dest %s is too shallow (fewer than %d components): it would be a whole tree of the "
                            "host; give a directory of its own, e.g. %s/<name>" % (label, MIN_DEPTH, path))
        elif reason == "home":
            problems.append("dest %s is a home directory; give a directory of its own below it" % label)
        else:
            continue
        break
    return problems


def world_writable(root, limit=5, max_entries=100000):
    """(count, first ``limit`` relative paths) of the files and directories under ``root`` (and itself) that every
    user may write: anyone on the host could change the weights that are served. Links are not followed; at most
    ``max_entries`` entries are looked at (a bounded walk)."""
    found, seen = [], 0
    try:
        if stat.S_IMODE(os.lstat(root).st_mode) & stat.S_IWOTH:
            found.append(".")
    except OSError:
        return 0, []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            seen += 1
            if seen > max_entries:
                return len(found), found[:limit]
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & stat.S_IWOTH:
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return len(found), found[:limit]


def world_writable_warning(root, what="the model"):
    """A warning naming the world-writable entries of ``root``, or None."""
    count, some = world_writable(root)
    if not count:
        return None
    return ("%s at %s has %d file(s) or directories every user may write (%s%s): anyone on the host can change what "
            "is served. Run chmod -R o-w %s"
            % (what, printable(root), count, ", ".join(printable(x) for x in some),
               ", ..." if count > len(some) else "", printable(root)))


def hostile_entries(root, max_entries=100000, limit=10):
    """What in the model tree at ``root`` no reader may open, found with lstat alone (nothing is opened): a FIFO,
    socket or device (a read would block for ever or never end), a symbolic link that leaves the tree, dangles, or
    points at anything but a plain file. [] when there is none. A bounded walk; links to directories are not
    followed. Each problem names the entry, what it is and the fix."""
    problems = []
    real_root = os.path.realpath(root)
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            seen += 1
            if seen > max_entries or len(problems) >= limit:
                return problems
            path = os.path.join(dirpath, name)
            rel = printable(os.path.relpath(path, root))
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                target = os.path.realpath(path)
                if not under(target, real_root):
                    problems.append("%s is a symbolic link that leaves the model's tree (to %s): the check and "
                                    "SGLang would read it as root; copy the file into the tree"
                                    % (rel, printable(os.readlink(path))))
                    continue
                try:
                    st = os.stat(path)
                except OSError:
                    problems.append("%s is a symbolic link to nothing (%s)" % (rel, printable(os.readlink(path))))
                    continue
                if stat.S_ISDIR(st.st_mode):
                    continue
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else None)
            if kind:
                problems.append("%s is %s, not a plain file: a read would block or never end; replace it with the "
                                "file it stands for" % (rel, kind))
    return problems
