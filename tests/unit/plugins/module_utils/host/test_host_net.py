# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host/net.py: the one rule from a listen address to a local URL, checked against real listeners, and the one
/proc/net/tcp parser."""
import asyncio
import socket
import threading
import urllib.request

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.host import net


@pytest.mark.parametrize("listen, url", [
    ("0.0.0.0", "http://127.0.0.1:30000"), ("", "http://127.0.0.1:30000"), (None, "http://127.0.0.1:30000"),
    ("::", "http://[::1]:30000"), ("[::]", "http://[::1]:30000"), ("::1", "http://[::1]:30000"),
    ("10.0.0.5", "http://10.0.0.5:30000"), ("gpu1.example", "http://gpu1.example:30000"),
    ("fe80::1", "http://[fe80::1]:30000"),
])
def test_local_url(listen, url):
    assert net.local_url(listen, 30000) == url
    assert net.local_url(listen, "30000") == url  # a port from a recorded argv is text


@pytest.mark.parametrize("listen, port, url", [
    ("0.0.0.0", 30000, "http://127.0.0.1:30000"), ("::", "8080", "http://[::1]:8080"),
    ("gpu1", None, ""), ("gpu1", "80a", ""), (None, "x", ""),   # a port that is no number: no URL, no traceback
])
def test_local_url_or_empty(listen, port, url):
    # the views publish "" for a setting their own checks refuse, instead of failing the whole build
    assert net.local_url_or_empty(listen, port) == url


@pytest.mark.parametrize("host, local", [
    ("127.0.0.1", True), ("localhost", True), ("LocalHost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", True), ("::", True), ("[::]", True), ("", True),  # a wildcard in a URL connects to this machine
    ("192.168.1.1", False), ("10.0.0.5", False), ("gpu1.example", False), ("::2", False), ("0.0.0.1", False),
])
def test_on_this_host(host, local):
    # one list: the loopback and wildcard spellings above; server_ready checks the port's owner only for these
    assert net.on_this_host(host) is local


def test_host_port_brackets_ipv6_once():
    assert net.host_port("::1", 9) == "[::1]:9"
    assert net.host_port("[::1]", 9) == "[::1]:9"
    assert net.host_port("10.1.2.3", 9) == "10.1.2.3:9"


def _asyncio_listener(host):
    """A listener made the way uvicorn (SGLang's HTTP server) makes one: asyncio's create_server."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box = {}

    async def handle(reader, writer):
        await reader.read(1024)
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    async def start():
        box["server"] = await asyncio.start_server(handle, host, 0)
        box["port"] = box["server"].sockets[0].getsockname()[1]
        ready.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    ready.wait(10)
    return loop, box


@pytest.mark.parametrize("listen", ["0.0.0.0", "::", "127.0.0.1", "::1"])
def test_the_url_reaches_a_real_listener(listen):
    if ":" in listen and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    loop, box = _asyncio_listener(listen)
    try:
        with urllib.request.urlopen(net.local_url(listen, box["port"]) + "/", timeout=5) as resp:
            assert resp.read() == b"ok"
    finally:
        loop.call_soon_threadsafe(box["server"].close)
        loop.call_soon_threadsafe(loop.stop)


def test_listening_sockets_sees_a_real_listener_and_only_listeners():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    try:
        assert net.listening_sockets(port) == {}   # bound, not listening
        s.listen(1)
        found = net.listening_sockets(port)
        assert len(found) == 1 and list(found.values()) == [__import__("os").getuid()]
    finally:
        s.close()
    assert net.listening_sockets(port) == {}


def test_listening_sockets_unreadable_proc(tmp_path):
    assert net.listening_sockets(30000, proc_root=str(tmp_path)) is None


@pytest.mark.parametrize("address, parts", [
    ("0.0.0.0:9090", ("0.0.0.0", 9090)), ("[::]:9090", ("::", 9090)), (":9090", ("", 9090)),
    ("10.0.0.5:9090", ("10.0.0.5", 9090)), ("[fd00::5]:9090", ("fd00::5", 9090)),
])
def test_split_listen_address(address, parts):
    assert net.split_listen_address(address) == parts


@pytest.mark.parametrize("bad", ["9090x", "host", "host:", "[::1]"])
def test_split_listen_address_needs_a_port(bad):
    with pytest.raises(ValueError, match="not HOST:PORT"):
        net.split_listen_address(bad)
