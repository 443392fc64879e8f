# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transfers into <dest>.partial, resumed after an interruption, verified and published - over real HTTP
(Python's http.server, with and without Range support) and real directory copies."""
import functools
import http.server
import os
import shutil
import tarfile
import threading
import time

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models import stage
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_tree
from tinymodels import tiny

SHARD = "model-00002-of-00004.safetensors"


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """http.server plus single-range GETs, as nginx or an object store answer them; counts bytes sent per path."""
    sent = None

    def log_message(self, *args):
        pass

    def send_head(self):
        spec = self.headers.get("Range")
        path = self.translate_path(self.path)
        if not spec or not os.path.isfile(path):
            return super().send_head()
        start = int(spec.split("=")[1].split("-")[0])
        size = os.path.getsize(path)
        f = open(path, "rb")
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        return f

    def copyfile(self, source, outputfile):
        # Counted before sending: the client may finish reading before this thread runs on after the last byte.
        if type(self).sent is not None:
            left = os.fstat(source.fileno()).st_size - source.tell()
            type(self).sent[self.path] = type(self).sent.get(self.path, 0) + left
        super().copyfile(source, outputfile)


@pytest.fixture
def served(tmp_path):
    root = tiny.write_target(str(tmp_path / "srv" / "kimi"), shards=4, shard_mib=1)
    mf.write(root, mf.build(root, {"kind": "dir"}, "rev1"))
    servers = []

    def serve(handler):
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                functools.partial(handler, directory=str(tmp_path / "srv")))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return "http://127.0.0.1:%d" % httpd.server_address[1]
    yield root, serve
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def _stage(model, tmp_path):
    files, total, revision = stage.expected(model)
    partial = stage.partial_of(model["dest"])
    stage.fetch_and_verify(model, partial, files, revision)(lambda *a, **k: None)
    stage.publish(partial, model["dest"])
    return files, total, revision


