# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A checkpoint's own structure, checked without a manifest (stdlib only, Python >= 3.8).

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON naming every tensor's dtype, shape
and ``data_offsets`` (relative to byte 8 + N), then the data. The safetensors library refuses a file whose data is
not exactly as long as the largest offset, so a short shard is found from its header alone, without reading the
data. A sharded checkpoint's ``model.safetensors.index.json`` maps every tensor to its shard (``weight_map``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import struct

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
# safetensors' own limit on the header (safetensors/src/tensor.rs: MAX_HEADER_SIZE)
MAX_HEADER = 100000000
DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}
# From this many shards on, headers are parsed in forked processes (a 64-shard checkpoint: 1.1 s on one core).
PARALLEL_SHARDS = 16
# Sub-byte types (F4 and friends) pack several elements in a byte: their size is not checked against the shape.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tiktoken.model", "vocab.json", "spiece.model")
# read beside them when present; a corrupt one fails AutoTokenizer as surely as a missing tokenizer.json
TOKENIZER_JSON = ("tokenizer_config.json", "special_tokens_map.json")


class ShardError(Exception):
    """A shard that cannot be used; the message names the file and what is wrong."""


def read_header(path):
    """The parsed header of one safetensors file and the file size it needs; raises ShardError naming the problem."""
    name = os.path.basename(path)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ShardError("%s: %d bytes, shorter than the 8-byte header length" % (name, size))
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER or 8 + length > size:
                raise ShardError("%s: header length %d does not fit the file (%d bytes): truncated or not safetensors"
                                 % (name, length, size))
            raw = f.read(length)
    except (IOError, OSError) as e:
        raise ShardError("%s: unreadable (%s)" % (name, e.strerror or e))
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as e:
        raise ShardError("%s: the header is not JSON (%s): corrupt or not safetensors" % (name, e))
    if not isinstance(header, dict):
        raise ShardError("%s: the header is not a JSON object" % name)
    data_end = 0
    widths = DTYPE_BYTES
    for tensor, info in header.items():
        if tensor == "__metadata__":
            continue
        try:
            begin, end = info["data_offsets"]
            shape = info["shape"]
            dtype = info["dtype"]
        except (KeyError, TypeError, ValueError):
            raise ShardError("%s: tensor %s has no dtype/shape/data_offsets" % (name, tensor))
        if not 0 <= begin <= end:
            raise ShardError("%s: tensor %s has data_offsets %s" % (name, tensor, [begin, end]))
        width = widths.get(dtype)
        if width is not None:
            count = 1
            for dim in shape:
                count *= dim
            if count * width != end - begin:
                raise ShardError("%s: tensor %s (%s %s) needs %d bytes, its data_offsets give %d"
                                 % (name, tensor, dtype, shape, count * width, end - begin))
        data_end = max(data_end, end)
    expected = 8 + length + data_end
    if size != expected:
        what = "short" if size < expected else "longer than its header says"
        raise ShardError("%s: %s: expected %d bytes, found %d" % (name, what, expected, size))
    return header, expected


def check_checkpoint(path, require_tokenizer=True, known_whole=None):
    """Problems with the checkpoint at ``path`` (an empty list when it is whole), each naming the file.

    Returns (problems, notes): notes say what could not be checked (no safetensors, for one). ``known_whole``: a
    structure_stamp under which this checkpoint's weights were found whole before; when the files still match it
    the headers are not parsed again (config and tokenizer are checked every time).
    """
    problems, notes = [], []
    if not os.path.isdir(path):
        return ["%s: not a directory" % path], notes
    names = set(os.listdir(path))
    if "config.json" not in names:
        problems.append("config.json: missing (every checkpoint needs it)")
    else:
        try:
            read_json(os.path.join(path, "config.json"))
        except ValueError as e:
            problems.append("config.json: %s" % e)
    if require_tokenizer:
        problems.extend(tokenizer_problems(path, names))
    if known_whole is not None and known_whole == structure_stamp(path):
        notes.append("weights unchanged since they were found whole (size, mtime, ctime, inode of every shard)")
    elif INDEX_NAME in names:
        problems.extend(_check_sharded(path))
    elif SINGLE_NAME in names:
        try:
            read_header(os.path.join(path, SINGLE_NAME))
        except ShardError as e:
            problems.append(str(e))
    else:
        loose = sorted(n for n in names if n.endswith(".safetensors"))
        for shard in loose:
            try:
                read_header(os.path.join(path, shard))
            except ShardError as e:
                problems.append(str(e))
        if not loose:
            notes.append("no safetensors files: the weights' structure was not checked")
    return problems, notes


def tokenizer_problems(path, names=None):
    """The tokenizer SGLang loads from the model directory (AutoTokenizer): present, readable, JSON where JSON."""
    names = set(os.listdir(path)) if names is None else names
    present = sorted(names.intersection(TOKENIZER_FILES)) + sorted(n for n in names if n.endswith(".tiktoken"))
    if not present:
        return ["tokenizer: none of %s present: copy the tokenizer files into the checkpoint, or point SGLang at "
                "them (server_args: {tokenizer-path: DIR})" % ", ".join(TOKENIZER_FILES)]
    problems = []
    for name in present + [n for n in TOKENIZER_JSON if n in names and n not in present]:
        full = os.path.join(path, name)
        try:
            if name.endswith(".json"):
                read_json(full)
            else:
                with open(full, "rb") as f:
                    if not f.read(1):
                        raise ValueError("empty")
        except (ValueError, IOError, OSError) as e:
            problems.append("tokenizer %s: %s" % (name, e))
    return problems


