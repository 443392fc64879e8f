# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host boundary: what every reader and writer of the host's files shares (stdlib only).

One of each, used by ``untrusted`` (reads), ``models/contain`` (writes and removes in a model tree),
``owned_dirs`` (the directories the collection owns), the log readers and the report writers:

- ``Refused``: the refusal of a path or a file (a whole message, or the name, what is wrong, the fix and the field);
- ``printable``: a value safe to put in a message (control characters escaped, cut at a limit when given);
- ``walk``: the dir-fd walker, one directory at a time with ``O_NOFOLLOW`` (nothing below the start is followed);
- ``open_dir``: a directory opened, its last component not followed unless asked;
- ``write_file``: a file written inside a directory descriptor without following a link (a temporary file made
  with ``O_CREAT|O_EXCL|O_NOFOLLOW``, renamed over the name; a link or anything but a regular file already at the
  name is refused by name, never written through).
"""

from __future__ import annotations

import errno
import os
import re
import stat

# A path component or value with these is never what a user or a source meant (C0, DEL and C1 controls).
CONTROL = re.compile(u"[\x00-\x1f\x7f-\x9f]")
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Refused(ValueError):
    """A path or a file refused. ``Refused(message)``: the whole message (it names the path, why and the fix);
    ``Refused(name, what, fix=None, field=None)``: ``str()`` is ``name[ field]: what[: fix]``."""

    def __init__(self, name, what=None, fix=None, field=None):
        if what is None:
            self.name, self.field, self.what, self.fix = None, None, name, None
            ValueError.__init__(self, name)
            return
        self.name, self.field, self.what, self.fix = name, field, what, fix
        where = "%s %s" % (name, field) if field else name
        ValueError.__init__(self, "%s: %s%s" % (where, what, (": " + fix) if fix else ""))


def printable(value, limit=None):
    """``value`` safe to put in a message: cut at ``limit`` characters when given, control characters escaped (a
    newline cannot forge a line); what is not a string is shown as its repr."""
    text = value if isinstance(value, str) else repr(value)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "...(%d characters)" % len(text)
    return CONTROL.sub(lambda m: "\\x%02x" % ord(m.group(0)), text)


def describe_mode(mode):
    """What a file is, in words, from its st_mode."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return words
    return "not a regular file"


def open_dir(path, follow=True, dir_fd=None):
    """A descriptor of the directory ``path`` (OSError otherwise: ELOOP when it is a link and not ``follow``,
    ENOTDIR when it is no directory); nothing blocks."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    return os.open(path, flags, dir_fd=dir_fd)


def walk(dir_fd, parts, create=False, mode=0o755):
    """A new descriptor (the caller closes it) of the directory ``parts`` below the one open at ``dir_fd``, reached
    one part at a time without following a link; with ``create`` each missing part is made (``mode``) first.
    A link or a file on the way: OSError (ELOOP or ENOTDIR) whose ``walked`` is the parts up to it."""
    fd = os.dup(dir_fd)
    try:
        for i, part in enumerate(parts):
            if create:
                try:
                    os.mkdir(part, mode, dir_fd=fd)
                except OSError as e:
                    if e.errno != errno.EEXIST:
                        raise
            try:
                nxt = open_dir(part, follow=False, dir_fd=fd)
            except OSError as e:
                e.walked = "/".join(parts[:i + 1])
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def write_file(dir_fd, name, data, mode=0o644, shown=None):
    """Write ``data`` (bytes) as the file ``name`` of the directory open at ``dir_fd``, never through a link: a link,
    FIFO, device or directory already at ``name`` is refused (``shown``, default ``name``, names it); the bytes go
    to a temporary file made with O_CREAT|O_EXCL|O_NOFOLLOW, renamed over ``name`` (a link swapped in meanwhile is
    replaced, its target untouched)."""
    shown = shown or printable(name)
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as e:
        if e.errno != errno.ENOENT:
            raise
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise Refused(shown, "is %s, not a regular file: refused, nothing written through it" % describe_mode(
            st.st_mode), "remove it (the file is written again in its place)")
    tmp = ".%s.%d.tmp" % (name, os.getpid())
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC
    try:
        fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno != errno.EEXIST:
            raise
        os.unlink(tmp, dir_fd=dir_fd)  # a crashed run's leftover (or a link planted there): the name, not its target
        fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(fd)
    os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
