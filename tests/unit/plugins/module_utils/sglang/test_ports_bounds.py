# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SGLang's fixed ports held from both sides (issue 37: mutants of ports.py that the first tests let live): each
spelling of the DP-attention switches, one node and several, the edges of the ephemeral range and of the window
SGLang 0.5.22+ picks the nccl port in, and the exact words of each port."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import ports

ONE = "--port + 233"
MULTI = "--dist-init-addr's port"


def expected(base, why, n, handshake, handshake_why):
    out = [(base, "the DP-attention rendezvous (%s)" % why)]
    out += [(base + i, "a DP-attention internal port (%s + %d)" % (why, i)) for i in range(1, n + 1)]
    out.append((handshake, "the DP-attention handshake (%s)" % handshake_why))
    return out


HTTP = (30000, "the HTTP port (--port)")


def test_no_dp_attention_binds_the_http_port_and_the_given_nccl_port_only():
    assert ports.fixed_ports([]) == [HTTP]
    assert ports.fixed_ports(["--port", "31000", "--nccl-port", "31001"]) == [
        (31000, "the HTTP port (--port)"), (31001, "the torch.distributed store (--nccl-port)")]
    assert ports.fixed_ports(["--port=31000", "--nccl-port=0"]) == [(31000, "the HTTP port (--port)")]
    # a value that holds "=" is kept whole (only the first "=" splits the flag from its value)
    assert ports._opts(["--x=a=b", "--y", "--z", "v"]) == {"--x": "a=b", "--y": True, "--z": "v"}


@pytest.mark.parametrize("size, on", [(0, False), (1, False), (2, True)])
def test_attn_dp_size_turns_dp_attention_on_above_one(size, on):
    got = ports.fixed_ports(["--attn-dp-size", str(size)], "0.5.15.post1")
    assert got == ([HTTP] + expected(30233, ONE, 6, 30013, "--port + 13") if on else [HTTP])


def test_one_node_dp_attention_ports_and_words():
    got = ports.fixed_ports(["--enable-dp-attention", "--nnodes", "1"], "0.5.15.post1")
    assert got == [HTTP] + expected(30233, ONE, 6, 30013, "--port + 13")


@pytest.mark.parametrize("argv", [["--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000"],
                                  ["--nnodes", "1", "--dist-init-addr", "10.0.0.1:5000"],
                                  ["--nnodes", "2", "--dist-init-addr", "[fd00::1]:5000"]])
def test_dist_init_addr_moves_the_rendezvous_to_its_port(argv):
    got = ports.fixed_ports(["--enable-dp-attention"] + argv, "0.5.12")
    assert got == [HTTP] + expected(5000, MULTI, 5, 5013, "--dist-init-addr's port + 13")


def test_several_nodes_without_an_address_bind_no_dp_port():
    assert ports.fixed_ports(["--enable-dp-attention", "--nnodes", "2"], "0.5.15.post1") == [HTTP]
    assert ports.fixed_ports(["--enable-dp-attention", "--nnodes", "2", "--dist-init-addr", "host"], "0.5.15") == [HTTP]


@pytest.mark.parametrize("version, n", [("0.5.12", 5), ("0.5.13", 6), ("0.5.14", 6), ("", 6), ("not-a-version", 6)])
def test_derived_count_changes_at_0_5_13(version, n):
    assert ports.derived_count(version) == n


@pytest.mark.parametrize("port, inside", [(9999, False), (10000, True), (10001, True), (19999, True), (20000, True),
                                          (20001, False)])
def test_the_ephemeral_range_is_inclusive_at_both_ends(port, inside):
    problems, _w = ports.check(["--port", str(port), "--nccl-port", "1"], "0.5.23", (10000, 20000))
    assert bool(problems) == inside
    if inside:
        assert problems == [
            "SGLang would bind %d (the HTTP port (--port)) inside the host's ephemeral port range 10000-20000 "
            "(net.ipv4.ip_local_port_range), where any outgoing connection can take it first (EADDRINUSE at start-up,"
            " sglang#37215). Fix: give server_port (and --nccl-port / --dist-init-addr) below 10000, or reserve them: "
            "sysctl -w net.ipv4.ip_local_reserved_ports=%d (and the same in /etc/sysctl.d/ to keep it)" % (port, port)]


