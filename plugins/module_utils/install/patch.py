# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure-Python unified-diff application for patching an installed SGLang.

Standard library only (runs on the target, Python >= 3.8).

Design:

* A patch is a unified diff (``diff -u`` / ``git diff``) whose paths are relative to
  a root (the virtualenv's ``site-packages``) after stripping ``strip`` leading
  components (``-p1`` by default, so ``a/sglang/srt/x.py`` means ``<root>/sglang/srt/x.py``).
* Hunks match on exact context (no fuzz); a hunk may move (offset) when lines were
  added above it, the nearest exact match wins.
* Already-applied is detected by a reverse check: the reversed hunks apply cleanly.
* Everything is computed in memory first: every hunk of every file of every patch is
  checked before a single byte is written, so a stale patch never leaves files
  half-patched. Files are then written through a temporary file and ``os.replace``.
* The applied set is recorded in a JSON state file (with each diff, so a patch that
  is dropped from the wanted list is reverted on the next run).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version as sglang_version

STATE_FORMAT = 1


class PatchError(Exception):
    """A patch cannot be applied (or reverted); the message is one line, names the fix."""


# --------------------------------------------------------------------------------------
# Versions and specifiers (a PEP 440 subset: release, aN/bN/rcN, .postN, .devN, local)
# --------------------------------------------------------------------------------------

_SPEC_RE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)?\s*(\S+?)\s*$")
# One version helper for the collection (module_utils/sglang/version.py): the same PEP 440 subset.
_cmp = sglang_version.compare


def parse_version(text):
    """A comparable key for a PEP 440 version string; ValueError if invalid."""
    try:
        return sglang_version.key(text)
    except ValueError:
        raise ValueError("invalid version %r" % (text,))


def _pad(a, b):
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def _release_of(text):
    m = sglang_version.VERSION_RE.match(str(text))
    if not m:
        raise ValueError("invalid version %r" % (text,))
    return tuple(int(x) for x in m.group("release").split("."))


def _match_one(version, op, target):
    if op in ("==", "!=") and target.endswith(".*"):
        prefix = _release_of(target[:-2])
        rel = _release_of(version)
        rel, _prefix = _pad(rel, prefix)
        hit = rel[: len(prefix)] == prefix
        return hit if op == "==" else not hit
    if op == "===":
        return str(version).strip() == target
    if op == "~=":
        rel = _release_of(target)
        if len(rel) < 2:
            raise ValueError("~= needs at least two release components: %r" % target)
        upper = rel[:-2] + (rel[-2] + 1,)
        return _cmp(version, target) >= 0 and _cmp(version, ".".join(map(str, upper))) < 0
    c = _cmp(version, target)
    return {
        "==": c == 0,
        "!=": c != 0,
        ">=": c >= 0,
        "<=": c <= 0,
        ">": c > 0,
        "<": c < 0,
    }[op]


def version_matches(version, spec):
    """True when ``version`` satisfies ``spec``.

    ``spec`` is None/empty (always), a specifier string (``">=0.5.9,<0.5.11"``, ``"0.5.23"``,
    ``"==0.5.*"``; comma means AND) or a list of such strings (any item may match).
    """
    if spec is None or spec == "" or spec == []:
        return True
    if isinstance(spec, (list, tuple)):
        return any(version_matches(version, item) for item in spec)
    for part in str(spec).split(","):
        part = part.strip()
        if not part:
            continue
        m = _SPEC_RE.match(part)
        if not m:
            raise ValueError("invalid version specifier %r" % part)
        op = m.group(1) or "=="
        if not _match_one(version, op, m.group(2)):
            return False
    return True


def gpus_match(patch_gpus, host_caps):
    """True when the patch targets any of the host's compute capabilities.

    ``patch_gpus`` empty: applies everywhere. An item ``"12"`` matches every 12.x,
    ``"12.0"`` only 12.0.
    """
    if not patch_gpus:
        return True
    host = [str(c).strip() for c in host_caps or []]
    for want in patch_gpus:
        want = str(want).strip()
        for cap in host:
            if want == cap or ("." not in want and cap.split(".")[0] == want):
                return True
            if "." in want and "." not in cap and want.split(".")[0] == cap and want.endswith(".0"):
                return True
    return False


