# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad model settings are refused, every problem named, before anything is fetched."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.models.plan import (
    PlanError, fanout, selected, space_refusal, validate)

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
    (_hub(dest="models/kimi"), "dest 'models/kimi' is a relative path; give an absolute one"),
    (_hub(revision="main"), "revision 'main' is not a commit sha (40 hex digits) and models_require_pinned is set"),
    (_hub(repo=None), "kind hub needs repo"),
    (_hub(role="verifier"), "role 'verifier' is not one of target, draft, tokenizer"),
    (_hub(dest="/"), "dest / would replace the root directory"),
    (_hub(colour="red"), "unknown keys ['colour']"),
    ({"name": "x", "kind": "http", "url": "ftp://a/b", "dest": "/m"}, "url 'ftp://a/b' is not http:// or https://"),
    ({"name": "x", "kind": "dir", "path": "rel/dir", "dest": "/m"}, "path 'rel/dir' is a relative path"),
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
