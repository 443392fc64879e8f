# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""models/checkpoint's safetensors header from both sides (issue 37), through read_header: a shard one byte short,
exact and one byte long (the real library refuses the long one too), the header length at the file's end and at
safetensors' MAX_HEADER, data offsets at zero and reversed, a tensor's byte count off by one."""
import json
import struct

import pytest
from safetensors.numpy import save_file
import numpy as np

from ansible_collections.llmserve.sglang.plugins.module_utils.models import checkpoint as ck


def shard(tmp_path, name="model.safetensors"):
    path = tmp_path / name
    save_file({"w": np.zeros((2, 3), dtype=np.float16)}, str(path))
    return path


def raw_shard(tmp_path, header, data=b"", name="raw.safetensors"):
    body = json.dumps(header).encode()
    path = tmp_path / name
    path.write_bytes(struct.pack("<Q", len(body)) + body + data)
    return path


def test_a_shard_the_library_wrote_reads_at_its_exact_size(tmp_path):
    path = shard(tmp_path)
    header, expected = ck.read_header(str(path))
    assert expected == path.stat().st_size and header["w"]["shape"] == [2, 3]


@pytest.mark.parametrize("delta, what", [(-1, "short"), (1, "longer than its header says")])
def test_a_shard_one_byte_off_is_refused_both_ways(tmp_path, delta, what):
    path = shard(tmp_path)
    data = path.read_bytes()
    size = len(data)
    path.write_bytes(data[:-1] if delta < 0 else data + b"\0")
    with pytest.raises(ck.ShardError) as err:
        ck.read_header(str(path))
    assert str(err.value) == "model.safetensors: %s: expected %d bytes, found %d" % (what, size, size + delta)


@pytest.mark.parametrize("size", [0, 7])
def test_a_file_shorter_than_the_length_field(tmp_path, size):
    path = tmp_path / "s.safetensors"
    path.write_bytes(b"\1" * size)
    with pytest.raises(ck.ShardError, match="s.safetensors: %d bytes, shorter than the 8-byte header length" % size):
        ck.read_header(str(path))


@pytest.mark.parametrize("extra, fits", [(-1, False), (0, True)])
def test_the_header_length_may_reach_the_files_end_and_not_past_it(tmp_path, extra, fits):
    body = b"{}"
    path = tmp_path / "h.safetensors"
    path.write_bytes(struct.pack("<Q", len(body) - extra) + body[:len(body) + extra] if extra < 0 else
                     struct.pack("<Q", len(body)) + body)
    if fits:
        assert ck.read_header(str(path)) == ({}, 8 + len(body))
    else:
        with pytest.raises(ck.ShardError, match="header length 3 does not fit the file \\(9 bytes\\)"):
            ck.read_header(str(path))


@pytest.mark.parametrize("length, refused_by_size", [(ck.MAX_HEADER, False), (ck.MAX_HEADER + 1, True)])
def test_the_header_length_is_capped_at_safetensors_max(tmp_path, length, refused_by_size):
    path = tmp_path / "big.safetensors"
    with open(str(path), "wb") as f:
        f.write(struct.pack("<Q", length))
        f.truncate(8 + ck.MAX_HEADER + 1)  # sparse: long enough for either length
    with pytest.raises(ck.ShardError) as err:
        ck.read_header(str(path))
    assert ("does not fit the file" in str(err.value)) == refused_by_size
    assert ck.MAX_HEADER == 100000000


@pytest.mark.parametrize("offsets, ok", [([0, 0], True), ([4, 4], True), ([5, 4], False), ([-1, 0], False)])
def test_data_offsets_must_be_ordered_and_not_negative(tmp_path, offsets, ok):
    path = raw_shard(tmp_path, {"t": {"dtype": "X-UNKNOWN", "shape": [0], "data_offsets": offsets}},
                     b"\0" * offsets[1] if offsets[1] > 0 else b"")
    if ok:
        assert ck.read_header(str(path))[1] == path.stat().st_size
    else:
        with pytest.raises(ck.ShardError, match="tensor t has data_offsets"):
            ck.read_header(str(path))


@pytest.mark.parametrize("end, ok", [(11, False), (12, True), (13, False)])
def test_a_tensors_bytes_must_be_its_shape_times_its_width(tmp_path, end, ok):
    path = raw_shard(tmp_path, {"t": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, end]}}, b"\0" * end)
    if ok:
        assert ck.read_header(str(path))[0]["t"]["data_offsets"] == [0, 12]
    else:
        with pytest.raises(ck.ShardError, match=r"tensor t \(F16 \[2, 3\]\) needs 12 bytes, its data_offsets give %d"
                           % end):
            ck.read_header(str(path))


@pytest.mark.parametrize("header, words", [([], "is not a JSON object"), ({"t": {"dtype": "F16"}}, "has no dtype"),
                                          ({"t": 5}, "has no dtype")])
def test_a_header_that_is_not_tensors_is_refused(tmp_path, header, words):
    with pytest.raises(ck.ShardError, match=words):
        ck.read_header(str(raw_shard(tmp_path, header)))


def test_metadata_is_not_a_tensor(tmp_path):
    path = raw_shard(tmp_path, {"__metadata__": {"format": "pt"}})
    assert ck.read_header(str(path)) == ({"__metadata__": {"format": "pt"}}, path.stat().st_size)