# --------------------------------------------------------------------------------------
# Unified diff parsing
# --------------------------------------------------------------------------------------

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Hunk:
    def __init__(self, old_start, old_len, new_start, new_len, header):
        self.old_start = old_start
        self.old_len = old_len
        self.new_start = new_start
        self.new_len = new_len
        self.header = header
        self.lines = []  # (tag, text) with tag in ' ', '-', '+'
        self.old_no_eol = False
        self.new_no_eol = False

    @property
    def old_lines(self):
        return [t for tag, t in self.lines if tag in (" ", "-")]

    @property
    def new_lines(self):
        return [t for tag, t in self.lines if tag in (" ", "+")]

    def reversed(self):
        r = Hunk(self.new_start, self.new_len, self.old_start, self.old_len, self.header)
        swap = {" ": " ", "-": "+", "+": "-"}
        r.lines = [(swap[tag], t) for tag, t in self.lines]
        r.old_no_eol, r.new_no_eol = self.new_no_eol, self.old_no_eol
        return r


class FilePatch:
    def __init__(self, old_path, new_path):
        self.old_path = old_path
        self.new_path = new_path
        self.hunks = []

    @property
    def creates(self):
        return self.old_path == "/dev/null"

    @property
    def deletes(self):
        return self.new_path == "/dev/null"

    def target(self, strip):
        path = self.new_path if not self.deletes else self.old_path
        return strip_path(path, strip)

    def reversed(self):
        r = FilePatch(self.new_path, self.old_path)
        r.hunks = [h.reversed() for h in self.hunks]
        return r


def strip_path(path, strip):
    parts = [p for p in path.split("/") if p not in ("",)]
    if strip >= len(parts):
        raise PatchError("path %r has fewer than %d leading components to strip; fix 'strip'" % (path, strip))
    rel = "/".join(parts[strip:])
    if rel.startswith("/") or ".." in rel.split("/"):
        raise PatchError("path %r leaves the patch root; fix the diff's file names" % path)
    return rel


def _path_of(line):
    # '--- a/x.py\t2024-01-01 ...' -> 'a/x.py'
    value = line[4:].rstrip("\n").rstrip("\r")
    if "\t" in value:
        value = value.split("\t", 1)[0]
    return value.strip()


def parse_unified_diff(text, name="patch"):
    """Parse unified diff ``text`` into a list of FilePatch; raise PatchError when malformed."""
    if not isinstance(text, str):
        text = text.decode("utf-8", "surrogateescape")
    lines = text.splitlines()
    files = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            fp = FilePatch(_path_of(line), _path_of(lines[i + 1]))
            files.append(fp)
            i += 2
            while i < n and lines[i].startswith("@@"):
                m = _HUNK_RE.match(lines[i])
                if not m:
                    raise PatchError("%s: malformed hunk header %r; regenerate the diff with diff -u" % (name, lines[i]))
                old_len = int(m.group(2)) if m.group(2) is not None else 1
                new_len = int(m.group(4)) if m.group(4) is not None else 1
                hunk = Hunk(int(m.group(1)), old_len, int(m.group(3)), new_len, lines[i])
                i += 1
                seen_old = seen_new = 0
                last_tag = None
                while i < n and (seen_old < old_len or seen_new < new_len or (i < n and lines[i].startswith("\\"))):
                    cur = lines[i]
                    if cur.startswith("\\"):
                        if last_tag in (" ", "-"):
                            hunk.old_no_eol = True
                        if last_tag in (" ", "+"):
                            hunk.new_no_eol = True
                        i += 1
                        continue
                    if seen_old >= old_len and seen_new >= new_len:
                        break
                    tag = cur[:1] if cur else " "
                    if tag not in (" ", "-", "+"):
                        raise PatchError(
                            "%s: %s hunk %r is truncated (line %r); regenerate the diff"
                            % (name, fp.new_path, hunk.header, cur)
                        )
                    body = cur[1:]
                    hunk.lines.append((tag, body))
                    if tag in (" ", "-"):
                        seen_old += 1
                    if tag in (" ", "+"):
                        seen_new += 1
                    last_tag = tag
                    i += 1
                if seen_old != old_len or seen_new != new_len:
                    raise PatchError(
                        "%s: %s hunk %r has %d/%d old and %d/%d new lines; the diff is truncated or was edited by hand"
                        % (name, fp.new_path, hunk.header, seen_old, old_len, seen_new, new_len)
                    )
                fp.hunks.append(hunk)
            continue
        i += 1
    if not files:
        raise PatchError("%s: no unified-diff file sections found (expected '--- a/...' / '+++ b/...')" % name)
    for fp in files:
        if fp.deletes:
            raise PatchError("%s: deleting files (%s) is not supported; make the patch edit the file instead" % (name, fp.old_path))
        if not fp.hunks:
            raise PatchError("%s: %s has no hunks" % (name, fp.new_path))
    return files


