# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Addresses and listening sockets of a host (stdlib only; runs on the controller and on targets).

The one home of three rules: how a listen address becomes a URL this machine reaches (a wildcard means loopback,
an IPv6 literal is bracketed), which addresses are this machine (``on_this_host``), and how /proc/net/tcp{,6} names
the sockets listening on a port.
"""

from __future__ import annotations

import os

# Bind-to-everything spellings (SGLang's --host, sglang-router's --host, a Prometheus listen address).
WILDCARD = ("", "0.0.0.0", "::", "[::]")
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def on_this_host(host):
    """True for an address that reaches this machine without leaving it: loopback, or a wildcard bind spelled as a
    URL's host (``http://0.0.0.0:30000`` connects to the local machine)."""
    return str(host or "").strip().lower() in LOOPBACK + WILDCARD


def host_port(address, port):
    """``address:port`` with an IPv6 literal bracketed (``[::1]:30000``)."""
    address = str(address)
    if ":" in address and not address.startswith("["):
        address = "[%s]" % address
    return "%s:%s" % (address, port)


def split_listen_address(address):
    """``'0.0.0.0:9090'`` -> ``('0.0.0.0', 9090)``; ``'[::]:9090'`` -> ``('::', 9090)``; ``':9090'`` -> ``('', 9090)``
    (Prometheus' ``--web.listen-address`` and the like). Raises ValueError without a port."""
    host, sep, port = str(address).rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError("%r is not HOST:PORT" % (address,))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def local_url(listen_host, port, scheme="http"):
    """The URL a client on the same machine uses for a server listening on ``listen_host``:``port``.

    A wildcard bind is reached on loopback of the same family (``::`` -> ``[::1]``: an IPv6-only socket does not
    answer 127.0.0.1).
    """
    host = str(listen_host if listen_host is not None else "").strip()
    if host in WILDCARD:
        host = "::1" if host in ("::", "[::]") else "127.0.0.1"
    return "%s://%s" % (scheme, host_port(host, int(port)))


def local_url_or_empty(listen_host, port):
    """``local_url``, or "" where host or port cannot make one (a view publishes "" rather than fail its build)."""
    try:
        return local_url(listen_host, port)
    except (TypeError, ValueError):
        return ""


def listening_sockets(port, proc_root="/proc"):
    """``{inode: uid}`` of the sockets listening on TCP ``port`` (IPv4 and IPv6); None when /proc/net is unreadable."""
    found, readable = {}, False
    for table in ("net/tcp", "net/tcp6"):
        try:
            with open(os.path.join(proc_root, table), "rb") as handle:
                lines = handle.read().decode("utf-8", "replace").splitlines()[1:]
        except (OSError, IOError):
            continue
        readable = True
        for line in lines:
            f = line.split()
            # state 0A is TCP_LISTEN; local_address is HEXIP:HEXPORT
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == int(port):
                found[f[9]] = int(f[7])
    return found if readable else None


def socket_holders(inodes, proc_root="/proc"):
    """Pids whose fd table holds one of the socket ``inodes`` (fd tables this user cannot read are skipped)."""
    pids = set()
    if not inodes:
        return pids
    for name in os.listdir(proc_root):
        if not name.isdigit():
            continue
        fd_dir = os.path.join(proc_root, name, "fd")
        try:
            fds = os.listdir(fd_dir)
        except (OSError, IOError):
            continue
        for fd in fds:
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except (OSError, IOError):
                continue
            if link.startswith("socket:[") and link[8:-1] in inodes:
                pids.add(int(name))
                break
    return pids
