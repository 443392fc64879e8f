# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 25: roles/models runs as root, so every hostile input is made here on the spot - manifests, tarballs,
source trees, pre-existing dests, redirects, trickling servers, orphaned workers - and the test checks that it is
refused, named, and that nothing outside the tree the role owns was written, read into the tree or deleted."""
import functools
import hashlib
import http.server
import io
import json
import os
import socket
import stat
import subprocess
import sys
import tarfile
import threading
import time

import pytest
from localrun import shown  # pylint: disable=import-error

from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import manifest as mf
from ansible_collections.llmserve.sglang.plugins.module_utils.models import stage
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import base as sources_base
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import hub as sources_hub
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import url as sources_url
from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock as locks
from tinymodels import tiny


def NOOP(*_args, **_kwargs):
    """A worker's report that goes nowhere."""


class Quiet(http.server.SimpleHTTPRequestHandler):
    seen = None  # [(path, Authorization header)] of every request, per subclass

    def log_message(self, *args):
        pass

    def send_head(self):
        if type(self).seen is not None:
            type(self).seen.append((self.path, self.headers.get("Authorization")))
        return super().send_head()


@pytest.fixture
def server(tmp_path):
    servers = []

    def serve(handler, root):
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return "http://127.0.0.1:%d" % httpd.server_address[1]
    yield serve
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def _hostile_tree(tmp_path, entries):
    """An artifact-server tree whose manifest lists ``entries`` (each with the payload's size and sha256)."""
    root = tmp_path / "srv" / "evil"
    root.mkdir(parents=True)
    payload = b"PAYLOAD" * 100
    (root / "payload").write_bytes(payload)
    manifest = {"version": 1, "files": [{"path": e, "size": len(payload),
                                         "sha256": hashlib.sha256(payload).hexdigest()} for e in entries]}
    (root / mf.MANIFEST_NAME).write_text(json.dumps(manifest))
    return root


# --- 1. the containment rule -------------------------------------------------------------------------------

@pytest.mark.parametrize("rel, why", [
    ("../x", "not a normalised path"), ("a/../../x", "not a normalised path"), ("/etc/passwd", "is absolute"),
    ("a//b", "not a normalised path"), ("./a", "not a normalised path"), ("a/.", "not a normalised path"),
    ("", "is not a path"), ("a\\..\\b", "backslash"), ("a\nb", "control character"), ("a\x00b", "control"),
    ("x" * 256, "longer than a file system allows"),
])
def test_check_rel_refuses_every_way_out(rel, why):
    with pytest.raises(contain.Refused) as e:
        contain.check_rel(rel)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_name_that_is_also_a_directory_refused():
    with pytest.raises(contain.Refused, match="entry a is both a file and the directory of a/b"):
        contain.check_names(["a", "a/b", "c"])
    assert contain.check_names(["b/c", "a"]) == ["a", "b/c"]