# --------------------------------------------------------------------------------------
# Applying hunks in memory
# --------------------------------------------------------------------------------------


class Text:
    """A file as lines without terminators plus the end-of-file newline flag."""

    def __init__(self, lines, eol=True, newline="\n", exists=True):
        self.lines = lines
        self.eol = eol
        self.newline = newline
        self.exists = exists

    @classmethod
    def from_string(cls, s, exists=True):
        if not exists:
            return cls([], True, "\n", False)
        newline = "\r\n" if "\r\n" in s else "\n"
        eol = s.endswith("\n") or s == ""
        body = s.split(newline) if s else []
        if body and body[-1] == "":
            body = body[:-1]
        return cls(body, eol, newline, True)

    def to_string(self):
        if not self.lines:
            return ""
        s = self.newline.join(self.lines)
        if self.eol:
            s += self.newline
        return s

    def copy(self):
        return Text(list(self.lines), self.eol, self.newline, self.exists)


class HunkFailed(Exception):
    def __init__(self, index, hunk, detail):
        Exception.__init__(self, detail)
        self.index = index
        self.hunk = hunk
        self.detail = detail


def _describe_mismatch(lines, pos, want):
    """Describe why ``want`` is not at ``pos``: use the nearest best partial match in the file."""
    best, best_score = pos, -1
    for cand in range(0, max(len(lines) - len(want), 0) + 1):
        score = sum(1 for k, w in enumerate(want) if cand + k < len(lines) and lines[cand + k] == w)
        if score > best_score or (score == best_score and abs(cand - pos) < abs(best - pos)):
            best, best_score = cand, score
    for k, w in enumerate(want):
        idx = best + k
        if idx >= len(lines):
            return "file ends at line %d, expected %r" % (len(lines), w)
        if lines[idx] != w:
            return "line %d is %r, expected %r" % (idx + 1, lines[idx], w)
    return "context matches"


def apply_file_patch(text, fp):
    """Return a new Text with the hunks of ``fp`` applied to ``text``; raise HunkFailed."""
    if fp.creates:
        if text.exists and text.lines:
            raise HunkFailed(1, fp.hunks[0], "file already exists")
        new = Text([], True, "\n", True)
        new.lines = fp.hunks[0].new_lines
        new.eol = not fp.hunks[0].new_no_eol
        return new
    if not text.exists:
        raise HunkFailed(1, fp.hunks[0], "file does not exist")
    lines = list(text.lines)
    eol = text.eol
    offset = 0
    floor = 0
    for index, hunk in enumerate(fp.hunks, 1):
        old = hunk.old_lines
        new = hunk.new_lines
        if hunk.old_len == 0:
            expected = hunk.old_start + offset  # insert after line old_start
        else:
            expected = hunk.old_start - 1 + offset
        pos = None
        if not old:
            if floor <= expected <= len(lines):
                pos = expected
        else:
            span = len(old)
            limit = len(lines) - span
            for delta in range(0, max(len(lines), 1) + 1):
                for cand in ((expected - delta, expected + delta) if delta else (expected,)):
                    if floor <= cand <= limit and lines[cand:cand + span] == old:
                        pos = cand
                        break
                if pos is not None:
                    break
        if pos is None:
            where = min(max(expected, 0), len(lines))
            raise HunkFailed(index, hunk, _describe_mismatch(lines, where, old) if old else "insertion point beyond end of file")
        touches_end = pos + len(old) == len(lines)
        if touches_end and hunk.old_no_eol != (not eol):
            raise HunkFailed(index, hunk, "end-of-file newline differs from the patch")
        lines[pos:pos + len(old)] = new
        if touches_end:
            eol = not hunk.new_no_eol
        nominal = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        offset = pos - nominal + (len(new) - len(old))
        floor = pos + len(new)
    out = text.copy()
    out.lines = lines
    out.eol = eol
    return out


