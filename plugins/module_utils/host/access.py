# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Can a given user read these files? Judged as root without sudo (stdlib only, Linux).

The server runs as an unprivileged user while the modules run as root, and root reads everything. As root the
question is put to the kernel itself: a forked child drops to the user's uid, gid and supplementary groups and
tries - so modes, owners, POSIX ACLs, root-squashing NFS and LSMs all answer as they will for the server. Not as
root and for another user, only the mode bits can be judged (``mode_allows``); ACLs are then not seen.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import stat

READ, ENTER, LIST = "read", "enter", "list"


def identity(user):
    """(uid, gid, [gids]) of a user name or uid; KeyError when there is no such user."""
    pw = pwd.getpwuid(int(user)) if str(user).isdigit() else pwd.getpwnam(str(user))
    try:
        gids = os.getgrouplist(pw.pw_name, pw.pw_gid)
    except (OSError, AttributeError):
        gids = [pw.pw_gid] + [g.gr_gid for g in grp.getgrall() if pw.pw_name in g.gr_mem]
    return pw.pw_uid, pw.pw_gid, sorted(set(gids))


def mode_allows(st_mode, st_uid, st_gid, uid, gids, want):
    """The mode-bit answer (no ACLs): may ``uid`` with ``gids`` read (``want`` READ), enter (ENTER) or list (LIST)?"""
    if uid == 0:
        return True
    bits = {READ: 4, ENTER: 1, LIST: 5}[want]
    if st_uid == uid:
        have = (st_mode >> 6) & 7
    elif st_gid in gids:
        have = (st_mode >> 3) & 7
    else:
        have = st_mode & 7
    return have & bits == bits


def _try(path, want):
    try:
        if want == READ:
            with open(path, "rb"):
                return None
        if want == LIST:
            os.listdir(path)
            return None
        return None if os.access(path, os.X_OK) else "permission denied"
    except (IOError, OSError) as e:
        return e.strerror or str(e)


def _denied_as(uid, gid, gids, checks):
    """Run ``checks`` [(path, want)] in a child that has dropped to uid/gid/gids; [(path, want, why)] denied."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(rfd)
            os.setgroups(gids)
            os.setgid(gid)
            os.setuid(uid)
            out = [(p, w, why) for p, w in checks for why in [_try(p, w)] if why]
            os.write(wfd, json.dumps(out).encode("utf-8"))
        except BaseException:  # pylint: disable=broad-except
            code = 1
        finally:
            os._exit(code)  # pylint: disable=protected-access
    os.close(wfd)
    chunks = []
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    status = os.waitpid(pid, 0)[1]
    if status != 0:
        raise OSError("the check as uid %d failed in its child process" % uid)
    return [tuple(x) for x in json.loads(b"".join(chunks).decode("utf-8") or "[]")]


def denied(user, checks):
    """[(path, want, why)] that ``user`` may not do among ``checks`` [(path, want)]; ``(list, method)``.

    method: ``kernel`` (asked as the user: exact), ``self`` (we are that user) or ``mode`` (mode bits only).
    """
    uid, gid, gids = identity(user)
    euid = os.geteuid()
    if uid == euid:
        return [(p, w, why) for p, w in checks for why in [_try(p, w)] if why], "self"
    if euid == 0:
        return _denied_as(uid, gid, gids, checks), "kernel"
    out = []
    for p, w in checks:
        try:
            st = os.stat(p)
        except OSError as e:
            out.append((p, w, e.strerror))
            continue
        if not mode_allows(st.st_mode, st.st_uid, st.st_gid, uid, gids, w):
            out.append((p, w, "mode %s" % oct(stat.S_IMODE(st.st_mode))))
    return out, "mode"


def ancestors(path):
    """Every directory a process passes through to reach ``path`` (``/`` first), ``path`` itself excluded."""
    real = os.path.realpath(path)
    parts, out = real.strip("/").split("/"), ["/"]
    for i in range(1, len(parts)):
        out.append("/" + "/".join(parts[:i]))
    return out if real != "/" else []


def describe(path):
    """``mode 0600 root:root`` for a message."""
    try:
        st = os.stat(path)
    except OSError as e:
        return e.strerror or str(e)
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return "mode %04o %s:%s" % (stat.S_IMODE(st.st_mode), owner, group)
