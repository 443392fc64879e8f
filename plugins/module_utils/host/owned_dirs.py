# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The directories the collection owns: the one system-path rule and the one rule for creating, chmod-ing and
chown-ing a directory as root (stdlib only; pure on the controller, acting on the target).

- ``normalise`` turns a path from an inventory into the one spelling it means (``//``, ``.``, ``..`` and a trailing
  ``/`` collapsed), or refuses it; ``resolve`` does the same on the target with every link followed, so
  ``/srv/x -> /etc`` is judged as ``/etc``.
- ``system_reason`` is the system-path rule: a system directory, or one that holds one, is never the collection's,
  nor anything inside /proc, /sys, /dev or /run (``live_tree``; the collection's ``RUN_ROOT`` aside); ``trees``
  adds roles/models' stricter rule for weights: nothing inside a system tree, nothing too shallow, no home
  directory itself. ``refusal`` / ``system_problem`` are that rule for every path the collection makes or writes.
- ``decide`` / ``ensure`` judge and make one directory: a missing one is created, with a marker file (``MARKER``,
  owned by root, naming the directory) that says the collection made it; an existing one that already has the
  owner, group and mode asked for is left as it is; one that would need a chmod or chown is changed only when it
  holds the marker or is adopted by name (``<role>_adopt_dirs``), else refused naming it and that setting. A cache
  directory (its contents are read back and trusted) that exists with another owner or a looser mode is refused
  whatever its marker says: remove it and the collection makes it again.
- ``made_inside_ours``: one exception to both refusals. A directory without the marker that only the collection's
  own processes can have made - below a directory holding the marker, it and every directory between them root's
  (for a cache: or its owner's) and writable by nobody else, no link on the way - is adopted (marked, its owner
  and mode fixed): a first deploy that stopped half-way is finished by the next run.
"""

from __future__ import annotations

import errno
import grp
import json
import os
import posixpath
import pwd
import stat

from ansible_collections.llmserve.sglang.plugins.module_utils.host import boundary
from ansible_collections.llmserve.sglang.plugins.module_utils.host.boundary import CONTROL, Refused, printable

MARKER = ".llmserve-sglang-dir"
# Directories whose replacement, content loss or change of owner would break the host; the collection owns none of
# them nor any directory that holds one.
SYSTEM_PATHS = (
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/lost+found", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr", "/var",
    "/usr/bin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/local", "/usr/local/bin", "/usr/local/lib",
    "/usr/sbin", "/usr/share", "/usr/src", "/usr/include", "/var/cache", "/var/lib", "/var/log", "/var/mail",
    "/var/spool", "/var/tmp", "/var/run", "/var/lock", "/var/backups", "/var/opt", "/var/www", "/srv/www",
    "/etc/systemd", "/etc/systemd/system", "/usr/local/sbin", "/usr/local/share", "/usr/local/etc",
)
# Trees no weights belong in (roles/models' stricter rule): a dest anywhere below them is refused too.
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
                "/sys", "/usr/bin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/sbin", "/usr/include",
                "/var/lib/dpkg", "/var/lib/apt", "/var/log")
# Under the stricter rule a directory needs at least this many components: /data alone would be a whole disk's tree.
MIN_DEPTH = 2
# Trees of the kernel and of the running system: nothing the collection makes or writes lies anywhere inside them (a
# mkdir under /sys/fs/cgroup makes a cgroup, one under /proc or /dev is no directory on a disk, /run is gone at the
# next boot and belongs to the services that run). /var/run and /var/lock are links into /run.
LIVE_TREES = ("/proc", "/sys", "/dev", "/run", "/var/run", "/var/lock")
# ... but the collection's own run-time tree (pid files, deploy locks: roles/server's layout) is its to make.
RUN_ROOT = "/run/llmserve-sglang"


def normalise(path, what="path"):
    """The one spelling of absolute ``path``: ``//``, ``.``, ``..`` and a trailing ``/`` collapsed (lexically; links
    are the target's business, ``resolve``). Refused when it is not an absolute path without control characters."""
    if not isinstance(path, str) or not path:
        raise Refused("%s %s is not a path; give an absolute one" % (what, printable(path)))
    if CONTROL.search(path):
        raise Refused("%s %s has a control character" % (what, printable(path)))
    if not path.startswith("/"):
        raise Refused("%s %s is a relative path; give an absolute one" % (what, path))
    clean = posixpath.normpath(path)
    return "/" + clean.lstrip("/")  # POSIX keeps a leading // as it is; Linux means /


def resolve(path, what="path"):
    """``path`` normalised and with every link followed on this host (the directory it really is, or would be)."""
    return normalise(os.path.realpath(normalise(path, what)), what)


def under(path, root):
    """``path`` is ``root`` or inside it (both absolute and normalised)."""
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root if root == "/" else root + "/")