# --------------------------------------------------------------------------------------
# Patch sets against a root directory
# --------------------------------------------------------------------------------------


def diff_sha(diff_text):
    return hashlib.sha256(diff_text.encode("utf-8", "surrogateescape")).hexdigest()


def state_hash(entries):
    """Hash of an applied set: changes whenever a patch is added, removed or edited."""
    h = hashlib.sha256()
    for e in entries:
        h.update(("%s\0%s\n" % (e["name"], e["sha256"])).encode("utf-8"))
    return h.hexdigest()[:16] if entries else "none"


def read_state(path):
    if not path or not os.path.exists(path):
        return {"format": STATE_FORMAT, "patches": []}
    try:
        with open(path, "r") as f:
            data = json.load(f)
    except (OSError, IOError, ValueError) as e:
        raise PatchError("state file %s is unreadable (%s); delete it and reinstall SGLang to start clean" % (path, e))
    if not isinstance(data, dict) or not isinstance(data.get("patches"), list):
        raise PatchError("state file %s has an unexpected format; delete it and reinstall SGLang to start clean" % path)
    return data


class Workspace:
    """In-memory view of the files under root, written only by commit()."""

    def __init__(self, root):
        self.root = root
        self.original = {}
        self.current = {}

    def get(self, rel):
        if rel not in self.current:
            full = os.path.join(self.root, rel)
            if os.path.isfile(full):
                with open(full, "rb") as f:
                    data = f.read().decode("utf-8", "surrogateescape")
                t = Text.from_string(data, True)
            else:
                t = Text.from_string("", False)
            self.original[rel] = t
            self.current[rel] = t.copy()
        return self.current[rel]

    def set(self, rel, text):
        self.current[rel] = text

    def changed_files(self):
        out = []
        for rel in sorted(self.current):
            before = self.original[rel]
            after = self.current[rel]
            if before.to_string() != after.to_string() or before.exists != after.exists:
                out.append(rel)
        return out

    def diffs(self):
        out = []
        for rel in self.changed_files():
            out.append({
                "before_header": os.path.join(self.root, rel),
                "after_header": os.path.join(self.root, rel),
                "before": self.original[rel].to_string(),
                "after": self.current[rel].to_string(),
            })
        return out

    def commit(self):
        for rel in self.changed_files():
            full = os.path.join(self.root, rel)
            d = os.path.dirname(full)
            if not os.path.isdir(d):
                os.makedirs(d)
            mode = None
            if os.path.exists(full):
                mode = os.stat(full).st_mode & 0o7777
            fd, tmp = tempfile.mkstemp(prefix=".sglang_patch.", dir=d)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(self.current[rel].to_string().encode("utf-8", "surrogateescape"))
                os.chmod(tmp, mode if mode is not None else 0o644)
                os.replace(tmp, full)
            except Exception:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
            # a stale bytecode cache next to the source is harmless (mtime/size checked), drop it anyway
            cache = os.path.join(d, "__pycache__")
            if os.path.isdir(cache):
                base = os.path.splitext(os.path.basename(full))[0] + "."
                for entry in os.listdir(cache):
                    if entry.startswith(base) and entry.endswith(".pyc"):
                        try:
                            os.unlink(os.path.join(cache, entry))
                        except OSError:
                            pass