def weight_files(path):
    """The safetensors files SGLang reads from ``path`` (index order, else the single or loose files)."""
    names = set(os.listdir(path))
    if INDEX_NAME in names:
        try:
            wm = read_json(os.path.join(path, INDEX_NAME)).get("weight_map") or {}
            return sorted(set(v for v in wm.values() if isinstance(v, str)))
        except (ValueError, AttributeError):
            return []
    if SINGLE_NAME in names:
        return [SINGLE_NAME]
    return sorted(n for n in names if n.endswith(".safetensors"))


def tensor_shapes(path):
    """{tensor: shape} from every safetensors header of the checkpoint at ``path`` (unreadable shards skipped)."""
    shapes = {}
    for shard in weight_files(path):
        try:
            header = read_header(os.path.join(path, shard))[0]
        except ShardError:
            continue
        for name, info in header.items():
            if name != "__metadata__":
                shapes[name] = list(info.get("shape") or [])
    return shapes


def _shard_problems(job):
    """Problems of one shard the index names: (path, shard, [tensors the index puts there]) -> [problem]."""
    path, shard, tensors = job
    shard_path = os.path.join(path, shard)
    if not os.path.isfile(shard_path):
        return ["%s: missing (the index names it for %d tensors)" % (shard, len(tensors))]
    try:
        header = read_header(shard_path)[0]
    except ShardError as e:
        return [str(e)]
    absent = [t for t in tensors if t not in header]
    if absent:
        return ["%s: %d tensors the index puts there are not in it (first: %s)" % (shard, len(absent), absent[0])]
    return []


def _names_digest(names):
    """Order-free digest of a set of tensor names (forked children share the parent's str hash seed)."""
    return len(names), sum(hash(n) for n in names) & 0xFFFFFFFFFFFFFFFF


def _header_digest(job):
    """In a worker: (problems, digest of the header's tensor names) of one shard file."""
    path, shard = job
    try:
        header = read_header(os.path.join(path, shard))[0]
    except ShardError as e:
        return [str(e)], None
    return [], _names_digest([n for n in header if n != "__metadata__"])


def _workers(count, workers=None):
    """Processes to parse headers with: JSON decoding holds the GIL, so big checkpoints use forked children."""
    if workers is not None:
        return max(1, workers)
    if count < PARALLEL_SHARDS or not hasattr(os, "fork"):
        return 1
    return max(1, min(count // 2, os.cpu_count() or 1, 32))


def structure_stamp(path):
    """What the structure verdict of ``path`` depends on: every safetensors file and the index, by size, mtime,
    ctime (no user can set it: any write or rename moves it), inode and device. None when a file cannot be read."""
    stamp = []
    try:
        for name in sorted(os.listdir(path)):
            if name.endswith(".safetensors") or name == INDEX_NAME:
                st = os.stat(os.path.join(path, name))
                stamp.append([name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev])
    except OSError:
        return None
    return stamp


def _check_sharded(path, workers=None):
    files = sorted(n for n in os.listdir(path) if n.endswith(".safetensors"))
    n = _workers(len(files), workers)
    pool = pending = None
    if n > 1:
        # the headers are parsed in children while this process parses the index (the two largest JSON reads)
        try:
            import multiprocessing
            pool = multiprocessing.get_context("fork").Pool(n)
            pending = pool.map_async(_header_digest, [(path, f) for f in files], chunksize=1)
        except (OSError, ImportError, ValueError):
            pool = pending = None
    try:
        try:
            index = read_json(os.path.join(path, INDEX_NAME))
            weight_map = index["weight_map"]
            if not isinstance(weight_map, dict) or not weight_map:
                raise ValueError("weight_map is empty")
        except (ValueError, KeyError, TypeError) as e:
            return ["%s: %s" % (INDEX_NAME, e)]
        by_shard = {}
        for tensor, shard in weight_map.items():
            by_shard.setdefault(shard, []).append(tensor)
        # the index comes from whoever made the checkpoint: a shard name that leaves the tree is never opened
        try:
            contain.check_names(list(by_shard), "%s names shard" % INDEX_NAME)
        except contain.Refused as e:
            return [str(e)]
        if pending is None:
            return [p for shard in sorted(by_shard) for p in _shard_problems((path, shard, by_shard[shard]))]
        parsed = dict(zip(files, pending.get()))
    finally:
        if pool is not None:
            pool.terminate()
    problems = []
    for shard in sorted(by_shard):
        if shard not in parsed:
            problems.extend(_shard_problems((path, shard, by_shard[shard])))  # missing (or oddly named)
            continue
        found, digest = parsed[shard]
        if found:
            problems.extend(found)
        elif digest != _names_digest(by_shard[shard]):
            # the header's names differ from the index's: name the absent ones (an extra tensor is no problem)
            problems.extend(_shard_problems((path, shard, by_shard[shard])))
    return problems


def read_json(path):
    """A JSON file's content; ValueError naming the problem when it is unreadable or not JSON."""
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (IOError, OSError) as e:
        raise ValueError("unreadable (%s)" % (e.strerror or e))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError("not JSON (%s)" % e)