def test_open_in_never_follows_a_symlink_placed_in_the_tree(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "victim").write_text("precious")
    (root / "sub").symlink_to(outside)
    (root / "leaf").symlink_to(outside / "victim")
    for rel in ("sub/victim", "sub/new", "leaf"):
        with pytest.raises(contain.Refused, match="symlink"):
            os.close(contain.open_in(str(root), rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
    with pytest.raises(contain.Refused):
        contain.remove_in(str(root), "sub/victim")
    assert (outside / "victim").read_text() == "precious" and not (outside / "new").exists()
    # the link itself may be removed (it is inside the tree); its target is untouched
    assert contain.remove_in(str(root), "leaf") and (outside / "victim").read_text() == "precious"


@pytest.mark.parametrize("entries, named", [
    (["../../escape"], "../../escape"),
    (["ok", "/ABS/victim"], "/ABS/victim"),
    (["a/./b"], "a/./b"),
    (["config.json", "config.json/x"], "config.json is both a file and the directory"),
    ([mf.MANIFEST_NAME], "is a name the role keeps for itself"),
])
def test_hostile_http_manifest_refuses_the_model_before_a_byte_is_written(tmp_path, server, entries, named):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    entries = [e.replace("/ABS/victim", str(victim)) for e in entries]
    named = named.replace("/ABS/victim", str(victim))
    _hostile_tree(tmp_path, entries)

    class Seen(Quiet):
        seen = []
    base = server(Seen, tmp_path / "srv")
    dest = str(tmp_path / "m" / "k")
    model = {"name": "k", "kind": "http", "url": base + "/evil", "dest": dest}
    with pytest.raises(stage.StageError) as e:
        stage.expected(model)
    assert named in str(e.value) and "the whole model is refused, nothing was written" in str(e.value)
    assert victim.read_text() == "precious" and not (tmp_path / "escape").exists()
    assert not os.path.exists(stage.partial_of(dest))
    assert [p for p, _a in Seen.seen] == ["/evil/" + mf.MANIFEST_NAME]  # only the manifest was asked for
    # the worker's own check refuses them too, should it ever be handed such a list
    files = dict((n, {"size": 700, "sha256": None}) for n in entries)
    with pytest.raises(stage.StageError, match="refused"):
        stage.fetch(model, stage.partial_of(dest), files)
    assert victim.read_text() == "precious"


def test_a_mismatch_clean_up_removes_only_inside_partial(tmp_path, server):
    """A corrupt file is removed by its checked name; a symlink the partial tree somehow holds is not followed."""
    root = tiny.write_target(str(tmp_path / "srv" / "k"), shards=2)
    mf.write(root, mf.build(root, {"kind": "dir"}))
    promised = mf.load(root)
    promised["files"][0]["sha256"] = "0" * 64
    mf.write(root, promised)
    base = server(Quiet, tmp_path / "srv")
    dest = str(tmp_path / "m" / "k")
    model = {"name": "k", "kind": "http", "url": base + "/k", "dest": dest}
    files, _total, revision = stage.expected(model)
    bad = promised["files"][0]["path"]
    with pytest.raises(stage.StageError, match="%s: sha256 .* corrupt" % bad):
        stage.fetch_and_verify(model, stage.partial_of(dest), files, revision)(NOOP)
    assert not os.path.exists(os.path.join(stage.partial_of(dest), bad))
    assert os.path.exists(os.path.join(root, bad))


def test_a_dir_source_manifest_naming_outside_files_is_refused(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret")
    os.symlink(str(secret), os.path.join(src, "innocent.json"))
    entries = [{"path": p, "size": os.path.getsize(os.path.join(src, p)), "sha256": None}
               for p in os.listdir(src)]
    with open(os.path.join(src, mf.MANIFEST_NAME), "w") as f:
        json.dump({"version": 1, "files": entries}, f)
    with pytest.raises(stage.StageError, match="innocent.json is a symlink that leaves the source tree"):
        stage.expected({"name": "k", "kind": "dir", "path": src, "dest": str(tmp_path / "m" / "k")})


def test_an_index_naming_a_shard_outside_the_tree_is_refused(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    index_path = os.path.join(src, "model.safetensors.index.json")
    with open(index_path) as f:
        index = json.load(f)
    first = sorted(index["weight_map"])[0]
    index["weight_map"][first] = "../../../etc/passwd"
    with open(index_path, "w") as f:
        json.dump(index, f)
    dest = str(tmp_path / "m" / "k")
    model = {"name": "k", "kind": "dir", "path": src, "dest": dest, "role": "target"}
    files, _t, rev = stage.expected(model)
    with pytest.raises(stage.StageError, match=r"model.safetensors.index.json shard ../../../etc/passwd is not a "
                                               r"normalised path inside the tree"):
        stage.fetch_and_verify(model, stage.partial_of(dest), files, rev)(NOOP)
    assert not os.path.exists(os.path.join(stage.partial_of(dest), mf.MANIFEST_NAME))


# --- tarballs ------------------------------------------------------------------------------------------------

def _tar(path, members):
    with tarfile.open(str(path), "w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


def _member(name, kind=tarfile.REGTYPE, data=b"x", linkname=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, (data if kind == tarfile.REGTYPE else None)


@pytest.mark.parametrize("member, named", [
    (_member("/abs/x"), "member /abs/x leaves the tree"),
    (_member("k/../../x"), "member k/../../x leaves the tree"),
    (_member("k/link", tarfile.SYMTYPE, linkname="/etc/shadow"), "member k/link is a link, device or fifo"),
    (_member("k/hard", tarfile.LNKTYPE, linkname="etc/shadow"), "member k/hard is a link, device or fifo"),
    (_member("k/dev", tarfile.CHRTYPE), "member k/dev is a link, device or fifo"),
    (_member("k/fifo", tarfile.FIFOTYPE), "member k/fifo is a link, device or fifo"),
    (_member("k/a\nb"), "member k/a\\x0ab leaves the tree"),
])
def test_hostile_tarball_refused_before_extraction(tmp_path, server, member, named):
    srv = tmp_path / "srv"
    srv.mkdir()
    _tar(srv / "evil.tar", [_member("k/config.json", data=b"{}"), member])
    base = server(Quiet, srv)
    dest = str(tmp_path / "m" / "k")
    model = {"name": "k", "kind": "http", "url": base + "/evil.tar", "dest": dest}
    with pytest.raises(stage.StageError) as e:
        stage.fetch_and_verify(model, stage.partial_of(dest), None, None)(NOOP)
    assert named in str(e.value), str(e.value)
    # nothing unpacked: only the archive itself sits inside the partial tree
    assert os.listdir(stage.partial_of(dest)) == [sources_base.ARCHIVE_NAME]
    assert not (tmp_path / "x").exists()


def test_tarball_with_a_member_twice_refused(tmp_path, server):
    srv = tmp_path / "srv"
    srv.mkdir()
    _tar(srv / "dup.tar", [_member("config.json", data=b"{}"), _member("config.json", data=b"{1}")])
    base = server(Quiet, srv)
    dest = str(tmp_path / "m" / "k")
    with pytest.raises(stage.StageError, match="member config.json is in the tarball twice"):
        stage.fetch_and_verify({"name": "k", "kind": "http", "url": base + "/dup.tar", "dest": dest},
                               stage.partial_of(dest), None, None)(NOOP)


# --- 3. dir sources: symlinks ----------------------------------------------------------------------------------

def test_dir_source_symlink_leaving_the_tree_is_refused_and_never_copied(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret")
    os.symlink(str(secret), os.path.join(src, "extra.json"))
    dest = str(tmp_path / "m" / "k")
    with pytest.raises(stage.StageError) as e:
        stage.expected({"name": "k", "kind": "dir", "path": src, "dest": dest})
    assert "extra.json is a symlink that leaves the source tree (to %s)" % secret in str(e.value)
    assert not os.path.exists(stage.partial_of(dest))


@pytest.mark.parametrize("make, named", [
    (lambda src, tmp: os.symlink(str(tmp), os.path.join(src, "dirlink")), "dirlink is a symlink to a directory"),
    (lambda src, tmp: os.mkfifo(os.path.join(src, "pipe")), "pipe is not a plain file"),
    (lambda src, tmp: os.symlink("/nonexistent/x", os.path.join(src, "dangling")), "dangling is a symlink that "
                                                                                   "leaves the source tree"),
])
def test_dir_source_odd_entries_refused(tmp_path, make, named):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    make(src, tmp_path)
    with pytest.raises(stage.StageError, match=named):
        stage.expected({"name": "k", "kind": "dir", "path": src, "dest": str(tmp_path / "m" / "k")})


def test_dir_source_symlink_inside_the_tree_is_copied_as_a_plain_file_with_the_roles_modes(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    os.symlink("tokenizer.json", os.path.join(src, "tokenizer-copy.json"))
    os.chmod(os.path.join(src, "config.json"), 0o666)
    os.chmod(os.path.join(src, "tokenizer.json"), 0o4777)
    dest = str(tmp_path / "m" / "k")
    model = {"name": "k", "kind": "dir", "path": src, "dest": dest, "role": "target"}
    files, _t, rev = stage.expected(model)
    assert "tokenizer-copy.json" in files
    stage.fetch_and_verify(model, stage.partial_of(dest), files, rev)(NOOP)
    stage.publish(stage.partial_of(dest), dest)
    copy = os.path.join(dest, "tokenizer-copy.json")
    assert not os.path.islink(copy) and open(copy).read() == open(os.path.join(src, "tokenizer.json")).read()
    modes = set(stat.S_IMODE(os.lstat(os.path.join(dp, n)).st_mode) for dp, _d, ns in os.walk(dest) for n in ns)
    assert modes == {0o644} and stat.S_IMODE(os.stat(dest).st_mode) == 0o755


def test_a_staged_tree_holding_a_symlink_is_not_verified_through_it(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    mf.write(src, mf.build(src, {"kind": "dir"}))
    os.remove(os.path.join(src, "config.json"))
    os.symlink("/etc/hostname", os.path.join(src, "config.json"))
    problems, _hashed = mf.verify(src, mf.load(src), full=True)
    assert "config.json: not a plain file (a symlink or a device); stage it again" in problems
    with pytest.raises(contain.Refused, match="config.json"):
        mf.list_files(src)


# --- 2. dest ownership and publishing -------------------------------------------------------------------------

def test_a_foreign_directory_at_dest_is_refused_naming_the_setting(tmp_path):
    dest = tmp_path / "models" / "k"
    dest.mkdir(parents=True)
    (dest / "notes.txt").write_text("mine")
    owned, why = stage.ownership(str(dest))
    assert not owned and why == (
        "dest %s exists and was not staged by roles/models (no .llmserve-manifest.json at its top): the role would "
        "replace it and delete its files. Move it away, choose another dest, or set adopt: true on this model in "
        "models_list to let the role replace it" % dest)
    assert stage.ownership(str(dest), adopt=True) == (True, "adopted")
    (dest / "notes.txt").unlink()
    assert stage.ownership(str(dest)) == (True, "empty")
    (dest / mf.MANIFEST_NAME).write_text("{}")
    assert stage.ownership(str(dest)) == (True, "ours")
    link = tmp_path / "models" / "link"
    link.symlink_to(dest)
    assert "is a symlink" in stage.ownership(str(link))[1] and not stage.ownership(str(link))[0]
    (tmp_path / "models" / "file").write_text("x")
    assert "is not a directory" in stage.ownership(str(tmp_path / "models" / "file"))[1]


def _staged(path, marker):
    os.makedirs(path)
    with open(os.path.join(path, "w.safetensors"), "w") as f:
        f.write(marker)
    with open(os.path.join(path, mf.MANIFEST_NAME), "w") as f:
        f.write("{}")


def test_recover_rolls_a_publish_forward_or_back(tmp_path):
    dest = str(tmp_path / "m" / "k")
    old, partial = stage.old_of(dest), stage.partial_of(dest)
    # crashed after the old tree moved aside, the new one verified: the new one goes in
    _staged(old, "old")
    open(os.path.join(old, stage.RETIRED_NAME), "w").close()
    _staged(partial, "new")
    assert stage.recover(dest).startswith("finished an interrupted publish")
    assert open(os.path.join(dest, "w.safetensors")).read() == "new" and not os.path.exists(old)
    # crashed after the move aside, the new one not verified (the worker still had work): the old one comes back
    import shutil
    shutil.rmtree(dest)
    _staged(old, "old")
    open(os.path.join(old, stage.RETIRED_NAME), "w").close()
    os.makedirs(partial)
    stage.write_status(partial, {"state": "fetching"})
    assert stage.recover(dest).startswith("put back")
    assert open(os.path.join(dest, "w.safetensors")).read() == "old"
    assert not os.path.exists(os.path.join(dest, stage.RETIRED_NAME)) and not os.path.exists(old)
    # crashed after the new one went in: the retired tree is removed
    _staged(old, "old")
    open(os.path.join(old, stage.RETIRED_NAME), "w").close()
    assert stage.recover(dest).startswith("removed") and not os.path.exists(old)
    # a .old the role did not leave is never touched
    os.makedirs(old)
    open(os.path.join(old, "theirs"), "w").close()
    with pytest.raises(stage.StageError, match="was not left by roles/models"):
        stage.recover(dest)
    assert os.path.exists(os.path.join(old, "theirs"))


def test_publish_refuses_an_unverified_tree_and_leaves_dest(tmp_path):
    dest = str(tmp_path / "m" / "k")
    _staged(dest, "old")
    os.makedirs(stage.partial_of(dest))
    with pytest.raises(stage.StageError, match="is not a verified tree"):
        stage.publish(stage.partial_of(dest), dest)
    assert open(os.path.join(dest, "w.safetensors")).read() == "old"


# --- 4. HTTP: the token's origin, deadlines ---------------------------------------------------------------------

def test_the_token_never_follows_a_redirect_to_another_host(tmp_path, server):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "file").write_text("payload")

    class Elsewhere(Quiet):
        seen = []
    other = server(Elsewhere, tmp_path / "b")

    class Redirecting(Quiet):
        seen = []

        def send_head(self):
            type(self).seen.append((self.path, self.headers.get("Authorization")))
            target = other + "/file" if self.path == "/away" else "/away"
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
    here = server(Redirecting, tmp_path)
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    sources_url.fetch_url(here + "/start", partial, "file", None, "hf_SECRET")
    assert open(os.path.join(partial, "file")).read() == "payload"
    # same origin (a relative redirect): the token stays; the other host (another port) never sees it
    assert Redirecting.seen == [("/start", "Bearer hf_SECRET"), ("/away", "Bearer hf_SECRET")]
    assert Elsewhere.seen == [("/file", None)]


def test_origin_separates_scheme_host_and_port():
    assert sources_url.origin("https://Hub.example/a") == sources_url.origin("https://hub.example:443/b")
    assert sources_url.origin("https://hub.example/a") != sources_url.origin("http://hub.example/a")
    assert sources_url.origin("https://hub.example/a") != sources_url.origin("https://hub.example:8443/a")


class Slow(Quiet):
    """Sends a 1000-byte file: headers, then ``delay`` seconds between bytes (or one long silence)."""
    delay = 0.3
    silent = False

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        try:
            if type(self).silent:
                time.sleep(5)
            for _byte in range(1000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(type(self).delay)
        except (BrokenPipeError, ConnectionResetError):
            pass


def test_a_trickling_server_hits_the_files_deadline_named(tmp_path, server):
    base = server(Slow, tmp_path)
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    limits = sources_base.Limits(stall=5, file_deadline=1)
    with pytest.raises(stage.StageError) as e:
        sources_url.fetch_url(base + "/w.safetensors", partial, "w.safetensors", 1000, None, limits)
    assert str(e.value).startswith("%s/w.safetensors (file w.safetensors): not done after 1 s" % base)
    assert "models_file_timeout" in str(e.value)


def test_a_silent_server_stalls_named(tmp_path, server):
    class Silent(Slow):
        silent = True
    base = server(Silent, tmp_path)
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    with pytest.raises(stage.StageError) as e:
        sources_url.fetch_url(base + "/w.safetensors", partial, "w.safetensors", 1000, None,
                              sources_base.Limits(stall=1))
    assert "%s/w.safetensors (file w.safetensors): stalled, no byte for 1 s" % base in str(e.value)


def test_a_model_past_its_deadline_stops():
    limits = sources_base.Limits(model_deadline=1)
    limits.model_end = time.time() - 1
    with pytest.raises(stage.StageError, match="the model's deadline of 1 s passed while fetching x"):
        limits.check("x")


# --- 5. one run per dest; a worker without its controller stops ----------------------------------------------

def _holder(lock_path, token, watched):
    locks._replace(lock_path, {"host": socket.gethostname(), "pid": os.getpid(), "since": watched,
                               "watched": watched, "token": token})


def test_an_abandoned_worker_stops_without_publishing_and_frees_the_lock(tmp_path):
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    dest = str(tmp_path / "m" / "k")
    os.makedirs(os.path.dirname(dest))
    model = {"name": "k", "kind": "dir", "path": src, "dest": dest, "role": "target"}
    files, _t, rev = stage.expected(model)
    lock_path = stage.lock_of(dest)
    _holder(lock_path, "run1", time.time() - 100)  # its controller last watched 100 s ago
    limits = sources_base.Limits(lock_path=lock_path, token="run1", orphan_after=30)
    partial = stage.partial_of(dest)
    stage.start_worker(stage.fetch_and_verify(model, partial, files, rev, limits=limits), partial, lock_path, "run1")
    for _attempt in range(400):
        status = stage.read_status(partial)
        if status and status["state"] in ("done", "failed"):
            break
        time.sleep(0.05)
    assert status["state"] == "failed" and status["error"].startswith("abandoned: no run has watched this transfer")
    assert not os.path.exists(os.path.join(partial, mf.MANIFEST_NAME)) and not os.path.exists(dest)
    for _attempt in range(100):
        if locks.read(lock_path) is None:
            break
        time.sleep(0.05)
    assert locks.read(lock_path) is None


def test_a_worker_whose_lock_was_taken_over_stops(tmp_path):
    lock_path = str(tmp_path / "k.lock")
    _holder(lock_path, "run2", time.time())
    limits = sources_base.Limits(lock_path=lock_path, token="run1")
    with pytest.raises(stage.StageError, match=r"this run no longer holds .* \(taken over by"):
        limits.check()


# --- 6. the hf CLI's argv ----------------------------------------------------------------------------------------

def test_hub_argv_puts_the_repo_after_double_dash_and_the_token_only_in_the_environment(tmp_path):
    record = tmp_path / "argv.json"
    fake = tmp_path / "hf"
    fake.write_text("#!%s\nimport json, os, sys\njson.dump({'argv': sys.argv[1:], 'token': os.environ.get("
                    "'HF_TOKEN'), 'timeout': os.environ.get('HF_HUB_DOWNLOAD_TIMEOUT')}, open(%r, 'w'))\n"
                    % (sys.executable, str(record)))
    fake.chmod(0o755)
    partial = str(tmp_path / "p")
    os.makedirs(partial)
    model = {"name": "k", "kind": "hub", "repo": "org/model", "revision": "refs/pr/1", "dest": "/models/k",
             "allow_patterns": ["-rf", "*.json"]}
    sources_hub.fetch(model, partial, "hf_SECRET", str(fake), sources_base.Limits(stall=17))
    seen = json.loads(record.read_text())
    assert seen["argv"] == ["download", "--local-dir=" + partial, "--revision=refs/pr/1", "--include=-rf",
                            "--include=*.json", "--", "org/model"]
    assert seen["token"] == "hf_SECRET" and "hf_SECRET" not in json.dumps(seen["argv"]) and seen["timeout"] == "17"


def test_the_partial_tree_of_someone_else_is_not_adopted(tmp_path):
    partial = tmp_path / "k.partial"
    partial.mkdir()
    (partial / "data").write_text("theirs")
    assert not stage.owns_partial(str(partial))
    stage.write_status(str(partial), {"state": "fetching"})
    assert stage.owns_partial(str(partial))


def test_the_module_refuses_a_live_holder_and_takes_over_a_dead_one(tmp_path):
    import testpaths
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    dest = str(tmp_path / "m" / "k")
    os.makedirs(os.path.dirname(dest))
    model = {"name": "k", "kind": "dir", "path": src, "dest": dest}

    def run(args):
        env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
        proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", "model_stage.py")],
                              input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), capture_output=True, text=True,
                              env=env, check=False)
        return json.loads(proc.stdout)
    _holder(stage.lock_of(dest), "other", time.time())  # this test process: alive, watched now
    held = run({"model": model, "progress_interval": 30})
    assert held["failed"] and held["msg"].startswith("%s is being staged by another run: %s pid %d since"
                                                     % (dest, socket.gethostname(), os.getpid()))
    assert not os.path.exists(stage.partial_of(dest)) and locks.read(stage.lock_of(dest))["token"] == "other"
    dead = subprocess.Popen(["true"])
    dead.wait()
    locks._replace(stage.lock_of(dest), dict(locks.read(stage.lock_of(dest)), pid=dead.pid))
    took = run({"model": model, "progress_interval": 30})
    assert took.get("action") == "staged", took.get("msg")
    prefix = "took over the lock of %s from %s pid %d" % (dest, socket.gethostname(), dead.pid)
    assert took["took_over"].startswith(prefix)
    assert locks.read(stage.lock_of(dest)) is None  # released once published


def test_the_module_refuses_a_foreign_dest_and_a_token_over_plain_http(tmp_path):
    import testpaths
    src = tiny.write_target(str(tmp_path / "src"), shards=2)
    dest = tmp_path / "m" / "k"
    dest.mkdir(parents=True)
    (dest / "theirs.bin").write_text("keep me")

    def run(args):
        env = dict(os.environ, PYTHONPATH=os.path.join(testpaths.REPO, "collections"))
        proc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "plugins", "modules", "model_stage.py")],
                              input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), capture_output=True, text=True,
                              env=env, check=False)
        return json.loads(proc.stdout)
    model = {"name": "k", "kind": "dir", "path": src, "dest": str(dest)}
    for check in (False, True):
        res = run({"model": model, "_ansible_check_mode": check})
        assert res["failed"] and "set adopt: true on this model in models_list" in res["msg"]
    assert os.listdir(str(dest)) == ["theirs.bin"] and not os.path.exists(str(dest) + ".partial")
    assert not os.path.exists(str(dest) + ".lock")
    adopted = run({"model": dict(model, adopt=True), "progress_interval": 30})
    assert adopted.get("action") == "staged", adopted.get("msg")
    assert "theirs.bin" not in os.listdir(str(dest)) and not os.path.exists(str(dest) + ".old")
    plain = run({"model": {"name": "h", "kind": "http", "url": "http://127.0.0.1:9/x", "dest": str(tmp_path / "m/h")},
                 "token": "hf_SECRET"})
    assert plain["failed"] and "a token would travel in clear text to http://127.0.0.1:9/x" in plain["msg"]
    assert "hf_SECRET" not in json.dumps(shown(plain))


def test_a_transfer_tool_dies_with_its_worker(tmp_path):
    """The hf CLI or rsync started by a worker that is killed stops too: it cannot write under the next worker."""
    pid_file = tmp_path / "tool.pid"
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\necho $$ > %s\nexec sleep 600\n" % pid_file)
    tool.chmod(0o755)
    worker = os.fork()
    if worker == 0:
        try:
            sources_base.run_watched([str(tool)], "x", sources_base.Limits())
        finally:
            os._exit(0)
    for _attempt in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        time.sleep(0.05)
    tool_pid = int(pid_file.read_text())
    os.kill(worker, 9)
    os.waitpid(worker, 0)
    for _attempt in range(200):
        if not os.path.exists("/proc/%d" % tool_pid) or open("/proc/%d/stat" % tool_pid).read().split()[2] == "Z":
            break
        time.sleep(0.05)
    gone = not os.path.exists("/proc/%d" % tool_pid) or open("/proc/%d/stat" % tool_pid).read().split()[2] == "Z"
    if not gone:
        os.kill(tool_pid, 9)
    assert gone
