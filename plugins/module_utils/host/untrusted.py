# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One reader for files nobody vouches for: a model tree's weights, config, tokenizer, index and manifest (issue 33).

The check runs as root, on trees a source wrote. Every file is opened relative to the tree's directory descriptor,
no link followed on any component (O_NOFOLLOW), without blocking (O_NONBLOCK: a FIFO opens at once), and must be a
regular file - else a refusal saying what it is (a link, a FIFO, a device, a socket, a directory). Each kind of
file has its own limits (bytes, JSON nesting depth, JSON values); nothing is read past them, so a link to
/dev/zero, a 100k-deep header or an index of 100k shards costs bounded time and memory. Every refusal is a
``Refused`` naming the file, the field and the fix. Stdlib only, Python >= 3.8.

The safetensors rules are those of safetensors 0.8.0 (the version SGLang 0.5.x pins), read from its source
(safetensors/src/tensor.rs: ``read_metadata``, ``Metadata::validate``, ``Dtype``) and held to the library itself by a
differential test (tests/unit/plugins/module_utils/host/test_host_untrusted.py): an 8-byte little-endian header
length N <= 100,000,000; N bytes of UTF-8 JSON (serde_json: recursion limit 128, no NaN, no lone surrogate, numbers
that fit a double); a map of tensors (``{dtype, shape, data_offsets}`` or the 3-element sequence form) and an
optional ``__metadata__`` map of strings; the tensors sorted by offsets must tile the data from 0 without gap or
overlap, each span equal to the product of the shape (no u64 overflow at any step) times the dtype's bits / 8
(a whole number of bytes); the file exactly 8 + N + the last offset long.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import struct
import sys
from array import array
from itertools import chain
from math import prod
from operator import ge, itemgetter, mul, sub

from ansible_collections.llmserve.sglang.plugins.module_utils.host import boundary
from ansible_collections.llmserve.sglang.plugins.module_utils.host.boundary import Refused, describe_mode

MIB = 1 << 20


class Kind:
    """Limits for one kind of file: bytes, JSON depth (containers inside each other) and JSON values."""

    def __init__(self, label, max_bytes, max_depth=64, max_values=1000000, fix=None):
        self.label, self.max_bytes, self.max_depth, self.max_values = label, max_bytes, max_depth, max_values
        self.fix = fix or "replace it with the publisher's file"


# Real files are far smaller: config.json a few KB, tokenizer.json at most ~34 MB (Gemma 3, 262k tokens), an
# index ~10 MB (DeepSeek-V3: 91k tensors), a shard header ~1 MB (a few thousand tensors).
CONFIG = Kind("config", 8 * MIB, 64, 1000000)
TOKENIZER = Kind("tokenizer", 64 * MIB, 64, 8000000)
TOKENIZER_BINARY = Kind("tokenizer", 1 << 40)  # only opened and its first byte read
INDEX = Kind("index", 64 * MIB, 32, 4000000)
MANIFEST = Kind("manifest", 64 * MIB, 16, 4000000, fix="stage the model again")
WEIGHTS = Kind("weights", 1 << 62)  # opened for the header or hashing: never read whole here
# safetensors' MAX_HEADER_SIZE and serde_json's recursion limit (128: a 128th nested container is refused)
HEADER_MAX_BYTES = 100000000
HEADER_MAX_DEPTH = 127
# Not a safetensors limit: ~7.5 JSON values per tensor, ~90 bytes of Python each: 2M values is ~260k tensors in one
# file (DeepSeek-V3 has 91k in all), ~200 MB at most; safetensors would take a 100 MB header of ~1M tensors (1 GiB).
HEADER_MAX_VALUES = 2000000
HEADER = Kind("safetensors header", HEADER_MAX_BYTES, HEADER_MAX_DEPTH, HEADER_MAX_VALUES,
              fix="the file is corrupt or not safetensors: download it again")
# d2t and similar small tensors whose values the check reads (a 32k-token draft's d2t: 256 KiB)
MAX_TENSOR_READ = 16 * MIB

U64_MAX = (1 << 64) - 1
# safetensors 0.8.0's Dtype and bitsize(); sub-byte types must fill whole bytes
DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32,
    "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}