def live_tree(path):
    """The tree of LIVE_TREES normalised ``path`` is in (or is), or None; the collection's RUN_ROOT and what is
    below it are not refused."""
    if under(path, RUN_ROOT) or under(path, "/var" + RUN_ROOT):
        return None
    for tree in LIVE_TREES:
        if under(path, tree):
            return tree
    return None


def system_reason(path, trees=False):
    """Why normalised ``path`` can never be the collection's, or None: ``system`` (a system directory or one
    holding one), ``live`` (inside a tree of the kernel or the running system: ``live_tree``); with ``trees``:
    ``tree`` (inside a system tree), ``shallow`` (fewer than MIN_DEPTH components), ``home`` (a home directory
    itself)."""
    if any(under(s, path) for s in SYSTEM_PATHS):
        return "system"
    if live_tree(path):
        return "live"
    if not trees:
        return None
    if any(under(path, t) for t in SYSTEM_TREES):
        return "tree"
    if len(path.strip("/").split("/")) < MIN_DEPTH:
        return "shallow"
    if posixpath.dirname(path) == "/home":
        return "home"
    return None


def refusal(path):
    """The one path rule for every path the collection makes or writes (a directory it owns, a file it writes, a
    report's folder), pure: ``(why, fix)`` for normalised ``path``, or None. A system directory or one holding one;
    anything inside /proc, /sys, /dev or /run (RUN_ROOT aside)."""
    reason = system_reason(path)
    if reason == "system":
        return ("is a system directory or holds one: the collection would chmod and chown it",
                "give a directory of its own, e.g. /var/lib/sglang")
    if reason == "live":
        return ("is inside %s, a tree of the kernel or of the running system (a directory made under /sys/fs/cgroup "
                "is a cgroup, one under /dev, /proc or /run is no directory on a disk)" % live_tree(path),
                "give a directory on a disk, e.g. /var/lib/sglang")
    return None


def system_problem(path, what):
    """``refusal`` as a message naming ``what`` and the fix, or None; a path that is no absolute path without
    control characters is refused too (pure: the controller's check of an inventory value)."""
    try:
        clean = normalise(path, what)
    except Refused as e:
        return str(e)
    why = refusal(clean)
    if why:
        shown = path if clean == path else "%s (%s)" % (path, clean)
        return "%s %s %s; %s" % (what, shown, why[0], why[1])
    return None