def test_the_reserve_fix_lists_the_reserved_ports_and_the_new_ones_as_spans():
    problems, _w = ports.check(["--port", "30000", "--enable-dp-attention"], "0.5.12", (30000, 40000), "8080,30234")
    assert "net.ipv4.ip_local_reserved_ports=8080,30000,30013,30233-30238 " in problems[0]
    assert "30234 (" not in problems[0]


@pytest.mark.parametrize("lo, warned", [
    (22064, False),  # 22000..22063: exactly 64 ports below the range, enough for SGLang's 64 attempts
    (22063, True),  # 63 ports: SGLang falls back to an ephemeral port
    (22065, False), (40000, False)])
def test_the_nccl_window_needs_64_ports_below_the_range(lo, warned):
    _p, warnings = ports.check(["--port", "1000"], "0.5.22", (lo, 60999))
    assert bool(warnings) == warned
    if warned:
        assert warnings == [
            "no --nccl-port: the ephemeral range starts at %d, so SGLang 0.5.22 falls back to an ephemeral port and "
            "binds it again later, which fails now and then with TCPStore EADDRINUSE (sglang#37215). Fix: set "
            "server_args: {nccl-port: P} with a free P below %d" % (lo, lo)]


def test_a_window_above_29999_is_cut_at_29999():
    # the window is 22000-29999 whatever the range: a range from 60000 still leaves 8000 ports
    assert ports.check(["--port", "1000"], "0.5.22", (60000, 60999))[1] == []


@pytest.mark.parametrize("version, warned", [("0.5.21", True), ("0.5.22", False), ("0.5.23", False), ("", True)])
def test_sglang_picks_its_nccl_port_below_the_range_from_0_5_22(version, warned):
    _p, warnings = ports.check(["--port", "1000"], version, (32768, 60999))
    assert bool(warnings) == warned
    if warned:
        assert warnings[0].startswith("no --nccl-port: SGLang %s picks it among the kernel's ephemeral ports "
                                      "(32768-60999) and binds it again later" % version)
        assert warnings[0].endswith("with a free P below 32768")


def test_an_unreadable_range_is_a_warning_not_a_check():
    assert ports.check(["--port", "30000"], "0.5.23", None) == (
        [], ["net.ipv4.ip_local_port_range unreadable: SGLang's ports not checked against it"])


@pytest.mark.parametrize("text, want", [("32768\t60999", (32768, 60999)), ("1 2 3", None), ("1", None),
                                        ("a 2", None), ("1 b", None), (None, None)])
def test_parse_range(text, want):
    assert ports.parse_range(text) == want


@pytest.mark.parametrize("text, want", [
    ("8080", {8080}), ("8080-8080", {8080}), ("1-3", {1, 2, 3}), ("1-3\n7", {1, 2, 3, 7}), (" 5 , 6 ", {5, 6}),
    ("x,9", {9}), ("1-x,9", {9}), ("-3,9", {9}), ("", set()), (None, set())])
def test_parse_reserved(text, want):
    assert ports.parse_reserved(text) == want


def test_nnodes_zero_counts_as_one_node():
    assert ports.fixed_ports(["--enable-dp-attention", "--nnodes", "0"], "0.5.15.post1") == (
        [HTTP] + expected(30233, ONE, 6, 30013, "--port + 13"))


def test_an_empty_item_in_the_reserved_list_is_skipped_not_the_end():
    assert ports.parse_reserved("1,,2") == {1, 2}
    assert ports.parse_reserved("1,\n,2") == {1, 2}


def test_each_port_inside_the_range_is_listed_with_what_it_is():
    problems, _w = ports.check(["--port", "15000", "--nccl-port", "15001"], "0.5.23", (10000, 20000))
    assert problems[0].startswith("SGLang would bind 15000 (the HTTP port (--port)); 15001 (the torch.distributed "
                                  "store (--nccl-port)) inside the host's ephemeral port range 10000-20000 ")
    assert "ip_local_reserved_ports=15000-15001 " in problems[0]