def test_http_tree_resumes_with_range(served, tmp_path):
    root, serve = served

    class Counting(RangeHandler):
        sent = {}
    base = serve(Counting)
    dest = str(tmp_path / "m" / "kimi")
    model = {"name": "k", "kind": "http", "url": base + "/kimi", "dest": dest}
    files, total, revision = stage.expected(model)
    assert revision == "rev1" and total == mf.total_size(mf.load(root))
    # an interrupted transfer left half a shard behind
    partial = stage.partial_of(dest)
    os.makedirs(partial)
    with open(os.path.join(root, SHARD), "rb") as f:
        half = f.read(os.path.getsize(os.path.join(root, SHARD)) // 2)
    with open(os.path.join(partial, SHARD), "wb") as f:
        f.write(half)
    stage.fetch_and_verify(model, partial, files, revision)(lambda *a, **k: None)
    shard_size = os.path.getsize(os.path.join(root, SHARD))
    assert Counting.sent["/kimi/" + SHARD] == shard_size - len(half)
    assert sum(v for k, v in Counting.sent.items() if not k.endswith(mf.MANIFEST_NAME)) == total - len(half)
    stage.publish(partial, dest)
    check = verify_tree(dest, "full")
    assert check["ok"] and check["method"] == "manifest-full" and check["revision"] == "rev1"
    assert not os.path.exists(partial)


def test_server_without_range_starts_the_file_over(served, tmp_path):
    root, serve = served
    base = serve(http.server.SimpleHTTPRequestHandler)
    dest = str(tmp_path / "m" / "kimi")
    partial = stage.partial_of(dest)
    os.makedirs(partial)
    with open(os.path.join(partial, SHARD), "wb") as f:
        f.write(b"\x01" * 1000)
    _stage({"name": "k", "kind": "http", "url": base + "/kimi", "dest": dest}, tmp_path)
    assert verify_tree(dest, "full")["ok"]


def test_corrupt_source_file_named_and_removed_for_the_next_run(served, tmp_path):
    root, serve = served
    base = serve(RangeHandler)
    with open(os.path.join(root, SHARD), "r+b") as f:
        f.seek(100000)
        f.write(b"\xee" * 8)
    dest = str(tmp_path / "m" / "kimi")
    with pytest.raises(stage.StageError) as e:
        _stage({"name": "k", "kind": "http", "url": base + "/kimi", "dest": dest}, tmp_path)
    assert ("%s: sha256 " % SHARD) in str(e.value) and "corrupt" in str(e.value)
    assert not os.path.exists(os.path.join(stage.partial_of(dest), SHARD)) and not os.path.exists(dest)


def test_tarball_with_one_top_directory(served, tmp_path):
    root, serve = served
    with tarfile.open(str(tmp_path / "srv" / "kimi.tar.gz"), "w:gz") as tar:
        tar.add(root, arcname="kimi")
    base = serve(RangeHandler)
    dest = str(tmp_path / "m" / "kimi")
    files, total = _stage({"name": "k", "kind": "http", "url": base + "/kimi.tar.gz", "dest": dest}, tmp_path)[:2]
    assert files is None and total == os.path.getsize(str(tmp_path / "srv" / "kimi.tar.gz"))
    assert stage.space_needed({"kind": "http", "url": base + "/kimi.tar.gz"}, total) == 2 * total
    assert sorted(os.listdir(dest)) == sorted(os.listdir(root))
    assert verify_tree(dest, "full")["ok"]


def test_tarball_leaving_the_tree_refused(tmp_path, served):
    serve = served[1]
    evil = tmp_path / "srv" / "evil.tar"
    (tmp_path / "x").write_text("x")
    with tarfile.open(str(evil), "w") as tar:
        tar.add(str(tmp_path / "x"), arcname="../escape")
    base = serve(RangeHandler)
    with pytest.raises(stage.StageError, match=r"member \.\./escape leaves the tree"):
        _stage({"name": "k", "kind": "http", "url": base + "/evil.tar", "dest": str(tmp_path / "m")}, tmp_path)
    assert not (tmp_path / "escape").exists()


def test_dir_copy_resumes_and_incomplete_source_refused(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=4)
    dest = str(tmp_path / "m")
    partial = stage.partial_of(dest)
    os.makedirs(partial)
    shutil.copyfile(os.path.join(src, SHARD), os.path.join(partial, SHARD))
    with open(os.path.join(partial, SHARD), "r+b") as f:
        f.truncate(5000)
    _stage({"name": "k", "kind": "dir", "path": src, "dest": dest}, tmp_path)
    assert verify_tree(dest, "full")["ok"]
    # a source that is itself missing a shard is caught by the structure check, nothing published
    os.remove(os.path.join(src, "model-00003-of-00004.safetensors"))
    dest2 = str(tmp_path / "m2")
    with pytest.raises(stage.StageError, match="model-00003-of-00004.safetensors: missing"):
        _stage({"name": "k", "kind": "dir", "path": src, "dest": dest2}, tmp_path)
    assert not os.path.exists(dest2)


def test_worker_reports_through_its_status_file(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    model = {"name": "k", "kind": "dir", "path": src, "dest": str(tmp_path / "m"), "role": "target"}
    files, _total, revision = stage.expected(model)
    partial = stage.partial_of(model["dest"])
    stage.start_worker(stage.fetch_and_verify(model, partial, files, revision), partial)
    for _attempt in range(200):
        status = stage.read_status(partial)
        if status["state"] in ("done", "failed"):
            break
        time.sleep(0.05)
    assert status["state"] == "done", status
    assert mf.load(partial)["files"]
    stage.publish(partial, model["dest"])
    assert verify_tree(model["dest"])["ok"]


def _tree(path, files):
    os.makedirs(path)
    for name, text in files.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(text)


def test_publish_replaces_an_old_tree_only_at_the_end(tmp_path):
    dest, partial = str(tmp_path / "m"), str(tmp_path / "m.partial")
    _tree(dest, {"old": "old", mf.MANIFEST_NAME: "{}"})
    _tree(partial, {"new": "new", mf.MANIFEST_NAME: "{}"})
    stage.publish(partial, dest)
    assert sorted(os.listdir(dest)) == sorted(["new", mf.MANIFEST_NAME]) and not os.path.exists(dest + ".old")


def test_missing_source_dir_named(tmp_path):
    with pytest.raises(stage.StageError, match="the source directory /nonexistent/x does not exist or is not mounted"):
        stage.expected({"name": "k", "kind": "dir", "path": "/nonexistent/x", "dest": str(tmp_path)})
