# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad model settings are refused, every problem named, before anything is fetched."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models.plan import (
    PlanError, fanout, inline_tokens, selected, space_refusal, validate)

SHA = "0123456789abcdef0123456789abcdef01234567"


def _hub(**kw):
    model = {"name": "kimi", "kind": "hub", "repo": "moonshotai/Kimi-K2.5", "revision": SHA, "dest": "/models/kimi"}
    model.update(kw)
    return model


def test_good_list_normalised():
    (model,) = validate([_hub(dest="/models/kimi/")], require_pinned=True)
    assert model["dest"] == "/models/kimi" and model["role"] == "target"


@pytest.mark.parametrize("model, message", [
    (_hub(kind="s3"), "kind 's3' is not one of hub, dir, http, host"),
    (_hub(dest="models/kimi"), "dest models/kimi is a relative path; give an absolute one"),
    (_hub(revision="main"), "revision 'main' is not a commit sha (40 hex digits) and models_require_pinned is set"),
    (_hub(repo=None), "kind hub needs repo"),
    (_hub(role="verifier"), "role 'verifier' is not one of target, draft, tokenizer"),
    (_hub(dest="/"), "dest / is a system directory or holds one"),
    (_hub(colour="red"), "unknown keys ['colour']"),
    ({"name": "x", "kind": "http", "url": "ftp://a/b", "dest": "/m/x"},
     "url ftp://a/b is not an http:// or https:// URL with a host"),
    ({"name": "x", "kind": "dir", "path": "rel/dir", "dest": "/m/x"}, "path 'rel/dir' is a relative path"),
    (_hub(allow_patterns="*.json"), "allow_patterns must be a list of glob patterns"),
])
def test_refusals_name_the_problem(model, message):
    with pytest.raises(PlanError) as e:
        validate([model], require_pinned=True)
    assert message in str(e.value) and "nothing was fetched" in str(e.value)


def test_unpinned_revision_allowed_unless_required():
    assert validate([_hub(revision="main")], require_pinned=False)[0]["revision"] == "main"


def test_inline_token_refused_without_printing_it():
    with pytest.raises(PlanError) as e:
        validate([_hub(token="hf_SECRETSECRET")])
    assert "hf_SECRETSECRET" not in str(e.value) and "token_file" in str(e.value)


def test_every_problem_at_once_and_duplicates():
    with pytest.raises(PlanError) as e:
        validate([_hub(), _hub(kind="nope"), _hub(name="d", role="target")])
    text = str(e.value)
    assert "models[1] (kimi): kind 'nope'" in text
    assert "models[2] (d): dest /models/kimi is used by another model" in text
    assert "2 models have role target" in text


def test_patterns_follow_huggingface_hub():
    files = ["config.json", "model-1.safetensors", "original/consolidated.pth", "README.md"]
    assert selected(files, ["*.json", "*.safetensors"]) == ["config.json", "model-1.safetensors"]
    assert selected(files, None, ["original/*", "*.md"]) == ["config.json", "model-1.safetensors"]


def test_space_refusal_names_path_needed_and_free():
    assert space_refusal("/models/kimi", 100, 200) is None
    assert space_refusal("/models/kimi", 3 << 30, 1 << 30, present=(2 << 30) + 1) is None
    text = space_refusal("/models/kimi", 600 << 30, 100 << 30, present=50 << 30)
    assert text == ("not enough disk for the model at /models/kimi: needs 550.0 GiB more (600.0 GiB in all, "
                    "50.0 GiB already there), 100.0 GiB free; free space or choose another dest")


def test_fanout_copies_from_the_seed():
    model = validate([_hub()])[0]
    assert fanout(model, "gpu1", "gpu1", "10.0.0.1", True) is model
    assert fanout(model, "gpu2", "gpu1", "10.0.0.1", False) is model
    copy = fanout(model, "gpu2", "gpu1", "10.0.0.1", True)
    assert copy["kind"] == "host" and copy["from_host"] == "10.0.0.1" and copy["path"] == "/models/kimi"


def test_pinning_is_a_hub_rule():
    # an artifact URL or a path names one thing; only a Hub branch or tag moves under you
    model = {"name": "d", "kind": "http", "url": "http://a/d.tar.gz", "dest": "/m/d"}
    assert validate([model], require_pinned=True)[0]["url"] == "http://a/d.tar.gz"


# --- issue 25: what the role may own, and what a models_list string may hold ---------------------------------

@pytest.mark.parametrize("dest, why", [
    ("/etc", "is a system directory or holds one"),
    ("/usr", "is a system directory or holds one"),
    ("/var", "is a system directory or holds one"),
    ("/var/lib", "is a system directory or holds one"),
    ("/home", "is a system directory or holds one"),
    ("/home/alice", "is a home directory"),
    ("/etc/models/x", "is inside a system tree"),
    ("/usr/lib/x", "is inside a system tree"),
    ("/proc/1", "is inside a system tree"),
    ("/models", "is too shallow"),
    ("/data", "is too shallow"),
    ("/models/../etc", "has a .. component"),
    ("models/x", "is a relative path"),
])
def test_system_shallow_and_relative_dests_refused(dest, why):
    with pytest.raises(PlanError) as e:
        validate([_hub(dest=dest)])
    assert why in str(e.value), str(e.value)


