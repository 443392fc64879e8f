# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang's fixed ports (module_utils/sglang/ports.py) against the real wheels (tests/sglang_wheels), and the
preflight that refuses a port inside the ephemeral range or taken (server/preflight.check_port_window), on real
sockets."""
import testpaths
import os
import re
import socket
import sys
import zipfile

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import ports  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import compare  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight  # noqa: E402

VERSIONS = sorted(set(W.SUPPORTED) | {"0.5.12", "0.5.13", "0.5.20", "0.5.21", "0.5.22"},
                  key=lambda v: [int(x) for x in re.findall(r"\d+", v)])


def member(version, name):
    with zipfile.ZipFile(W.wheel_path(version)) as z:
        return z.read(name).decode("utf-8")


def init_new(version):
    src = member(version, "sglang/srt/server_args.py")
    start = src.index("def init_new(")
    return src, src[start:src.index("\nclass ", start) if "\nclass " in src[start:] else len(src)]


@pytest.mark.parametrize("version", VERSIONS)
def test_port_facts_match_the_wheel(version):
    src, body = init_new(version)
    assert re.search(r"^ZMQ_TCP_PORT_DELTA = %d$" % ports.ZMQ_TCP_PORT_DELTA, src, re.M)
    assert re.search(r"^DP_ATTENTION_HANDSHAKE_PORT_DELTA = %d$" % ports.DP_ATTENTION_HANDSHAKE_PORT_DELTA, src, re.M)
    # one node: the rendezvous is --port + delta; the derived ports follow it
    assert "server_args.port + ZMQ_TCP_PORT_DELTA" in body
    assert re.search(r"port_base = dist_init_port \+ 1\b", body)
    # the highest fixed offset (not the Rust front end's "port_base + 6 + dp_rank")
    highest = max(int(k) for k in re.findall(r"port_base \+ (\d+)(?! \+)", body))
    assert 1 + highest == ports.derived_count(version)
    # the nccl port SGLang picks itself: below the ephemeral range from BELOW_EPHEMERAL_SINCE on, bind(0) before
    below = "nccl_port = get_free_port_below_ephemeral()" in body
    assert below == (compare(version, ports.BELOW_EPHEMERAL_SINCE) >= 0)
    assert below or "nccl_port = get_free_port()" in body
    if below:
        net = member(version, "sglang/srt/utils/network.py")
        assert "def get_free_port_below_ephemeral(low=%d, high=%d, attempts=%d)" % (
            ports.BELOW_EPHEMERAL_WINDOW + (ports.BELOW_EPHEMERAL_ATTEMPTS,)) in net


def test_fixed_ports_one_node_dp_attention():
    got = ports.fixed_ports(["--model-path", "/m", "--port", "30000", "--enable-dp-attention", "--dp-size", "8"])
    assert [p for p, _w in got] == [30000, 30233, 30234, 30235, 30236, 30237, 30238, 30239, 30013]
    old = ports.fixed_ports(["--port", "30000", "--enable-dp-attention"], "0.5.10.post1")
    assert [p for p, _w in old] == [30000, 30233, 30234, 30235, 30236, 30237, 30238, 30013]
    assert ports.fixed_ports(["--port=31000", "--nccl-port", "25000"]) == [
        (31000, "the HTTP port (--port)"), (25000, "the torch.distributed store (--nccl-port)")]
    multi = ports.fixed_ports(["--enable-dp-attention", "--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000"])
    assert [p for p, _w in multi] == [30000, 5000, 5001, 5002, 5003, 5004, 5005, 5006, 5013]


def test_a_port_inside_the_ephemeral_range_is_refused_with_both_fixes():
    problems, _w = ports.check(["--port", "40000", "--enable-dp-attention"], "0.5.23", (32768, 60999))
    assert len(problems) == 1
    msg = problems[0]
    assert "40000 (the HTTP port (--port))" in msg and "40233" in msg and "40013" in msg
    assert "below 32768" in msg
    assert "net.ipv4.ip_local_reserved_ports=40000,40013,40233-40239" in msg
    # reserved: accepted
    assert ports.check(["--port", "40000", "--enable-dp-attention"], "0.5.23", (32768, 60999),
                       "40000,40013,40233-40239\n")[0] == []
    # the widened range of sglang#37215 catches the default port
    assert ports.check(["--port", "30000"], "0.5.23", (10000, 61000))[0]
    assert ports.check(["--port", "30000"], "0.5.23", (32768, 60999))[0] == []


@pytest.mark.parametrize("version, ephemeral, warned", [
    ("0.5.15.post1", (32768, 60999), True),    # bind(0): an ephemeral port
    ("0.5.23", (32768, 60999), False),         # 22000-29999, below the range
    ("0.5.23", (10000, 61000), True),          # no room below the range: falls back to bind(0)
])
def test_nccl_port_left_to_sglang_is_a_warning_by_version(version, ephemeral, warned):
    problems, warnings = ports.check(["--port", "5000"], version, ephemeral)
    assert problems == []
    assert bool(warnings) is warned
    if warned:
        assert "nccl-port" in warnings[0] and "below %d" % ephemeral[0] in warnings[0]
    assert ports.check(["--port", "5000", "--nccl-port", "5001"], version, ephemeral)[1] == []


def test_parsers():
    assert ports.parse_range("32768\t60999\n") == (32768, 60999)
    assert ports.parse_range("") is None
    assert ports.parse_reserved("8080,30000-30002\n") == {8080, 30000, 30001, 30002}
    assert ports.parse_reserved("") == set()


def proc(tmp_path, rng, reserved=""):
    d = tmp_path / "sys" / "net" / "ipv4"
    d.mkdir(parents=True)
    (d / "ip_local_port_range").write_text(rng)
    (d / "ip_local_reserved_ports").write_text(reserved)
    return str(tmp_path)


def test_preflight_refuses_a_taken_internal_port_naming_it(tmp_path):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    taken = holder.getsockname()[1]
    try:
        warnings = []
        # an ephemeral range that holds none of these ports: only the taken one can be refused
        c = preflight.check_port_window(["--port", "3", "--nccl-port", str(taken)], "0.5.23", warnings=warnings,
                                        proc_root=proc(tmp_path, "1 2\n"))
        assert not c["ok"] and c["name"] == "ports"
        assert "the torch.distributed store (--nccl-port)" in c["msg"] and "port %d is in use by" % taken in c["msg"]
    finally:
        holder.close()
    c = preflight.check_port_window(["--port", "3", "--nccl-port", str(taken)], "0.5.23",
                                    proc_root=proc(tmp_path / "b", "1 2\n"))
    assert c["ok"], c["msg"]


def test_preflight_reads_the_hosts_range(tmp_path):
    c = preflight.check_port_window(["--port", "30000"], "0.5.23", proc_root=proc(tmp_path, "10000 61000\n"))
    assert not c["ok"] and "10000-61000" in c["msg"]
    c = preflight.check_port_window(["--port", "30000"], "0.5.23",
                                    proc_root=proc(tmp_path / "r", "10000 61000\n", "30000\n"))
    assert c["ok"]