def _try_all(ws, files, strip):
    """Apply every FilePatch to a scratch copy; return {rel: Text} or raise HunkFailed (with .path)."""
    results = {}
    for fp in files:
        rel = fp.target(strip)
        base = results.get(rel) or ws.get(rel)
        try:
            results[rel] = apply_file_patch(base, fp)
        except HunkFailed as e:
            e.path = rel
            raise
    return results


def _fmt_fail(e):
    return "%s hunk #%d (%s): %s" % (e.path, e.index, e.hunk.header, e.detail)


def classify(ws, name, files, strip):
    """Return ('apply', results) / ('applied', None); raise PatchError when neither holds."""
    fwd_err = rev_err = None
    fwd = None
    try:
        fwd = _try_all(ws, files, strip)
    except HunkFailed as e:
        fwd_err = e
    try:
        _try_all(ws, [f.reversed() for f in files], strip)
        rev_ok = True
    except HunkFailed as e:
        rev_ok = False
        rev_err = e
    if fwd is not None and not rev_ok:
        return "apply", fwd
    if fwd is None and rev_ok:
        return "applied", None
    if fwd is not None and rev_ok:
        raise PatchError(
            "patch '%s' is ambiguous: it both applies and reverse-applies cleanly; give its hunks more context" % name
        )
    raise PatchError(
        "patch '%s' does not apply: %s (and it is not already applied: %s); "
        "update the diff for this SGLang version or narrow its 'versions'"
        % (name, _fmt_fail(fwd_err), _fmt_fail(rev_err))
    )


def normalize_patch(p):
    """Validate one patch dict: name, diff (text), versions, gpus, strip."""
    if not isinstance(p, dict):
        raise PatchError("each patch must be a dict with name and diff; got %r" % (p,))
    name = p.get("name")
    if not name or not isinstance(name, str):
        raise PatchError("a patch has no 'name'; give every entry of sglang_patches a unique name")
    diff = p.get("diff")
    if not diff or not isinstance(diff, str):
        raise PatchError("patch '%s' has no 'diff' text; set diff (unified diff) or file (a .diff on the controller)" % name)
    strip = p.get("strip", 1)
    try:
        strip = int(strip)
    except (TypeError, ValueError):
        raise PatchError("patch '%s': strip must be an integer" % name)
    gpus = p.get("gpus") or []
    if isinstance(gpus, (str, int, float)):
        gpus = [gpus]
    gpus = [str(g) for g in gpus]
    versions = p.get("versions")
    try:
        version_matches("0", versions)
    except ValueError as e:
        raise PatchError("patch '%s': %s; use e.g. '>=0.5.9,<0.5.11' or a list of versions" % (name, e))
    return {"name": name, "diff": diff, "strip": strip, "gpus": gpus, "versions": versions}


