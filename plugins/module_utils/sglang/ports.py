# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TCP ports an SGLang server binds besides --port, and the check that none of them can collide.

Read in the wheels (``srt/server_args.py`` ``PortArgs.init_new``, ``srt/managers/data_parallel_controller.py``;
tests/unit/plugins/module_utils/sglang/test_sglang_ports.py checks these facts against each one):

- ``--port``: HTTP.
- ``--nccl-port`` (torch.distributed's TCPStore): when not given, SGLang picks one itself. Up to 0.5.21 it asks the
  kernel for a free ephemeral port (``bind(0)``) and binds it again later, in the scheduler: any outgoing connection
  of the host can take it in between (TCPStore ``EADDRINUSE``, sglang#37215). From 0.5.22 it picks a free port in
  22000-29999 below the ephemeral range, unless that range starts at or below 22063, where it falls back to ``bind(0)``.
- With data-parallel attention (``--enable-dp-attention``): ``dist_init_port`` = ``--port`` + 233 on one node
  (``--dist-init-addr``'s port on several), then the five ports after it (tokenizer, detokenizer, rpc, metrics,
  scheduler input; a sixth, the load collector, from 0.5.13), and the DP controller's handshake at that base + 13
  (``--port`` + 13 on one node).

The kernel hands out ephemeral ports (``net.ipv4.ip_local_port_range``) to every outgoing connection; a fixed port
inside that range, not listed in ``net.ipv4.ip_local_reserved_ports``, can be taken by any client a moment before
SGLang binds it. The check refuses such a port and names both fixes (move the port below the range, or reserve it);
it does not change the host's sysctls itself.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client, gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import compare, is_version

ZMQ_TCP_PORT_DELTA = 233
DP_ATTENTION_HANDSHAKE_PORT_DELTA = 13
# How many ports after the rendezvous: tokenizer, detokenizer, rpc, metrics, scheduler input; 0.5.13 adds the load
# collector. (The opt-in Rust front end, SGLANG_RUST_SERVER=1, adds one per DP rank after those: not covered.)
DERIVED_AFTER_DIST_INIT = ((gates.GATES["load_collector_port"], 6), ("0", 5))
BELOW_EPHEMERAL_SINCE = gates.GATES["nccl_port_below_ephemeral"]
BELOW_EPHEMERAL_WINDOW = (22000, 29999)
BELOW_EPHEMERAL_ATTEMPTS = 64


def _opts(argv):
    """argv -> {"--flag": value or True} (the last spelling wins, as argparse does)."""
    out = {}
    argv = [str(a) for a in argv or []]
    for i, a in enumerate(argv):
        if not a.startswith("--"):
            continue
        if "=" in a:
            k, v = a.split("=", 1)
            out[k] = v
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out[a] = argv[i + 1]
        else:
            out[a] = True
    return out


def _int(v, default=None):
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def derived_count(version):
    """How many internal ports follow the DP-attention rendezvous port in this SGLang version."""
    for since, n in DERIVED_AFTER_DIST_INIT:
        if is_version(version) and compare(version, since) >= 0:
            return n
    return DERIVED_AFTER_DIST_INIT[0][1]  # unknown version: the larger window


def fixed_ports(argv, version=""):
    """``[(port, what)]``: the ports this command line makes SGLang bind at a fixed number, in bind order."""
    o = _opts(argv)
    port = _int(o.get("--port"), client.DEFAULT_PORT)  # SGLang's own default
    out = [(port, "the HTTP port (--port)")]
    nccl = _int(o.get("--nccl-port"))
    if nccl:
        out.append((nccl, "the torch.distributed store (--nccl-port)"))
    dp_attention = o.get("--enable-dp-attention") is True or (_int(o.get("--attn-dp-size"), 1) or 1) > 1
    if dp_attention:
        nnodes = _int(o.get("--nnodes"), 1) or 1
        addr = o.get("--dist-init-addr")
        if nnodes == 1 and not addr:
            base = port + ZMQ_TCP_PORT_DELTA
            handshake = port + DP_ATTENTION_HANDSHAKE_PORT_DELTA
            why = "--port + %d" % ZMQ_TCP_PORT_DELTA
        else:
            base = _int(str(addr).rsplit(":", 1)[-1]) if addr else None
            handshake = base + DP_ATTENTION_HANDSHAKE_PORT_DELTA if base else None
            why = "--dist-init-addr's port"
        if base:
            out.append((base, "the DP-attention rendezvous (%s)" % why))
            for i in range(1, derived_count(version) + 1):
                out.append((base + i, "a DP-attention internal port (%s + %d)" % (why, i)))
            out.append((handshake, "the DP-attention handshake (%s)" % (
                "--port + %d" % DP_ATTENTION_HANDSHAKE_PORT_DELTA if nnodes == 1 and not addr
                else "--dist-init-addr's port + %d" % DP_ATTENTION_HANDSHAKE_PORT_DELTA)))
    return out


def parse_range(text):
    """``/proc/sys/net/ipv4/ip_local_port_range`` ("32768\\t60999") -> (32768, 60999); None when unreadable."""
    parts = str(text or "").split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def parse_reserved(text):
    """``ip_local_reserved_ports`` ("8080,30000-30010") -> set of ports."""
    out = set()
    for item in str(text or "").replace("\n", ",").split(","):
        item = item.strip()
        if not item:
            continue
        lo, _sep, hi = item.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _spans(ports):
    """[30000, 30001, 30002, 30005] -> "30000-30002,30005" (the syntax ip_local_reserved_ports takes)."""
    runs = []
    for p in sorted(set(int(x) for x in ports)):
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return ",".join("%d-%d" % (a, b) if b != a else "%d" % a for a, b in runs)


def check(argv, version, ephemeral, reserved_text=""):
    """``(problems, warnings)``: words naming each collision and its fix. ``ephemeral``: :func:`parse_range`."""
    problems, warnings = [], []
    if not ephemeral:
        return problems, ["net.ipv4.ip_local_port_range unreadable: SGLang's ports not checked against it"]
    lo, hi = int(ephemeral[0]), int(ephemeral[1])
    reserved = parse_reserved(reserved_text)
    ports = fixed_ports(argv, version)
    inside = [(p, what) for p, what in ports if lo <= p <= hi and p not in reserved]
    if inside:
        listed = "; ".join("%d (%s)" % (p, what) for p, what in inside)
        wanted = sorted(reserved | set(p for p, _w in inside))
        problems.append(
            "SGLang would bind %s inside the host's ephemeral port range %d-%d (net.ipv4.ip_local_port_range), "
            "where any outgoing connection can take it first (EADDRINUSE at start-up, sglang#37215). Fix: give "
            "server_port (and --nccl-port / --dist-init-addr) below %d, or reserve them: sysctl -w "
            "net.ipv4.ip_local_reserved_ports=%s (and the same in /etc/sysctl.d/ to keep it)"
            % (listed, lo, hi, lo, _spans(wanted)))
    o = _opts(argv)
    if not _int(o.get("--nccl-port")):
        below = is_version(version) and compare(version, BELOW_EPHEMERAL_SINCE) >= 0
        window_ok = min(BELOW_EPHEMERAL_WINDOW[1], lo - 1) - BELOW_EPHEMERAL_WINDOW[0] + 1 >= BELOW_EPHEMERAL_ATTEMPTS
        if not (below and window_ok):
            why = ("SGLang %s picks it among the kernel's ephemeral ports (%d-%d)" % (version, lo, hi) if not below
                   else "the ephemeral range starts at %d, so SGLang %s falls back to an ephemeral port" % (lo, version))
            warnings.append("no --nccl-port: %s and binds it again later, which fails now and then with TCPStore "
                            "EADDRINUSE (sglang#37215). Fix: set server_args: {nccl-port: P} with a free P below %d"
                            % (why, lo))
    return problems, warnings
