# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/untrusted (issue 33): what a hostile model tree holds is refused, named, in bounded time and memory; the
safetensors header rules agree with the real library (safetensors 0.8.0) on generated headers."""
import json
import os
import socket
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.host import untrusted as U

safetensors = pytest.importorskip("safetensors")
ROOT = os.geteuid() == 0
PROPERTY = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def _st(header, data=None, raw=None):
    text = raw if raw is not None else json.dumps(header).encode("utf-8")
    return struct.pack("<Q", len(text)) + text + (data if data is not None else b"")


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- what a file is: only a regular file is read, nothing blocks, nothing is followed

def test_a_symlink_out_of_the_tree_is_refused_and_its_target_never_read(tmp_path):
    secret = _write(str(tmp_path / "secret"), struct.pack("<Q", 12345678) + b"root only")
    tree = tmp_path / "model"
    tree.mkdir()
    os.symlink(secret, str(tree / "model.safetensors"))
    with U.Tree(str(tree)) as t, pytest.raises(U.Refused) as e:
        t.header("model.safetensors")
    assert str(e.value).startswith("model.safetensors: is a symbolic link, not a regular file")
    assert "12345678" not in str(e.value)


def test_a_link_to_dev_zero_is_refused_without_reading(tmp_path):
    os.symlink("/dev/zero", str(tmp_path / "config.json"))
    with U.Tree(str(tmp_path)) as t, pytest.raises(U.Refused, match="config.json: is a symbolic link"):
        t.json("config.json", U.CONFIG)


def test_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(str(tmp_path / "tokenizer.json"))
    with U.Tree(str(tmp_path)) as t, pytest.raises(U.Refused, match=r"tokenizer.json: is a FIFO \(named pipe\)"):
        t.json("tokenizer.json", U.TOKENIZER)


def test_a_directory_and_a_socket_are_named(tmp_path):
    (tmp_path / "config.json").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s.safetensors"))
    try:
        with U.Tree(str(tmp_path)) as t:
            with pytest.raises(U.Refused, match="config.json: is a directory, not a regular file"):
                t.json("config.json", U.CONFIG)
            with pytest.raises(U.Refused, match="s.safetensors: is a socket"):
                t.header("s.safetensors")
    finally:
        sock.close()


@pytest.mark.skipif(not ROOT, reason="mknod needs root")
def test_a_device_node_is_refused_without_being_opened(tmp_path):
    os.mknod(str(tmp_path / "model.safetensors"), 0o600 | 0o020000, os.makedev(1, 5))  # /dev/zero's numbers
    with U.Tree(str(tmp_path)) as t, pytest.raises(U.Refused, match="is a character device"):
        t.header("model.safetensors")


def test_a_link_on_the_way_is_not_followed(tmp_path):
    (tmp_path / "real").mkdir()
    _write(str(tmp_path / "real" / "x.json"), b"{}")
    tree = tmp_path / "model"
    tree.mkdir()
    os.symlink(str(tmp_path / "real"), str(tree / "sub"))
    with U.Tree(str(tree)) as t, pytest.raises(U.Refused, match="sub is not a plain directory"):
        t.json("sub/x.json", U.CONFIG)


@pytest.mark.parametrize("rel", ["/etc/passwd", "../x", "a/../../x", "a//b", ".", ""])
def test_a_name_out_of_the_tree_is_refused_unopened(tmp_path, rel):
    with U.Tree(str(tmp_path)) as t, pytest.raises(U.Refused, match="refused, never opened"):
        t.open(rel)


# ---- caps: at, just below, just above

def test_size_cap_of_a_kind_at_and_above(tmp_path):
    kind = U.Kind("config", 16)
    _write(str(tmp_path / "at.json"), b'{"a": "0123456"}')  # 16 bytes
    _write(str(tmp_path / "above.json"), b'{"a": "01234567"}')
    with U.Tree(str(tmp_path)) as t:
        assert t.json("at.json", kind) == {"a": "0123456"}
        with pytest.raises(U.Refused, match="17 bytes, above the check's cap of 16 for a config file"):
            t.json("above.json", kind)


@pytest.mark.parametrize("depth,ok", [(63, True), (64, True), (65, False)])
def test_depth_cap_at_below_above(depth, ok):
    text = ("[" * depth + "]" * depth).encode()
    if ok:
        U.parse_json(text, "f.json", U.CONFIG)
    else:
        with pytest.raises(U.Refused, match="f.json: JSON nested deeper than 64 levels"):
            U.parse_json(text, "f.json", U.CONFIG)


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"a": "[" * 500, "b": "\\\"{" * 300}).encode()
    assert U.parse_json(text, "f.json", U.CONFIG)["a"] == "[" * 500


def test_100k_nesting_is_refused_before_the_parser_recurses():
    text = b"[" * 100000 + b"]" * 100000
    with pytest.raises(U.Refused, match="nested deeper than 64"):
        U.parse_json(text, "config.json", U.CONFIG)
    header = _st(None, raw=b'{"t":{"dtype":"U8","shape":[],"data_offsets":[0,1],"x":' + b"[" * 100000 +
                 b"]" * 100000 + b"}}", data=b"\0")
    with pytest.raises(U.Refused, match="nested deeper than 127 levels"):
        U.header_of_bytes(header, "x.safetensors")


def test_value_cap_at_and_above():
    kind = U.Kind("index", 1 << 20, 8, 10)
    U.parse_json(b"[1,2,3,4,5,6,7,8,9]", "i.json", kind)  # 8 commas + 1 bracket = 9
    U.parse_json(b"[1,2,3,4,5,6,7,8,9,10]", "i.json", kind)  # 10
    with pytest.raises(U.Refused, match="about 11 JSON values, above the check's cap of 10"):
        U.parse_json(b"[1,2,3,4,5,6,7,8,9,10,11]", "i.json", kind)


def test_a_shape_of_300k_dimensions_is_refused_in_one_short_line():
    shape = [1] * 300000
    data = _st({"t": {"dtype": "U8", "shape": shape, "data_offsets": [0, 2]}}, b"\0\0")
    with pytest.raises(U.Refused) as e:
        U.header_of_bytes(data, "big.safetensors")
    assert "[1, 1, 1, 1, ... 300000 dimensions] needs 1 bytes" in str(e.value) and len(str(e.value)) < 400


def test_a_header_near_the_limit_costs_bounded_memory():
    # ~24 MB of header, every value an empty object: refused by the value cap before anything is built
    body = b'{"t":{"dtype":"U8","shape":[],"data_offsets":[0,1],"x":[' + b"{}," * 8000000 + b'{}]}}'
    tracemalloc.start()
    try:
        with pytest.raises(U.Refused, match="above the check's cap of %d" % U.HEADER_MAX_VALUES):
            U.header_of_bytes(_st(None, raw=body, data=b"\0"), "huge.safetensors")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few copies of the text (the file's bytes, the header, its skeleton), never a Python object per value
    # (json.loads of it alone peaks near 1.3 GB)
    assert peak < 6 * len(body)


def test_the_header_length_limit_is_safetensors_own():
    at = struct.pack("<Q", U.HEADER_MAX_BYTES) + b"{}"
    above = struct.pack("<Q", U.HEADER_MAX_BYTES + 1) + b"{}"
    with pytest.raises(U.Refused, match="does not fit the file"):
        U.header_of_bytes(at)
    with pytest.raises(U.Refused, match="above safetensors' limit of 100000000"):
        U.header_of_bytes(above)


def test_a_device_like_growing_file_is_never_read_past_its_cap(tmp_path):
    # pread of exactly the header's length: a file that grows after fstat is refused, not read to EOF
    path = _write(str(tmp_path / "c.json"), b"{}")
    with U.Tree(str(tmp_path)) as t:
        fd, st_ = t.open("c.json", U.CONFIG)
        try:
            with open(path, "ab") as f:
                f.write(b" " * 100)
            with pytest.raises(U.Refused, match="grew while it was read"):
                U.read_exact(fd, 0, st_.st_size, "c.json", allow_growth=False)
        finally:
            os.close(fd)


# ---- typed fields

def test_typed_fields_name_file_and_field():
    cfg = {"vocab_size": "32000", "layers": True, "archs": [1]}
    with pytest.raises(U.Refused, match=r"^config.json vocab_size: is a string \('32000'\), not an integer"):
        U.int_field(cfg, "vocab_size", "config.json")
    with pytest.raises(U.Refused, match="config.json layers: is a boolean"):
        U.int_field(cfg, "layers", "config.json")
    with pytest.raises(U.Refused, match="config.json hidden_size: missing"):
        U.int_field(cfg, "hidden_size", "config.json", required=True)
    with pytest.raises(U.Refused, match="config.json: is a list, not an object"):
        U.int_field([], "vocab_size", "config.json")
    assert U.int_field({"vocab_size": 7}, "vocab_size", "config.json", minimum=7) == 7
    with pytest.raises(U.Refused, match="is 6, below 7"):
        U.int_field({"vocab_size": 6}, "vocab_size", "config.json", minimum=7)


def test_long_lists_in_messages_are_cut():
    assert U.sample(range(100000)) == "0, 1, 2 and 99997 more"
    assert len(U.printable("x" * 10 ** 6)) < 200


# ---- never a traceback: a refusal or a pass

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
                    max_leaves=20)


@PROPERTY
@given(st.binary(max_size=300))
def test_any_bytes_are_a_header_or_a_refusal(data):
    try:
        U.header_of_bytes(data, "x.safetensors")
    except U.Refused as e:
        assert str(e).startswith("x.safetensors")


@PROPERTY
@given(JSON)
def test_any_json_is_a_header_config_or_refusal(value):
    raw = json.dumps(value).encode()
    for parse in (lambda: U.header_of_bytes(_st(None, raw=raw), "h.safetensors"),
                  lambda: U.parse_json(raw, "config.json", U.CONFIG),
                  lambda: U.int_field(value, "vocab_size", "config.json"),
                  lambda: U.int_list_field(value, "ids", "config.json")):
        try:
            parse()
        except U.Refused:
            pass


@PROPERTY
@given(st.binary(max_size=200), st.sampled_from([U.CONFIG, U.INDEX, U.HEADER]))
def test_any_bytes_are_json_or_a_refusal(data, kind):
    try:
        U.parse_json(data, "f.json", kind, strict_numbers=kind is U.HEADER)
    except U.Refused as e:
        assert str(e).startswith("f.json")


# ---- the same verdict as safetensors 0.8.0 on generated headers

DTYPES = sorted(U.DTYPE_BITS) + ["C128", "F8_E4M3FN", "bf16", ""]
NUMBER = st.one_of(st.integers(0, 40), st.integers(0, 2 ** 64 + 5), st.sampled_from(
    ["-0", "-1", "1.0", "1e2", "18446744073709551615", "18446744073709551616", "true", "null", '"3"']))


def _num(n):
    return n if isinstance(n, str) else str(n)


@st.composite
def headers(draw):
    """Raw header text and file bytes: mostly valid layouts, then perturbed the ways files go wrong."""
    count = draw(st.integers(0, 5))
    entries, offset = [], 0
    for i in range(count):
        dtype = draw(st.sampled_from(DTYPES) if draw(st.integers(0, 9)) == 0 else st.sampled_from(sorted(U.DTYPE_BITS)))
        shape = draw(st.lists(st.integers(0, 6), max_size=3))
        elements = 1
        for d in shape:
            elements *= d
        bits = elements * U.DTYPE_BITS.get(dtype, 8)
        size = bits // 8
        begin, end = offset, offset + size
        mutate = draw(st.integers(0, 14))
        shape_text = [str(d) for d in shape]
        if mutate == 1:
            end += draw(st.integers(-2, 2))
        elif mutate == 2:
            begin = max(0, begin - draw(st.integers(1, 3)))  # overlap
        elif mutate == 3:
            begin += 1  # gap
        elif mutate == 4 and shape_text:
            shape_text[0] = _num(draw(NUMBER))
        elif mutate == 5:
            shape_text = [_num(draw(NUMBER)) for _dim in range(draw(st.integers(1, 3)))]
        offset = max(offset, end)
        offs = [str(begin), str(end)]
        if mutate == 6:
            offs[draw(st.integers(0, 1))] = _num(draw(NUMBER))
        if mutate == 7:
            offs.append("0")
        dtype_text = json.dumps(dtype)
        if mutate == 8:
            dtype_text = '{"%s": null}' % dtype
        form = draw(st.integers(0, 9))
        if form == 0:
            body = '[%s,[%s],[%s]]' % (dtype_text, ",".join(shape_text), ",".join(offs))
        else:
            fields = ['"dtype":%s' % dtype_text, '"shape":[%s]' % ",".join(shape_text),
                      '"data_offsets":[%s]' % ",".join(offs)]
            if mutate == 9:
                fields.pop(draw(st.integers(0, 2)))
            if mutate == 10:
                fields.append('"extra":%s' % draw(st.sampled_from(
                    ["1", "-0", "1e400", "1" + "0" * 400, "1" + "0" * 300, '"\\ud800"', '"\\ud83d\\ude00"',
                     "[" * 126 + "]" * 126, "[" * 125 + "]" * 125, "NaN", '{"a":[1,{"b":null}]}'])))
            if mutate == 11:
                fields.append(fields[draw(st.integers(0, len(fields) - 1))])
            body = "{%s}" % ",".join(fields)
        name = draw(st.sampled_from(["t%d" % i, "w.%d" % i, "\\u0074%d" % i, "t0"]))
        entries.append('"%s":%s' % (name, body))
    meta = draw(st.sampled_from([None, '{"format":"pt"}', "null", '{"a":1}', "[]", '{"a":"\\ud800"}']))
    if meta is not None:
        entries.insert(draw(st.integers(0, len(entries))), '"__metadata__":%s' % meta)
        if draw(st.integers(0, 9)) == 0:
            entries.append('"__metadata__":%s' % meta)
    text = ("{%s}" % ",".join(entries)).encode()
    text += b" " * draw(st.integers(0, 7))
    data = b"\0" * max(0, offset + draw(st.sampled_from([0, 0, 0, 1, -1])))
    return _st(None, raw=text, data=data)


@settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(headers())
def test_the_check_accepts_exactly_what_safetensors_loads(data):
    try:
        safetensors.deserialize(data)
        library = True
    except Exception:  # the library's own error types vary by version: pylint: disable=broad-except
        library = False
    try:
        ours = U.header_of_bytes(data, "x.safetensors")
    except U.Refused:
        ours = None
    assert (ours is not None) == library, data[:400]


@pytest.mark.parametrize("header, loads", [
    # a tensor given twice: serde_json reads every entry, the last one counts (found by the differential test)
    ('{"t0":{"shape":[],"data_offsets":[0,0]},"t0":["BF16",[],[0,2]]}', False),
    ('{"t0":{"dtype":"F32","shape":[7],"data_offsets":[0,0]},"t0":["BF16",[],[0,2]]}', True),
    ('{"t0":{"dtype":"NOPE","shape":[],"data_offsets":[0,2]},"t0":["BF16",[],[0,2]]}', False),
])
def test_a_tensor_given_twice_reads_as_safetensors_reads_it(header, loads):
    raw = header.encode()
    data = struct.pack("<Q", len(raw)) + raw + b"\0\0"
    try:
        safetensors.deserialize(data)
        library = True
    except Exception:  # the library's own error types vary by version: pylint: disable=broad-except
        library = False
    assert library is loads
    try:
        ours = U.header_of_bytes(data, "x.safetensors")
    except U.Refused:
        ours = None
    assert (ours is not None) is loads


def test_a_file_written_by_safetensors_passes_and_agrees(tmp_path):
    np = pytest.importorskip("numpy")
    from safetensors.numpy import save_file
    path = str(tmp_path / "m.safetensors")
    save_file({"a": np.ones((3, 5), dtype=np.float16), "b": np.arange(4, dtype=np.int64)}, path, metadata={"k": "v"})
    with U.Tree(str(tmp_path)) as t:
        header = t.header("m.safetensors")
        assert header.shapes() == {"a": [3, 5], "b": [4]} and header.metadata == {"k": "v"}
        assert list(t.tensor_values("m.safetensors", header, "b")) == [0, 1, 2, 3]
        assert header.size == os.path.getsize(path)


@pytest.mark.parametrize("inner", [124, 125, 126, 127])
def test_nesting_limit_is_serde_jsons_at_and_around(inner):
    # the tensor's object is level 2: 125 arrays inside it make 127 levels (loaded), 126 make 128 (refused)
    raw = ('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":%s}}' % ("[" * inner + "]" * inner)).encode()
    data = _st(None, raw=raw, data=b"\0")
    try:
        safetensors.deserialize(data)
        library = True
    except Exception:  # pylint: disable=broad-except
        library = False
    assert library == (inner <= 125)
    try:
        U.header_of_bytes(data)
        ours = True
    except U.Refused:
        ours = False
    assert ours == library