def plan(root, patches, version, compute_caps, state_file=None):
    """Compute what to do; touch nothing on disk.

    Returns a dict: ws (Workspace holding the result), wanted (entries to record),
    applied_now, already, reverted, skipped ([{name, reason}]).
    """
    if not os.path.isdir(root):
        raise PatchError("patch root %s does not exist; install SGLang first (or fix 'root')" % root)
    norm = [normalize_patch(p) for p in patches or []]

    ws = Workspace(root)
    state = read_state(state_file)
    recorded = [e for e in state.get("patches", []) if isinstance(e, dict) and e.get("name") and e.get("diff")]

    selected, skipped = [], []
    for p in norm:
        if version is not None and not version_matches(version, p["versions"]):
            skipped.append({"name": p["name"], "reason": "sglang %s not in versions %s" % (version, p["versions"])})
            continue
        if not gpus_match(p["gpus"], compute_caps):
            skipped.append({
                "name": p["name"],
                "reason": "for GPUs %s, host has %s" % (",".join(p["gpus"]), ",".join(compute_caps or []) or "none"),
            })
            continue
        if p["name"] in [q["name"] for q in selected]:
            raise PatchError(
                "patch name '%s' is selected twice for sglang %s; names must be unique per version (narrow 'versions')"
                % (p["name"], version)
            )
        selected.append(p)
    wanted_keys = set((p["name"], diff_sha(p["diff"])) for p in selected)

    # 1. unwind the recorded set in memory, newest first, back to the pristine files. A recorded
    #    patch whose files are pristine already (SGLang reinstalled) has nothing to unwind.
    unwound = []
    parsed_recorded = []
    for e in recorded:
        parsed_recorded.append((e, parse_unified_diff(e["diff"], e["name"]), int(e.get("strip", 1))))
    for e, files, strip in reversed(parsed_recorded):
        try:
            back = _try_all(ws, [f.reversed() for f in files], strip)
        except HunkFailed:
            continue
        for rel, t in back.items():
            ws.set(rel, t)
        unwound.append((e["name"], e.get("sha256")))
    #    the unwound files must take the recorded set again, or they were changed behind our back
    if parsed_recorded:
        scratch = Workspace(root)
        scratch.original, scratch.current = ws.original, dict((k, v.copy()) for k, v in ws.current.items())
        for e, files, strip in parsed_recorded:
            try:
                for rel, t in _try_all(scratch, files, strip).items():
                    scratch.set(rel, t)
            except HunkFailed as err:
                raise PatchError(
                    "recorded patch '%s' no longer matches the installed files (%s); files were changed outside "
                    "this module: reinstall SGLang (sglang_force_reinstall=true) to restore pristine files"
                    % (e["name"], _fmt_fail(err))
                )
    unwound_keys = set(unwound)
    reverted = [name for name, sha in reversed(unwound) if (name, sha) not in wanted_keys]

    # 2. apply the wanted patches in order (classify also accepts patches found applied without a record)
    applied_now, already, entries = [], [], []
    for p in selected:
        files = parse_unified_diff(p["diff"], p["name"])
        status, results = classify(ws, p["name"], files, p["strip"])
        key = (p["name"], diff_sha(p["diff"]))
        if status == "apply":
            for rel, t in results.items():
                ws.set(rel, t)
        if status == "applied" or key in unwound_keys:
            already.append(p["name"])
        else:
            applied_now.append(p["name"])
        entries.append({
            "name": p["name"],
            "sha256": key[1],
            "strip": p["strip"],
            "files": sorted(set(f.target(p["strip"]) for f in files)),
            "diff": p["diff"],
        })
    return {
        "ws": ws,
        "entries": entries,
        "applied_now": applied_now,
        "already": already,
        "reverted": reverted,
        "skipped": skipped,
        "old_state": state_hash([{"name": e["name"], "sha256": e.get("sha256", "")} for e in recorded]),
        "state": state_hash(entries),
        "recorded_names": [e["name"] for e in recorded],
    }


def write_state(state_file, result, version):
    data = {
        "format": STATE_FORMAT,
        "sglang_version": version,
        "state": result["state"],
        "patches": result["entries"],
    }
    d = os.path.dirname(state_file)
    fd, tmp = tempfile.mkstemp(prefix=".sglang_patch_state.", dir=d or ".")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, state_file)


def state_needs_write(state_file, result, version):
    if not state_file:
        return False
    old = read_state(state_file)
    return not (
        old.get("state") == result["state"]
        and old.get("sglang_version") == version
        and [e.get("name") for e in old.get("patches", [])] == [e["name"] for e in result["entries"]]
    )


def run(root, patches, version=None, compute_caps=None, state_file=None, check_mode=False):
    """Plan, then (unless check_mode) write files and the state file. Returns a plain dict."""
    result = plan(root, patches, version, compute_caps or [], state_file)
    ws = result["ws"]
    files_changed = ws.changed_files()
    diffs = ws.diffs()
    write_state_now = state_needs_write(state_file, result, version)
    if not check_mode:
        if files_changed:
            ws.commit()
        if write_state_now:
            write_state(state_file, result, version)
    return {
        "changed": bool(files_changed) or bool(result["reverted"]) or write_state_now,
        "files_changed": files_changed,
        "applied": [e["name"] for e in result["entries"]],
        "newly_applied": result["applied_now"],
        "already_applied": result["already"],
        "reverted": result["reverted"],
        "skipped": result["skipped"],
        "state": result["state"],
        "previous_state": result["old_state"],
        "diff": diffs,
    }