def test_a_dest_reaching_a_system_directory_through_a_symlink_is_refused(tmp_path):
    (tmp_path / "models").symlink_to("/etc")
    with pytest.raises(PlanError, match=r"dest %s/models/x \(really /etc/x\) is inside a system tree" % tmp_path):
        validate([_hub(dest=str(tmp_path / "models" / "x"))])


@pytest.mark.parametrize("inner", ["/models/kimi/draft", "/models/kimi.partial", "/models/kimi.old/x",
                                   "/models/kimi.lock"])
def test_overlapping_dests_refused(inner):
    with pytest.raises(PlanError, match="dests /models/kimi and %s overlap" % inner):
        validate([_hub(), _hub(name="d", role="draft", dest=inner)])


def test_sibling_dests_with_a_common_prefix_are_not_overlapping():
    assert len(validate([_hub(dest="/models/kimi"), _hub(name="d", role="draft", dest="/models/kimi-draft")])) == 2


@pytest.mark.parametrize("path, dest", [("/srv/w", "/srv/w"), ("/srv/w", "/srv/w/staged"), ("/srv/w/x", "/srv/w")])
def test_a_dest_that_is_or_holds_or_sits_in_its_source_refused(path, dest):
    with pytest.raises(PlanError, match="the source path %s are the same tree or one holds the other" % path):
        validate([{"name": "k", "kind": "dir", "path": path, "dest": dest}])


@pytest.mark.parametrize("key, value", [("name", "k\nfatal: forged"), ("dest", "/models/k\x1b[31m"),
                                        ("repo", "a/b\r"), ("allow_patterns", ["*.json", "x\x00"]),
                                        ("revision", "main\x7f"), ("token_file", "/etc/t\u0085")])
def test_control_characters_refused_in_every_string(key, value):
    with pytest.raises(PlanError) as e:
        validate([_hub(**{key: value})])
    text = str(e.value)
    assert "control characters" in text and key in text
    # the refusal itself cannot forge an output line
    assert "\n" not in text.split("nothing was fetched:\n", 1)[1].strip() and "\x1b" not in text


@pytest.mark.parametrize("repo", ["--local-dir=/etc", "-x/y", "a/b/c", "a/../b", "a--b/c", "hf://models/a/b",
                                  "a/b.git", "/abs", "a b/c", ".a/b", "a/" + "x" * 100])
def test_repo_ids_outside_the_hub_grammar_refused(repo):
    with pytest.raises(PlanError, match="is not a Hub repo id"):
        validate([_hub(repo=repo)])


@pytest.mark.parametrize("repo", ["moonshotai/Kimi-K2.5", "gpt2", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
                                  "a_b/c.d-e"])
def test_real_repo_ids_accepted(repo):
    assert validate([_hub(repo=repo, revision="main")])[0]["repo"] == repo


@pytest.mark.parametrize("revision", ["--output=/x", "a..b", "/main", "main/", "refs//pr", "ma in", "x@{1}", ""])
def test_revisions_outside_the_ref_grammar_refused(revision):
    with pytest.raises(PlanError, match="is not a Hub revision"):
        validate([_hub(revision=revision)])


@pytest.mark.parametrize("revision", ["main", SHA, "refs/pr/12", "v1.0.2", "release-2026_12"])
def test_real_revisions_accepted(revision):
    assert validate([_hub(revision=revision)])[0]["revision"] == revision


@pytest.mark.parametrize("endpoint, why", [
    ("file:///etc", "is not an http:// or https:// URL"),
    ("http://169.254.169.254", "link-local"),
    ("http://[fe80::1]:8080", "link-local"),
    ("https://user:pw@hub.local", "carries credentials"),
    ("gopher://hub.local", "is not an http:// or https:// URL"),
])
def test_endpoints_http_only_and_not_link_local(endpoint, why):
    with pytest.raises(PlanError, match=why):
        validate([_hub(endpoint=endpoint)])


def test_host_kind_arguments_checked():
    model = {"name": "k", "kind": "host", "from_host": "-oProxyCommand=x", "path": "/models/k", "dest": "/models/k",
             "ssh_user": "root;id", "ssh_port": "22x"}
    with pytest.raises(PlanError) as e:
        validate([model])
    assert "from_host -oProxyCommand=x is not a host name" in str(e.value)
    assert "ssh_user root;id is not a user name" in str(e.value) and "ssh_port 22x is not a port" in str(e.value)


def test_adopt_must_be_a_boolean():
    with pytest.raises(PlanError, match="adopt must be true or false"):
        validate([_hub(adopt="yes")])
    assert validate([_hub(adopt=True)])[0]["adopt"] is True


def test_inline_tokens_are_every_token_written_in_the_list():
    models = [_hub(token="hf_ONE"), _hub(name="d"), _hub(name="e", token=""), _hub(name="f", token=12345),
              "not a model", None, _hub(name="g", token="hf_TWO")]
    assert inline_tokens(models) == ["hf_ONE", "12345", "hf_TWO"]
    assert inline_tokens([]) == [] and inline_tokens(None) == []


def test_inline_tokens_are_what_validate_refuses():
    with pytest.raises(PlanError) as e:
        validate([_hub(token="hf_ONE")])
    assert "token given inline" in str(e.value) and inline_tokens([_hub(token="hf_ONE")]) == ["hf_ONE"]
