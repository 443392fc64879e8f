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

Every file is read through host/untrusted (no link followed, nothing that blocks, caps per kind of file, the
header held to safetensors' own rules); any error becomes a problem naming the file, never a traceback.
"""

from __future__ import annotations

import os

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted
from ansible_collections.llmserve.sglang.plugins.module_utils.host.untrusted import Refused

INDEX_NAME = "model.safetensors.index.json"
SINGLE_NAME = "model.safetensors"
# safetensors' own limit on the header (safetensors/src/tensor.rs: MAX_HEADER_SIZE)
MAX_HEADER = untrusted.HEADER_MAX_BYTES
# From this many shards on, headers are parsed in forked processes (a 64-shard checkpoint: 1.1 s on one core).
PARALLEL_SHARDS = 16
# The forked header parse must end within this (a shard on a hung network filesystem blocks its reader).
PARALLEL_DEADLINE_S = 300
# No real checkpoint comes near (DeepSeek-V3: 163 shards); an index naming more is refused before any is opened.
MAX_SHARDS = 10000
# At most this many problems are listed; the rest are counted.
MAX_PROBLEMS = 20
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tiktoken.model", "vocab.json", "spiece.model")
# read beside them when present; a corrupt one fails AutoTokenizer as surely as a missing tokenizer.json
TOKENIZER_JSON = ("tokenizer_config.json", "special_tokens_map.json")

ShardError = Refused


def unexpected(name, error, step):
    """An error the check did not foresee, as a problem naming the file and what to do (never a traceback)."""
    return ("%s: the check could not read it (%s while %s: %s): the file is likely corrupt - download it again; "
            "if it is whole, report this" % (name, type(error).__name__, step, untrusted.printable(str(error), 160)))


def capped(problems, limit=MAX_PROBLEMS):
    if len(problems) <= limit:
        return problems
    return problems[:limit] + ["and %d more problems" % (len(problems) - limit)]


def read_header(path, tree=None):
    """(Header, file size) of one safetensors file: ``path`` is a shard name in ``tree``, else a full path."""
    if tree is None:
        with untrusted.Tree(os.path.dirname(path) or ".") as own:
            return read_header(os.path.basename(path), own)
    header = tree.header(path)
    return header, header.size


def read_config(tree, name="config.json"):
    """config.json as a dict; Refused naming the file when it is missing, not JSON or not an object."""
    config = tree.json(name, untrusted.CONFIG)
    if not isinstance(config, dict):
        raise Refused(name, "is %s, not an object" % untrusted.type_name(config), "restore the publisher's config.json")
    return config


def check_checkpoint(path, require_tokenizer=True, known_whole=None, workers=None):
    """Problems with the checkpoint at ``path`` (an empty list when it is whole), each naming the file.

    Returns (problems, notes): notes say what could not be checked (no safetensors, for one). ``known_whole``: a
    structure_stamp under which this checkpoint's weights were found whole before; when the files still match it
    the headers are not parsed again (config and tokenizer are checked every time).
    """
    try:
        tree = untrusted.Tree(path)
    except Refused as e:
        return [str(e)], []
    with tree:
        try:
            return _check(tree, require_tokenizer, known_whole, workers)
        except Refused as e:
            return [str(e)], []
        except Exception as e:  # never a traceback: named, with the fix: pylint: disable=broad-except
            return [unexpected(untrusted.printable(path), e, "checking the checkpoint")], []


def _check(tree, require_tokenizer, known_whole, workers):
    problems, notes = [], []
    names = set(tree.names())
    if "config.json" not in names:
        problems.append("config.json: missing (every checkpoint needs it)")
    else:
        try:
            read_config(tree)
        except Refused as e:
            problems.append(str(e))
    if require_tokenizer:
        problems.extend(tokenizer_problems(tree, names))
    if known_whole is not None and known_whole == structure_stamp(tree):
        notes.append("weights unchanged since they were found whole (size, mtime, ctime, inode of every shard)")
    elif INDEX_NAME in names:
        problems.extend(_check_sharded(tree, workers))
    elif SINGLE_NAME in names:
        problems.extend(_one(tree, SINGLE_NAME))
    else:
        loose = sorted(n for n in names if n.endswith(".safetensors"))
        for shard in loose:
            problems.extend(_one(tree, shard))
        if not loose:
            notes.append("no safetensors files: the weights' structure was not checked")
    return capped(problems), notes


def _one(tree, shard):
    try:
        read_header(shard, tree)
    except Refused as e:
        return [str(e)]
    except Exception as e:  # pylint: disable=broad-except
        return [unexpected(untrusted.printable(shard), e, "reading its safetensors header")]
    return []


def tokenizer_problems(tree, names=None):
    """The tokenizer SGLang loads from the model directory (AutoTokenizer): present, readable, JSON where JSON.
    ``tree``: an untrusted.Tree or a directory path."""
    if not isinstance(tree, untrusted.Tree):
        try:
            with untrusted.Tree(tree) as own:
                return tokenizer_problems(own, names)
        except Refused as e:
            return [str(e)]
    names = set(tree.names()) if names is None else names
    present = sorted(names.intersection(TOKENIZER_FILES)) + sorted(n for n in names if n.endswith(".tiktoken"))
    if not present:
        return ["tokenizer: none of %s present: copy the tokenizer files into the checkpoint, or point SGLang at "
                "them (server_args: {tokenizer-path: DIR})" % ", ".join(TOKENIZER_FILES)]
    problems = []
    for name in present + [n for n in TOKENIZER_JSON if n in names and n not in present]:
        try:
            if name.endswith(".json"):
                tree.json(name, untrusted.TOKENIZER)
            elif not tree.first_byte(name):
                raise Refused(name, "empty", "copy the tokenizer files again")
        except Refused as e:
            problems.append("tokenizer %s" % e)
        except Exception as e:  # pylint: disable=broad-except
            problems.append("tokenizer " + unexpected(name, e, "reading it"))
    return problems


def index_map(tree):
    """{shard: [tensors]} of the index, every shard name inside the tree; Refused naming the field otherwise."""
    index = tree.json(INDEX_NAME, untrusted.INDEX)
    weight_map = untrusted.field(index, "weight_map", dict, INDEX_NAME, required=True,
                                 fix="restore the publisher's index")
    if not weight_map:
        raise Refused(INDEX_NAME, "is empty", "restore the publisher's index", field="weight_map")
    by_shard = {}
    odd = [] if set(map(type, weight_map.values())) == {str} else [
        t for t, s in weight_map.items() if not isinstance(s, str)]
    if odd:
        raise Refused(INDEX_NAME, "the shards of %d tensors are not file names (%s)" % (len(odd), untrusted.sample(odd)),
                      "restore the publisher's index", field="weight_map")
    for tensor, shard in weight_map.items():
        by_shard.setdefault(shard, []).append(tensor)
    if len(by_shard) > MAX_SHARDS:
        raise Refused(INDEX_NAME, "names %d shards, above the check's cap of %d" % (len(by_shard), MAX_SHARDS),
                      "restore the publisher's index", field="weight_map")
    # the index comes from whoever made the checkpoint: a shard name that leaves the tree is never opened
    outside = []
    for shard in by_shard:
        try:
            untrusted.check_rel(shard)
        except Refused:
            outside.append(shard)
    if outside:
        raise Refused(INDEX_NAME, "names %d shards outside the model directory (%s)"
                      % (len(outside), untrusted.sample(sorted(outside))),
                      "refused, never opened: restore the publisher's index", field="weight_map")
    return by_shard


def weight_files(tree):
    """The safetensors files SGLang reads (index order, else the single or loose files); only names that stay
    inside the tree (an index the check refused yields none)."""
    names = set(tree.names())
    if INDEX_NAME in names:
        try:
            return sorted(index_map(tree))
        except Refused:
            return []
    if SINGLE_NAME in names:
        return [SINGLE_NAME]
    return sorted(n for n in names if n.endswith(".safetensors"))


def tensor_headers(tree):
    """{tensor: (shard, Header)} from every readable safetensors header of the checkpoint (unreadable ones skipped:
    the structure check names them)."""
    found = {}
    for shard in weight_files(tree):
        try:
            header = read_header(shard, tree)[0]
        except Refused:
            continue
        for name in header.tensors:
            found[name] = (shard, header)
    return found


def tensor_shapes(path):
    """{tensor: shape} from every safetensors header of the checkpoint at ``path`` (unreadable shards skipped)."""
    try:
        with untrusted.Tree(path) as tree:
            return dict((n, list(h.tensors[n][1])) for n, (_s, h) in tensor_headers(tree).items())
    except Refused:
        return {}


def _shard_problems(tree, shard, tensors):
    """Problems of one shard the index names."""
    st = tree.lstat(shard)
    if st is None:
        return ["%s: missing (the index names it for %d tensors)" % (untrusted.printable(shard), len(tensors))]
    try:
        header = read_header(shard, tree)[0]
    except Refused as e:
        return [str(e)]
    except Exception as e:  # pylint: disable=broad-except
        return [unexpected(untrusted.printable(shard), e, "reading its safetensors header")]
    absent = [t for t in tensors if t not in header.tensors]
    if absent:
        return ["%s: %d tensors the index puts there are not in it (first: %s)"
                % (untrusted.printable(shard), len(absent), untrusted.printable(absent[0]))]
    return []


def _names_digest(names):
    """Order-free digest of a set of tensor names (forked children share the parent's str hash seed)."""
    return len(names), sum(hash(n) for n in names) & 0xFFFFFFFFFFFFFFFF


def _header_digest(job):
    """In a forked worker: (problems, digest of the header's tensor names) of one shard file."""
    dir_fd, shard = job
    try:
        header = read_header(shard, untrusted.Tree(fd=dir_fd))[0]
    except Refused as e:
        return [str(e)], None
    except Exception as e:  # pylint: disable=broad-except
        return [unexpected(untrusted.printable(shard), e, "reading its safetensors header")], None
    return [], _names_digest(list(header.tensors))


def _workers(count, workers=None):
    """Processes to parse headers with: JSON decoding holds the GIL, so big checkpoints use forked children."""
    if workers is not None:
        return max(1, workers)
    if count < PARALLEL_SHARDS or not hasattr(os, "fork"):
        return 1
    return max(1, min(count // 2, os.cpu_count() or 1, 32))


def structure_stamp(tree):
    """What the structure verdict depends on: every safetensors file and the index, by size, mtime, ctime (no user
    can set it: any write or rename moves it), inode and device; links not followed. None when one cannot be read.
    ``tree``: an untrusted.Tree or a directory path."""
    if not isinstance(tree, untrusted.Tree):
        try:
            with untrusted.Tree(tree) as own:
                return structure_stamp(own)
        except Refused:
            return None
    stamp = []
    for name in sorted(tree.names()):
        if name.endswith(".safetensors") or name == INDEX_NAME:
            st = tree.lstat(name)
            if st is None:
                return None
            stamp.append([name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev])
    return stamp


def _check_sharded(tree, workers=None):
    if not isinstance(tree, untrusted.Tree):
        with untrusted.Tree(tree) as own:
            return _check_sharded(own, workers)
    files = sorted(n for n in tree.names() if n.endswith(".safetensors"))
    n = _workers(len(files), workers)
    pool = pending = None
    if n > 1:
        # the headers are parsed in children while this process parses the index (the two largest JSON reads)
        try:
            import multiprocessing
            pool = multiprocessing.get_context("fork").Pool(n)
            pending = pool.map_async(_header_digest, [(tree.fd, f) for f in files], chunksize=1)
        except (OSError, ImportError, ValueError):
            pool = pending = None
    try:
        try:
            by_shard = index_map(tree)
        except Refused as e:
            return [str(e)]
        if pending is None:
            return [p for shard in sorted(by_shard) for p in _shard_problems(tree, shard, by_shard[shard])]
        try:
            parsed = dict(zip(files, pending.get(PARALLEL_DEADLINE_S)))
        except Exception as e:  # multiprocessing.TimeoutError or a worker's death: pylint: disable=broad-except
            return ["%d shards: their headers were not all read within %s s (%s): a shard on a hung or slow "
                    "filesystem? Check the model directory's storage" % (len(files), PARALLEL_DEADLINE_S,
                                                                         type(e).__name__)]
    finally:
        if pool is not None:
            pool.terminate()
    problems = []
    for shard in sorted(by_shard):
        if shard not in parsed:
            problems.extend(_shard_problems(tree, shard, by_shard[shard]))  # missing (or in a subdirectory)
            continue
        found, digest = parsed[shard]
        if found:
            problems.extend(found)
        elif digest != _names_digest(by_shard[shard]):
            # the header's names differ from the index's: name the absent ones (an extra tensor is no problem)
            problems.extend(_shard_problems(tree, shard, by_shard[shard]))
    return problems


def read_json(path, kind=untrusted.CONFIG):
    """A JSON file's content; ValueError (Refused) naming the problem when it is unreadable or not JSON."""
    with untrusted.Tree(os.path.dirname(path) or ".") as tree:
        return tree.json(os.path.basename(path), kind)
