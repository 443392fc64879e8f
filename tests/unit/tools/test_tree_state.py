# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The molecule models scenario's tree-state check (extensions/molecule/models/files/tree_state.py) on a tree made
here: the positive control (a same-size edit of a small file, its mtime put back, is caught), what it leaves out on
purpose (the skipped paths, the refused model's own entries, an edit past the first MiB of a large file whose size
and mtime are put back), and the listing of a symlink."""
import testpaths
import os
import sys

sys.path.insert(0, os.path.join(testpaths.REPO, "extensions", "molecule", "models", "files"))
import tree_state  # noqa: E402


def same_size_edit(path, offset=0):
    """Change one byte in place and put the mtime back: only a content hash can see it."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(b"A" if byte != b"A" else b"B")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def tree(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "scratch").mkdir()
    (root / "etc" / "small.conf").write_bytes(b"x" * 100)
    (root / "etc" / "edge.bin").write_bytes(b"e" * tree_state.HASHED)
    (root / "big.bin").write_bytes(b"w" * (tree_state.HASHED + 10))
    (root / "scratch" / "tmpfile").write_text("t")
    os.symlink("/etc/shadow", str(root / "link"))
    return root


def state(root, extra=()):
    return tree_state.listing([str(root / e) for e in extra], root=str(root), skip_default=[str(root / "scratch")])


def test_a_same_size_same_mtime_edit_of_a_small_file_is_caught(tmp_path):
    root = tree(tmp_path)
    before = state(root)
    assert state(root) == before  # the control: nothing changed, nothing seen
    same_size_edit(str(root / "etc" / "small.conf"), 50)
    assert state(root) != before


def test_the_whole_content_of_a_file_at_the_hashed_size_is_hashed(tmp_path):
    root = tree(tmp_path)
    before = state(root)
    same_size_edit(str(root / "etc" / "edge.bin"), tree_state.HASHED - 1)
    assert state(root) != before


def test_past_the_first_mib_only_size_and_mtime_hold_a_large_file(tmp_path):
    root = tree(tmp_path)
    before = state(root)
    same_size_edit(str(root / "big.bin"), tree_state.HASHED)  # the byte just past what is hashed: not seen
    assert state(root) == before
    same_size_edit(str(root / "big.bin"), tree_state.HASHED - 1)  # the last hashed byte: seen
    assert state(root) != before
    with open(str(root / "big.bin"), "ab") as f:  # any write that moves the size or mtime is seen
        f.write(b"!")
    assert state(root) != before


def test_skipped_paths_and_the_refused_models_entries_are_left_out(tmp_path):
    root = tree(tmp_path)
    before = state(root, ["etc/small.conf"])
    (root / "scratch" / "tmpfile").write_text("changed")
    (root / "scratch" / "new").write_text("n")
    (root / "etc" / "small.conf").write_text("grown and changed")  # given after argv[1]: its own entry, left out
    assert state(root, ["etc/small.conf"]) == before
    (root / "etc" / "new.conf").write_text("n")  # its parent's mtime is not listed, but the new file is
    after = state(root, ["etc/small.conf"])
    assert after != before and any(line.startswith(str(root / "etc" / "new.conf") + "\t") for line in after)


def test_a_symlink_is_listed_with_its_target_never_followed(tmp_path):
    root = tree(tmp_path)
    lines = [line for line in state(root) if line.startswith(str(root / "link") + "\t")]
    assert len(lines) == 1 and lines[0].endswith("\t-> /etc/shadow")


def test_main_writes_the_listing_and_prints_its_digest(tmp_path, capsys, monkeypatch):
    root = tree(tmp_path)
    lines = state(root)
    monkeypatch.setattr(tree_state, "listing", lambda extra: lines)
    out = tmp_path / "state.txt"
    tree_state.main(str(out), [])
    digest, count = capsys.readouterr().out.split()
    assert int(count) == len(lines) and out.read_text().count("\n") == int(count) and len(digest) == 64


def test_flip_twice_is_the_file_as_it_was_and_once_is_seen(tmp_path):
    root = tree(tmp_path)
    path = str(root / "etc" / "small.conf")
    before, content = state(root), open(path, "rb").read()
    tree_state.flip(path)
    assert state(root) != before and open(path, "rb").read() == b"y" + b"x" * 99
    tree_state.flip(path)
    assert state(root) == before and open(path, "rb").read() == content