_INT_ARRAY = {"I8": "b", "U8": "B", "I16": "h", "U16": "H", "I32": "i", "U32": "I", "I64": "q", "U64": "Q"}
_STRING = re.compile(br'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SKELETON_DROP = bytes(b for b in range(256) if b not in b"[]{},")
_KEEP_BRACKETS_QUOTES = bytes(b for b in range(256) if b not in b'[]{}"')
_SURROGATE_ESCAPE = re.compile(br"\\u[dD][89a-fA-F]")
_INNERMOST = re.compile(br"\[\]|\{\}")
_FLOAT_MAX = sys.float_info.max


# ---- messages

def printable(value, limit=120):
    """``value`` safe and short in a message: boundary.printable, cut at ``limit`` characters."""
    return boundary.printable(value, limit)


def sample(items, first=3):
    """The first few of ``items`` and how many more: a message never lists thousands."""
    items = list(items)
    shown = ", ".join(printable(i, 80) for i in items[:first])
    return shown + (" and %d more" % (len(items) - first) if len(items) > first else "")


def type_name(value):
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                       (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


# ---- paths

def check_rel(rel, name=None):
    """A relative path inside a tree: no absolute path, no ``..``, no empty or ``.`` part, no NUL."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\x00" in rel:
        raise Refused(name or printable(rel), "not a relative path inside the model directory", "refused, never opened")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise Refused(name or printable(rel), "leaves the model directory or is not a plain path ('..', '.', '//')",
                      "refused, never opened")
    return parts


_NOT_REGULAR_FIX = "only regular files are read (nothing is followed): put the real file there"


class Tree:
    """A model directory, opened once; every file below it is read through this descriptor."""

    def __init__(self, path=None, fd=None):
        self.path = path
        self.owned = fd is None
        if fd is None:
            try:
                fd = boundary.open_dir(path)
            except OSError as e:
                what = "not a directory" if e.errno == errno.ENOTDIR else "cannot be opened (%s)" % (e.strerror or e)
                raise Refused(printable(path), what, "point it at the model directory")
        self.fd = fd

    def close(self):
        if self.owned and self.fd is not None:
            os.close(self.fd)
        self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def names(self):
        return os.listdir(self.fd)

    def _parent(self, parts, name):
        """A descriptor of the directory holding the last part (self.fd itself when there is none; else
        boundary.walk's, no link followed)."""
        if len(parts) == 1:
            return self.fd
        try:
            return boundary.walk(self.fd, parts[:-1])
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                raise Refused(name, "%s is not a plain directory (a link or a file)" % e.walked, _NOT_REGULAR_FIX)
            raise

    def lstat(self, rel):
        """os.lstat of ``rel`` in the tree (no link followed on the way), None when it does not exist."""
        parts = check_rel(rel)
        try:
            dfd = self._parent(parts, printable(rel))
        except OSError:
            return None
        try:
            return os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        except OSError:
            return None
        finally:
            if dfd != self.fd:
                os.close(dfd)

    def open(self, rel, kind=WEIGHTS):
        """(fd, stat) of the regular file ``rel``; Refused naming what it is otherwise (nothing blocks)."""
        name = printable(rel)
        parts = check_rel(rel, name)
        try:
            dfd = self._parent(parts, name)
        except OSError as e:
            raise Refused(name, "cannot be opened (%s)" % (e.strerror or e), "check the model directory")
        try:
            try:
                before = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
            except OSError as e:
                if e.errno == errno.ENOENT:
                    raise Refused(name, "missing", "copy it into the model directory or stage the model again")
                raise Refused(name, "cannot be read (%s)" % (e.strerror or e), "check the model directory")
            if not stat.S_ISREG(before.st_mode):
                raise Refused(name, "is %s, not a regular file" % describe_mode(before.st_mode), _NOT_REGULAR_FIX)
            try:
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0),
                             dir_fd=dfd)
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise Refused(name, "is a symbolic link, not a regular file", _NOT_REGULAR_FIX)
                raise Refused(name, "cannot be opened (%s)" % (e.strerror or e), "check its owner and mode")
        finally:
            if dfd != self.fd:
                os.close(dfd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_ino, st.st_dev) != (before.st_ino, before.st_dev):
            os.close(fd)
            raise Refused(name, "was replaced while it was opened (now %s)" % describe_mode(st.st_mode),
                          "stop whatever writes into the model directory and check again")
        if st.st_size > kind.max_bytes:
            os.close(fd)
            raise Refused(name, "%d bytes, above the check's cap of %d for a %s file"
                          % (st.st_size, kind.max_bytes, kind.label), kind.fix)
        return fd, st

    def read(self, rel, kind):
        """The bytes of ``rel`` (a regular file within ``kind``'s size cap)."""
        fd, st = self.open(rel, kind)
        try:
            return read_exact(fd, 0, st.st_size, printable(rel), allow_growth=False)
        finally:
            os.close(fd)

    def json(self, rel, kind):
        """The parsed JSON of ``rel`` under ``kind``'s limits."""
        return parse_json(self.read(rel, kind), printable(rel), kind)

    def first_byte(self, rel, kind=TOKENIZER_BINARY):
        fd = self.open(rel, kind)[0]
        try:
            return read_exact(fd, 0, 1, printable(rel), short_ok=True)
        finally:
            os.close(fd)

    def header(self, rel):
        """The safetensors header of ``rel`` (a Header), held to safetensors' own rules."""
        fd, st = self.open(rel, WEIGHTS)
        try:
            return read_header_fd(fd, st.st_size, printable(rel))
        finally:
            os.close(fd)

    def tensor_values(self, rel, header, tensor, max_bytes=MAX_TENSOR_READ):
        """The values of an integer tensor of ``rel`` (a list), at most ``max_bytes`` of data read."""
        name = printable(rel)
        dtype, shape, begin, end = header.tensors[tensor]
        code = _INT_ARRAY.get(dtype)
        if code is None:
            raise Refused(name, "is %s, not an integer type" % dtype, "the draft's %s must hold token ids" % tensor,
                          field="tensor %s" % printable(tensor, 80))
        if end - begin > max_bytes:
            raise Refused(name, "%d bytes, above the check's cap of %d" % (end - begin, max_bytes), None,
                          field="tensor %s" % printable(tensor, 80))
        fd = self.open(rel, WEIGHTS)[0]
        try:
            data = read_exact(fd, header.data_start + begin, end - begin, name)
        finally:
            os.close(fd)
        values = array(code)
        values.frombytes(data)
        if sys.byteorder != "little":
            values.byteswap()
        return values


def read_exact(fd, offset, length, name, short_ok=False, allow_growth=True):
    """``length`` bytes at ``offset`` (pread: never past them, so a device or a growing file costs no more)."""
    chunks, got = [], 0
    while got < length:
        chunk = os.pread(fd, min(length - got, 16 * MIB), offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    data = b"".join(chunks)
    if got < length and not short_ok:
        raise Refused(name, "shorter than it was a moment ago (%d of %d bytes read)" % (got, length),
                      "stop whatever writes into the model directory and check again")
    if not allow_growth and os.pread(fd, 1, offset + length):
        raise Refused(name, "grew while it was read", "stop whatever writes into the model directory and check again")
    return data


# ---- one file by its path: logs, reports' inputs

# A log is read at its end only (``tail``); its size is no limit, what is read is.
LOG = Kind("log", 1 << 62, fix="only a regular file reached without a link is read: point the setting at the log "
                               "itself")


def open_path(path, kind):
    """(fd, stat) of the regular file at ``path``, opened as ``Tree.open`` opens one (the links of the directories
    above it are the host's layout; the file itself: no link followed, nothing that blocks, ``kind``'s size cap),
    or None when it, or its directory, does not exist. Refused naming ``path`` otherwise (a link - to /etc/shadow
    or anywhere -, a FIFO, a device, a directory)."""
    parent, base = os.path.split(path)
    shown = printable(path)
    if not base:
        raise Refused(shown, "names a directory, not a file", kind.fix)
    try:
        dfd = boundary.open_dir(parent or ".")
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise Refused(shown, "its directory cannot be opened (%s)" % (e.strerror or e), kind.fix)
    try:
        tree = Tree(parent, fd=dfd)
        if tree.lstat(base) is None:
            return None
        try:
            return tree.open(base, kind)
        except Refused as e:
            raise Refused(shown, e.what, e.fix, e.field)
    finally:
        os.close(dfd)


def tail(path, max_bytes, kind=LOG):
    """The last ``max_bytes`` bytes of the regular file at ``path`` (``open_path``'s rules), None when it does not
    exist; Refused naming it when it is not a regular file reached without a link."""
    opened = open_path(path, kind)
    if opened is None:
        return None
    fd, st = opened
    try:
        start = max(0, st.st_size - max_bytes)
        return read_exact(fd, start, st.st_size - start, printable(path), short_ok=True)
    finally:
        os.close(fd)


# ---- JSON with limits

def prescan(data, name, kind):
    """Refuse JSON text nested deeper than ``kind.max_depth`` or holding more than ``kind.max_values`` values,
    before the parser builds anything (its recursion and memory are never reached). Returns whether a '-' stands
    outside the strings (a negative number: parse_json's fast path leaves those to the careful one)."""
    upper = data.count(b",") + data.count(b"[") + data.count(b"{")  # strings included: never below the truth
    brackets = data.translate(None, _KEEP_BRACKETS_QUOTES).replace(b'""', b"")
    if upper > kind.max_values or b'"' in brackets or b"\\" in data:
        # a string holds a bracket or a quote, or the count is near the cap: count outside the strings exactly
        bare = _STRING.sub(b'""', data) if b"\\" in data else b'""'.join(data.split(b'"')[0::2])
        skeleton = bare.translate(None, _SKELETON_DROP)
        minus = b"-" in bare
        del bare
        values = skeleton.count(b",") + skeleton.count(b"[") + skeleton.count(b"{")
        if values > kind.max_values:
            raise Refused(name, "holds about %d JSON values, above the check's cap of %d for a %s file"
                          % (values, kind.max_values, kind.label), kind.fix)
        brackets = skeleton.translate(None, b",")
    else:
        minus = b"-" in data and b"-" in b'""'.join(data.split(b'"')[0::2])
    if len(brackets) > 2 * kind.max_depth:
        # each pass removes the innermost empty pairs: as many passes as the nesting is deep (C speed, no stack)
        for _level in range(kind.max_depth):
            brackets = _INNERMOST.sub(b"", brackets)
            if not brackets:
                break
        if _INNERMOST.search(brackets):
            raise Refused(name, "JSON nested deeper than %d levels, the check's cap for a %s file"
                          % (kind.max_depth, kind.label), kind.fix)
    return minus


class _Pairs(dict):
    """A JSON object that remembers keys given twice (safetensors refuses some) and the values the last one hid
    (serde_json still reads each of them: a malformed hidden tensor entry fails the load)."""
    twice = ()
    hidden = ()


def _object(pairs):
    obj = _Pairs(pairs)
    if len(obj) != len(pairs):
        seen, twice, hidden = set(), set(), []
        for key, value in pairs:
            (twice if key in seen else seen).add(key)
            hidden.append((key, value))
        obj.twice = twice
        obj.hidden = [(k, v) for k, v in hidden if k in twice]
    return obj


def _parse_int(text):
    if text.startswith("-"):
        return float(text)  # a negative (or -0, a float to serde_json) is never a count or an offset
    if len(text) > 20:
        return _parse_float(text)  # beyond u64: serde_json reads it as a double
    return int(text)


def _parse_float(text):
    value = float(text)
    if value in (float("inf"), float("-inf")) or abs(value) > _FLOAT_MAX:
        raise ValueError("number out of range: %s" % printable(text, 40))
    return value


def _constant(text):
    raise ValueError("%s is not JSON" % text)


def parse_json(data, name, kind, strict_numbers=False):
    """JSON ``data`` (bytes) parsed under ``kind``'s limits; Refused naming the file when it is not JSON.

    ``strict_numbers``: JSON as serde_json reads a safetensors header: a negative (-0 too) or a value past u64 a
    float, a number beyond a double refused, a lone surrogate refused, keys given twice remembered (``_Pairs``).
    Without a '-' outside strings or a \\u escape the plain C parser is used (plain dicts): header_from settles the
    common case from that at the C parser's speed, and parses again the careful way when it cannot."""
    if len(data) > kind.max_bytes:
        raise Refused(name, "%d bytes, above the check's cap of %d for a %s file"
                      % (len(data), kind.max_bytes, kind.label), kind.fix)
    minus = prescan(data, name, kind)  # before anything is built from the text
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refused(name, "not UTF-8 (byte %d)" % e.start, kind.fix)
    try:
        if strict_numbers:
            if b"\\u" in data and _SURROGATE_ESCAPE.search(data):
                _no_lone_surrogate(text, name, kind)
            if minus or b"\\u" in data:
                return _strict_loads(text)
        return json.loads(text, parse_constant=_constant)
    except RecursionError:
        raise Refused(name, "JSON nested too deep", kind.fix)
    except Refused:
        raise  # a lone surrogate, already named (a ValueError too: not to be wrapped in "not JSON (...)")
    except ValueError as e:
        raise Refused(name, "not JSON (%s)" % printable(str(e), 160), kind.fix)


def _strict_loads(text):
    return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_constant,
                      object_pairs_hook=_object)


def _maybe_twice(data, tensors):
    """Could a key safetensors refuses twice (``__metadata__``, a tensor's dtype/shape/data_offsets) be given twice?
    With every tensor a plain 3-key object, not when the text holds each key exactly once per tensor."""
    if data.count(b'"__metadata__"') > 1:
        return True
    return any(data.count(key) != tensors for key in (b'"dtype"', b'"shape"', b'"data_offsets"'))


def _no_lone_surrogate(text, name, kind):
    # serde_json refuses a \\uD800-\\uDFFF escape that is not a high+low pair, wherever it is
    try:
        json.dumps(json.loads(text, parse_constant=_constant), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(name, "JSON string with a lone surrogate escape (\\uD800-\\uDFFF)", kind.fix)
    except (ValueError, RecursionError):
        return  # refused by the parse that follows


# ---- typed fields

def field(obj, key, types, name, path=None, required=False, fix=None):
    """``obj[key]`` when it is one of ``types`` (bool is never an int), None when absent and not ``required``."""
    path = path or key
    if not isinstance(obj, dict):
        raise Refused(name, "is %s, not an object" % type_name(obj), fix or "restore the publisher's file",
                      field=path.rsplit(".", 1)[0] if "." in path else None)
    if key not in obj or obj[key] is None:
        if required:
            raise Refused(name, "missing", fix or "restore the publisher's file", field=path)
        return None
    value = obj[key]
    wanted = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in wanted:
        ok = False
    else:
        ok = isinstance(value, wanted)
    if not ok:
        names = " or ".join(type_name(t()) for t in wanted)  # type(None)() is None: "null"
        raise Refused(name, "is %s (%s), not %s" % (type_name(value), printable(repr(value), 60), names),
                      fix or "restore the publisher's file", field=path)
    return value


def int_field(obj, key, name, path=None, required=False, minimum=None, fix=None):
    value = field(obj, key, int, name, path, required, fix)
    if value is not None and minimum is not None and value < minimum:
        raise Refused(name, "is %d, below %d" % (value, minimum), fix or "restore the publisher's file",
                      field=path or key)
    return value


def int_list_field(obj, key, name, path=None, required=False, fix=None):
    value = field(obj, key, list, name, path, required, fix)
    if value is not None and not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise Refused(name, "%s is not a list of integers" % printable(value, 80), fix or "restore the publisher's file",
                      field=path or key)
    return value


# ---- safetensors

class Header:
    """A safetensors header that safetensors 0.8.0 loads: ``tensors`` {name: (dtype, shape, begin, end)},
    ``metadata`` (a dict or None), ``data_start`` (8 + N) and ``size`` (the file's exact length)."""

    def __init__(self, tensors, metadata, data_start):
        self.tensors, self.metadata, self.data_start = tensors, metadata, data_start
        self.size = data_start + max([0] + [t[3] for t in tensors.values()])

    def shapes(self):
        return dict((n, list(t[1])) for n, t in self.tensors.items())


def read_header_fd(fd, file_size, name):
    head = read_exact(fd, 0, 8, name, short_ok=True)
    length = _header_length(head, file_size, name)
    raw = read_exact(fd, 8, length, name)
    return header_from(raw, file_size, name)


def header_of_bytes(data, name="safetensors"):
    """A Header from a whole file's bytes (the form safetensors.deserialize takes)."""
    length = _header_length(data[:8], len(data), name)
    return header_from(data[8:8 + length], len(data), name)


def _header_length(head, file_size, name):
    if len(head) < 8 or file_size < 8:
        raise Refused(name, "%d bytes, shorter than the 8-byte header length" % file_size, HEADER.fix)
    (length,) = struct.unpack("<Q", head)
    if length > HEADER_MAX_BYTES:
        raise Refused(name, "header length %d is above safetensors' limit of %d" % (length, HEADER_MAX_BYTES),
                      HEADER.fix)
    if 8 + length > file_size:
        raise Refused(name, "header length %d does not fit the file (%d bytes)" % (length, file_size),
                      "the file is truncated or not safetensors: download it again")
    return length


def header_from(raw, file_size, name):
    """Held to safetensors' read_metadata: the parsed header, or Refused naming the tensor and field at fault."""
    fix = HEADER.fix
    parsed = parse_json(raw, name, HEADER, strict_numbers=True)
    data_start = 8 + len(raw)
    # the plain C parse (plain dicts): settled here when every tensor is plain and the header valid
    if isinstance(parsed, dict) and not isinstance(parsed, _Pairs):
        try:
            tensors = _bulk(parsed, file_size - data_start)
        except Exception:  # whatever the fast path trips on, the careful path names: pylint: disable=broad-except
            tensors = None
        if tensors is not None and not _maybe_twice(raw, len(tensors)):
            metadata = parsed.get("__metadata__")
            if metadata is None or (isinstance(metadata, dict) and set(map(type, metadata.values())) <= _JUST_STR):
                return Header(tensors, metadata, data_start)
        try:
            parsed = _strict_loads(raw.decode("utf-8"))  # the careful way: serde_json's numbers, keys given twice
        except (ValueError, RecursionError) as e:
            raise Refused(name, "not JSON as safetensors reads it (%s)" % printable(str(e), 160), fix)
    if not isinstance(parsed, dict):
        raise Refused(name, "the header is %s, not an object" % type_name(parsed), fix)
    if "__metadata__" in getattr(parsed, "twice", ()):
        raise Refused(name, "__metadata__ given twice", fix, field="header")
    metadata = parsed.get("__metadata__")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise Refused(name, "is %s, not a map of strings" % type_name(metadata), fix, field="__metadata__")
        odd = [k for k, v in metadata.items() if not isinstance(v, str)]
        if odd:
            raise Refused(name, "values of %s are not strings" % sample(odd), fix, field="__metadata__")
    tensors = {}
    for tensor, info in getattr(parsed, "hidden", ()):
        if tensor != "__metadata__":
            _tensor_info(tensor, info, name)  # a tensor given twice: each entry must read, the last one counts
    for tensor, info in parsed.items():
        if tensor != "__metadata__":
            tensors[tensor] = _tensor_info(tensor, info, name)
    start = 0
    for tensor, (dtype, shape, begin, end) in sorted(tensors.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        label = "tensor %s" % printable(tensor, 80)
        if begin != start or end < begin:
            what = ("overlaps the tensor before it" if begin < start else "leaves a gap after the tensor before it"
                    if begin > start else "ends before it begins")
            raise Refused(name, "data_offsets [%d, %d] %s (the data so far ends at %d)" % (begin, end, what, start),
                          fix, field=label)
        start = end
        count = 1
        for dim in shape:
            count *= dim
            if count > U64_MAX:
                raise Refused(name, "shape %s overflows 64 bits" % _shape_text(shape), fix, field=label)
        bits = count * DTYPE_BITS[dtype]
        if bits > U64_MAX:
            raise Refused(name, "shape %s x %s overflows 64 bits" % (_shape_text(shape), dtype), fix, field=label)
        if bits % 8:
            raise Refused(name, "%s %s is %d bits, not a whole number of bytes" % (dtype, _shape_text(shape), bits),
                          fix, field=label)
        if end - begin != bits // 8:
            raise Refused(name, "%s %s needs %d bytes, its data_offsets [%d, %d] give %d"
                          % (dtype, _shape_text(shape), bits // 8, begin, end, end - begin), fix, field=label)
    if data_start + start != file_size:
        what = "short" if file_size < data_start + start else "longer than its header says"
        raise Refused(name, "%s: expected %d bytes, found %d" % (what, data_start + start, file_size),
                      "the file is truncated or not what its header says: download it again")
    return Header(tensors, metadata, data_start)


def _shape_text(shape):
    if len(shape) <= 8:
        return "[%s]" % ", ".join(str(d) for d in shape)
    return "[%s, ... %d dimensions]" % (", ".join(str(d) for d in shape[:4]), len(shape))


def _bulk(parsed, data_size):
    """{name: (dtype, shape, begin, end)} when every entry is plain and the whole header is valid, decided with
    C-level passes over all tensors at once; None for anything else, which the careful per-tensor path then judges
    and names."""
    names = list(parsed)
    if "__metadata__" in parsed:
        names.remove("__metadata__")
    if not names:
        return None
    infos = list(map(parsed.__getitem__, names))
    if set(map(type, infos)) != _JUST_DICT or set(map(len, infos)) != _JUST_THREE:
        return None
    try:
        dtypes = list(map(_DTYPE, infos))
        shapes = list(map(_SHAPE, infos))
        offsets = list(map(_OFFSETS, infos))
    except KeyError:
        return None
    if set(map(type, dtypes)) != _JUST_STR or not _DTYPE_NAMES.issuperset(dtypes):
        return None
    if set(map(type, shapes)) != _JUST_LIST or set(map(type, offsets)) != _JUST_LIST:
        return None
    if set(map(len, offsets)) != _JUST_TWO:
        return None
    dims = list(chain.from_iterable(shapes))
    if dims and (set(map(type, dims)) != _JUST_INT or min(dims) <= 0 or max(dims) > U64_MAX):
        return None  # a zero (serde's overflow order then matters), a negative, a non-integer: the careful path
    ends = list(chain.from_iterable(offsets))
    if set(map(type, ends)) != _JUST_INT or min(ends) < 0 or max(ends) > U64_MAX:
        return None
    begins, stops = ends[0::2], ends[1::2]
    ordered = list(chain.from_iterable(sorted(zip(begins, stops))))
    if ordered[0] != 0 or ordered[-1] != data_size or ordered[2::2] != ordered[1:-1:2]:
        return None  # not tiled from 0 to the end without gap or overlap
    if not all(map(ge, stops, begins)):
        return None
    counts = list(map(prod, shapes))
    if max(counts) > U64_MAX or not _SUB_BYTE.isdisjoint(dtypes):
        return None  # sub-byte types: the careful path counts their bits
    if list(map(mul, counts, map(_BYTES.__getitem__, dtypes))) != list(map(sub, stops, begins)):
        return None
    if max(counts) * 8 > U64_MAX:  # bits, as safetensors counts them
        return None
    return dict(zip(names, zip(dtypes, shapes, begins, stops)))


_JUST_DICT, _JUST_LIST, _JUST_STR, _JUST_TWO, _JUST_THREE = {dict}, {list}, {str}, {2}, {3}
_DTYPE_NAMES = frozenset(DTYPE_BITS)
_SUB_BYTE = frozenset(d for d, b in DTYPE_BITS.items() if b % 8)
_BYTES = dict((d, b // 8) for d, b in DTYPE_BITS.items())
_DTYPE, _SHAPE, _OFFSETS = itemgetter("dtype"), itemgetter("shape"), itemgetter("data_offsets")
_JUST_INT = {int}


def _usize(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U64_MAX


def _tensor_info(tensor, info, name):
    """(dtype, shape tuple, begin, end) of one header entry, as serde reads TensorInfo (a map or a 3-sequence)."""
    label = "tensor %s" % printable(tensor, 80)
    fix = HEADER.fix
    if isinstance(info, list):
        if len(info) != 3:
            raise Refused(name, "a sequence of %d items, not [dtype, shape, data_offsets]" % len(info), fix,
                          field=label)
        dtype, shape, offsets = info
    elif isinstance(info, dict):
        twice = [k for k in ("dtype", "shape", "data_offsets") if k in getattr(info, "twice", ())]
        if twice:
            raise Refused(name, "%s given twice" % ", ".join(twice), fix, field=label)
        missing = [k for k in ("dtype", "shape", "data_offsets") if k not in info]
        if missing:
            raise Refused(name, "no %s" % ", ".join(missing), fix, field=label)
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    else:
        raise Refused(name, "is %s, not {dtype, shape, data_offsets}" % type_name(info), fix, field=label)
    if isinstance(dtype, dict) and len(dtype) == 1 and list(dtype.values())[0] is None:
        dtype = list(dtype)[0]  # serde's externally tagged form of a unit variant: {"BF16": null}
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise Refused(name, "dtype %s is not one safetensors knows (%s)"
                      % (printable(dtype, 40), sample(sorted(DTYPE_BITS), 4)),
                      fix, field=label)
    if not isinstance(shape, list) or not all(_usize(d) for d in shape):
        bad = printable(shape, 60) if not isinstance(shape, list) else sample(
            [repr(d) for d in shape if not _usize(d)])
        raise Refused(name, "shape is not a list of sizes (%s)" % bad, fix, field=label)
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_usize(o) for o in offsets):
        raise Refused(name, "data_offsets %s is not [begin, end]" % printable(offsets, 60), fix, field=label)
    return dtype, shape, offsets[0], offsets[1]