def _marker_ok(fd, real):
    """Whether the directory open at ``fd`` holds the collection's marker: a plain file owned by this (root)
    process, naming ``real`` (a marker copied along with a tree, or planted by another user, does not count)."""
    try:
        st = os.stat(MARKER, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > 4096:
        return False
    try:
        mfd = os.open(MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        return False
    try:
        data = json.loads(os.read(mfd, 4096).decode("utf-8"))
        return isinstance(data, dict) and data.get("path") == real
    except ValueError:
        return False
    finally:
        os.close(mfd)


def _write_marker(fd, real):
    mfd = os.open(MARKER, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=fd)
    try:
        os.fchown(mfd, os.geteuid(), os.getegid())
        os.write(mfd, json.dumps({"made_by": "llmserve.sglang", "path": real}).encode("utf-8") + b"\n")
    finally:
        os.close(mfd)


def _open_dir(real):
    return boundary.open_dir(real, follow=False)


def _describe(uid, gid, mode):
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return "%s:%s %04o" % (user, group, mode)


def decide(path, uid, gid, mode, what="directory", adopt=(), cache=False, setting="the role's adopt_dirs",
           follow=True):
    """What making ``path`` the collection's directory with owner ``uid``, group ``gid`` (-1: either, as
    os.chown has it) and ``mode`` needs, judged on this host; nothing is changed.

    Returns {path, real, action: create|none|fix, adopt, changes}; Refused naming the directory and the fix when
    the system-path rule, the marker rule or the cache rule says no. ``adopt``: paths the user let the collection
    take over (``setting`` names where they are set). Not ``follow``: a path reached through a link (the directory
    itself or one above it) is refused, naming both."""
    clean = normalise(path, what)
    real = resolve(clean, what)
    shown = clean if real == clean else "%s (really %s)" % (clean, real)
    why = refusal(clean) or refusal(real)
    if why:
        raise Refused("%s %s %s; %s" % (what, shown, why[0], why[1]))
    if not follow and real != clean:
        raise Refused("%s %s is reached through a symbolic link: what the role writes into it would land in %s; "
                      "give the real directory, or remove the link" % (what, clean, real))
    if cache:
        _check_parents(real, uid, what, shown)
    out = {"path": clean, "real": real, "action": "none", "adopt": False, "changes": []}
    try:
        fd = _open_dir(real)
    except OSError as e:
        if e.errno == errno.ENOENT:
            out["action"] = "create"
            out["changes"].append("created %s" % real)
            return out
        raise Refused("%s %s is not a directory (%s); move it away or give another path"
                      % (what, shown, os.strerror(e.errno)))
    try:
        st = os.fstat(fd)
        has = (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))
        other_owner = (uid != -1 and st.st_uid != uid) or (gid != -1 and st.st_gid != gid)
        looser = bool(has[2] & ~mode)
        if not other_owner and has[2] == mode:
            return out
        wanted = _describe(uid if uid != -1 else st.st_uid, gid if gid != -1 else st.st_gid, mode)
        if not _marker_ok(fd, real) and clean == real and made_inside_ours(real, st, uid if cache else None):
            # the collection's own processes made it below a directory the collection made: a deploy that stopped
            # half-way is finished by the next run, not refused (issue 43)
            out["action"], out["adopt"] = "fix", True
            out["changes"].append("adopted %s (made below %s)" % (real, MARKER))
            if other_owner:
                out["changes"].append("owner %s %s" % (wanted.split(" ")[0], real))
            if has[2] != mode:
                out["changes"].append("mode %04o %s" % (mode, real))
            return out
        if cache and (other_owner or looser):
            raise Refused("%s %s is a cache the collection reads back, and it is %s, not %s: refused, not trusted. "
                          "Remove it (the collection makes it again)" % (what, shown, _describe(*has), wanted))
        adopted = any(a in (clean, real) for a in (quiet_normalise(x) for x in adopt or ()))
        ours = _marker_ok(fd, real)
        if cache and not ours:
            return out  # the owner asked for and a tighter mode: safe to use as it is, not the collection's to change
        if not adopted and not ours:
            raise Refused("%s %s exists and was not made by the collection (no %s in it): it is %s and would be "
                          "chmod-ed and chown-ed to %s. Give a directory of its own, or add %s to %s to let the "
                          "collection take it over" % (what, shown, MARKER, _describe(*has), wanted, clean, setting))
        out["action"], out["adopt"] = "fix", adopted
        if other_owner:
            out["changes"].append("owner %s %s" % (wanted.split(" ")[0], real))
        if has[2] != mode:
            out["changes"].append("mode %04o %s" % (mode, real))
        return out
    finally:
        os.close(fd)


def _nobody_else(st, owners):
    """Owned by one of ``owners`` and writable by nobody else (no group or world write bit)."""
    return st.st_uid in owners and not stat.S_IMODE(st.st_mode) & 0o022


def made_inside_ours(real, st, uid=None):
    """Whether the unmarked directory ``real`` (``st``: its fstat; no link on its path) can only have been made by
    the collection's own processes below a directory the collection made: it and every directory between it and
    the nearest ancestor holding the collection's marker are root's (or, with ``uid``, a cache's owner's: the
    service user's own processes) and writable by nobody else. Never through a link, never at or above a system
    directory: the walk up stops there with False."""
    owners = (0, os.geteuid()) + ((uid,) if uid not in (None, -1) else ())
    if not _nobody_else(st, owners):
        return False
    parent = posixpath.dirname(real)
    while parent != "/" and not system_reason(parent):
        try:
            fd = _open_dir(parent)
        except OSError:
            return False  # a link, or not a directory
        try:
            if _marker_ok(fd, parent):
                return True
            if not _nobody_else(os.fstat(fd), owners):
                return False
        finally:
            os.close(fd)
        parent = posixpath.dirname(parent)
    return False


def _check_parents(real, uid, what, shown):
    """A cache's parents must be root's (or the cache owner's), writable by nobody else (a sticky /tmp aside):
    whoever can rename in a parent can swap the cache for a link to what root would then write."""
    parent = posixpath.dirname(real)
    while True:
        try:
            st = os.stat(parent)
        except OSError:
            st = None
        if st is not None:
            mode = stat.S_IMODE(st.st_mode)
            if st.st_uid not in (0, os.geteuid(), uid) or (mode & 0o022 and not mode & stat.S_ISVTX):
                raise Refused("%s %s is a cache below %s, which is %s: another user could swap the cache for a "
                              "link; refused, not trusted. Give a cache directory below directories only root can "
                              "write" % (what, shown, parent, _describe(st.st_uid, st.st_gid, mode)))
        if parent == "/":
            return
        parent = posixpath.dirname(parent)


def quiet_normalise(path):
    """``normalise(path)``, or None for what it refuses (a lookup key, not a check)."""
    try:
        return normalise(path)
    except Refused:
        return None


def ensure(decision, uid, gid, mode):
    """Carry out ``decide``'s answer: create the directory (parents root 0755) with its marker, or chmod/chown the
    one already judged (through a descriptor opened without following a link: what is changed is what was
    judged, never a link swapped in since)."""
    real = decision["real"]
    if decision["action"] == "none":
        return
    if decision["action"] == "create":
        parent = posixpath.dirname(real)
        if not os.path.isdir(parent):
            # makedirs gives its mode to the last parent only, the others get 0777 less the umask: with the umask
            # 022 every parent is 0755 whatever umask the target's session has (0 would make them world-writable)
            umask = os.umask(0o022)
            try:
                os.makedirs(parent, 0o755)
            finally:
                os.umask(umask)
        os.mkdir(real, 0o700)
    fd = _open_dir(real)
    try:
        if decision["action"] == "create" or decision["adopt"]:
            _write_marker(fd, real)
        os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def ensure_all(specs, adopt=(), setting="the role's adopt_dirs", check=False):
    """Judge every directory of ``specs`` ({path, uid, gid, mode, what, cache, follow}) first and refuse them all at once
    (nothing made or changed), then make or change them in order unless ``check``. Returns the changes."""
    decisions, problems = [], []
    for s in specs:
        try:
            decisions.append((s, decide(s["path"], s["uid"], s["gid"], s["mode"], s.get("what", "directory"),
                                        adopt, s.get("cache", False), setting, s.get("follow", True))))
        except Refused as e:
            problems.append(str(e))
    if problems:
        raise Refused("; ".join(problems))
    changes = []
    for s, d in decisions:
        changes.extend(d["changes"])
        if not check:
            ensure(d, s["uid"], s["gid"], s["mode"])
    return changes
