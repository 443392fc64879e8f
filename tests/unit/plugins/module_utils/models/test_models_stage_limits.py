# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/models' smaller rules (issue 33): sizes named in the size refusals, the per-file deadline of directory
copies and tarball members, patterns that keep nothing named, same-origin redirects followed with the token."""
import functools
import os
import time

import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import stage
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import base as sources_base
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import url as sources_url
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import copy as sources_copy
from tinymodels import tiny

from netutil import serve  # pylint: disable=import-error
from test_models_safety import Quiet  # pylint: disable=import-error


@pytest.fixture
def server():
    """serve(handler, root): a loopback file server of ``root`` with ``handler``; its URL."""
    servers = []

    def start(handler, root):
        srv = serve(functools.partial(handler, directory=str(root)))
        servers.append(srv)
        return "http://127.0.0.1:%d" % srv.server_address[1]
    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("promised, found, needle", [
    (699, 700, "expected 699 bytes, found at least 700 (longer than its manifest says); refused"),
    (701, 700, "expected 701 bytes, found 700: the server ended it early"),
])
def test_a_size_mismatch_names_the_expected_and_found_sizes(tmp_path, server, promised, found, needle):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "w.safetensors").write_bytes(b"x" * found)
    base = server(Quiet, tmp_path / "srv")
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    with pytest.raises(stage.StageError) as e:
        sources_url.fetch_url(base + "/w.safetensors", partial, "w.safetensors", promised, None)
    assert needle in str(e.value) and "w.safetensors" in str(e.value)


def test_the_promised_size_exactly_passes(tmp_path, server):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "w.safetensors").write_bytes(b"x" * 700)
    base = server(Quiet, tmp_path / "srv")
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    size, _mtime, _digest = sources_url.fetch_url(base + "/w.safetensors", partial, "w.safetensors", 700, None)
    assert size == 700


def test_a_directory_copy_has_a_per_file_deadline(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    model = {"name": "k", "kind": "dir", "path": src, "dest": str(tmp_path / "m" / "k")}
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    limits = sources_base.Limits(file_deadline=60)
    limits.file_deadline = 0.0
    limits.file_end = lambda: time.time() - 1  # the file's deadline already passed when it starts
    with pytest.raises(stage.StageError) as e:
        sources_copy._copy_resume(model, src, os.path.realpath(src), "model-00001-of-00002.safetensors", partial,
                                  limits)
    assert "model-00001-of-00002.safetensors: not done after" in str(e.value) and "models_file_timeout" in str(e.value)
    # within its deadline the same copy passes
    sources_copy._copy_resume(model, src, os.path.realpath(src), "model-00001-of-00002.safetensors", partial,
                              sources_base.Limits())


def test_deadlines_are_on_by_default():
    limits = sources_base.Limits()
    assert limits.file_deadline == sources_base.FILE_DEADLINE == 7200
    assert limits.model_deadline == sources_base.MODEL_DEADLINE
    assert limits.check("x", time.time() + 1) is None
    with pytest.raises(stage.StageError, match="x: not done after 7200 s"):
        limits.check("x", time.time() - 0.001)


@pytest.mark.parametrize("allow, ignore, refused", [
    (["*.bin"], None, True), (None, ["*"], True), (["*.json"], None, False), (["*.bin", "config.json"], None, False),
])
def test_patterns_that_keep_nothing_are_named(tmp_path, allow, ignore, refused):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    model = {"name": "k", "kind": "dir", "path": src, "dest": str(tmp_path / "m" / "k"), "allow_patterns": allow,
             "ignore_patterns": ignore}
    if refused:
        with pytest.raises(stage.StageError) as e:
            stage.expected(model)
        msg = str(e.value)
        assert msg.startswith("%s: allow_patterns %s and ignore_patterns %s keep none of the" % (
            src, '["*.bin"]' if allow else "[]", '["*"]' if ignore else "[]")) and "config.json" in msg
    else:
        files, _total, _rev = stage.expected(model)
        assert files


def test_the_token_follows_a_redirect_within_its_origin(tmp_path, server):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "file").write_text("payload")

    class Moved(Quiet):
        seen = []

        def send_head(self):
            if self.path == "/old":
                type(self).seen.append((self.path, self.headers.get("Authorization")))
                self.send_response(301)
                self.send_header("Location", "http://127.0.0.1:%d/file" % self.server.server_address[1])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            return super().send_head()
    base = server(Moved, tmp_path / "srv")
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    sources_url.fetch_url(base + "/old", partial, "file", None, "hf_SECRET")
    assert open(os.path.join(partial, "file")).read() == "payload"
    assert Moved.seen == [("/old", "Bearer hf_SECRET"), ("/file", "Bearer hf_SECRET")]


def test_world_writable_entries_are_counted_without_following_links(tmp_path):
    root = tmp_path / "m"
    root.mkdir()
    (root / "a").write_text("x")
    assert contain.world_writable(str(root)) == (0, [])
    os.chmod(str(root / "a"), 0o646)
    os.symlink("/tmp", str(root / "link"))  # /tmp is 1777: a link is not the weights
    assert contain.world_writable(str(root)) == (1, ["a"])
    os.chmod(str(root / "a"), 0o644)
    os.chmod(str(root), 0o757)
    assert contain.world_writable(str(root)) == (1, ["."])
