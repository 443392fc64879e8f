# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/sglang/registry.py: the architectures an installed SGLang serves, read from its source without
importing it, checked against every supported real wheel (each model module parsed by Python's ast as the
reference), and the refusal of an architecture it lacks, with the Transformers and remote-code fallbacks."""
import ast
import json
import os
import subprocess
import sys
import zipfile

import pytest
import testpaths
from localrun import local_run

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import registry  # noqa: E402

MODELS = "sglang/srt/models/"


def _ast_entries(source):
    """The reference: what SGLang's registry would register, from the module's syntax tree."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EntryClass" for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            names.extend(v.id if isinstance(v, ast.Name) else v.attr for v in values)
    return names


@pytest.fixture(scope="module", params=W.SUPPORTED)
def wheel_models(request, tmp_path_factory):
    dest = str(tmp_path_factory.mktemp("sglang-%s" % request.param))
    with zipfile.ZipFile(W.wheel_path(request.param)) as whl:
        members = [n for n in whl.namelist() if n.startswith(MODELS) and n.endswith(".py")]
        whl.extractall(dest, members)
    return request.param, os.path.join(dest, MODELS)


def test_every_declaration_of_every_supported_version_is_read_as_python_reads_it(wheel_models):
    version, models = wheel_models
    checked = 0
    for name in sorted(n for n in os.listdir(models) if n.endswith(".py")):  # SGLang skips subpackages
        with open(os.path.join(models, name), "rb") as f:
            source = f.read().decode("utf-8-sig")
        want = _ast_entries(source)
        assert registry.entry_classes(source) == want, (version, name)
        checked += bool(want)
    found = registry.supported_architectures(models)
    assert checked > 150 and len(found) > 170, (version, checked, len(found))
    for arch in ("LlamaForCausalLM", "LlamaForCausalLMEagle3", "DeepseekV3ForCausalLM", "Qwen3ForCausalLM"):
        assert arch in found, (version, arch)


def test_disabled_modules_are_left_out(wheel_models):
    models = wheel_models[1]
    assert "LlamaForCausalLMEagle3" not in registry.supported_architectures(models, disabled=["llama_eagle3"])


@pytest.mark.parametrize("source, names", [
    ("EntryClass = LlamaForCausalLM\n", ["LlamaForCausalLM"]),
    ("EntryClass = [A, B]\n", ["A", "B"]),
    ("EntryClass = [\n    A,  # the dense one\n    B,\n]\n", ["A", "B"]),
    ("class X:\n    EntryClass = Nope\n", []),
    ("__all__ = [\n    'EntryClass',\n]\n", []),
])
def test_declaration_forms(source, names):
    assert registry.entry_classes(source) == names


@pytest.fixture(scope="module")
def supported():
    with zipfile.ZipFile(W.wheel_path("0.5.15.post1")) as whl:
        return set(arch for n in whl.namelist() if n.startswith(MODELS) and n.endswith(".py")
                   for arch in registry.entry_classes(whl.read(n).decode("utf-8-sig")))


def test_a_registered_architecture_passes(supported):
    assert registry.servable_problems({"architectures": ["LlamaForCausalLM"]}, supported, transformers_models="/x") == []


def test_an_unknown_architecture_is_refused_naming_the_nearest(supported, tmp_path):
    (problem,) = registry.servable_problems({"architectures": ["LlamaForCausalLMM"], "model_type": "llama"},
                                            supported, transformers_models=str(tmp_path))
    assert "['LlamaForCausalLMM']" in problem and "the nearest it supports: LlamaForCausalLM" in problem


def test_the_transformers_fallback_is_let_pass(supported, tmp_path):
    # SGLang serves an architecture it lacks through transformers' class of that name (model_impl auto)
    d = tmp_path / "newmodel"
    d.mkdir()
    (d / "modeling_newmodel.py").write_text("class NewModelForCausalLM(PreTrainedModel):\n    pass\n")
    cfg = {"architectures": ["NewModelForCausalLM"], "model_type": "newmodel"}
    assert registry.servable_problems(cfg, supported, transformers_models=str(tmp_path)) == []
    cfg["model_type"] = "other"
    assert registry.servable_problems(cfg, supported, transformers_models=str(tmp_path))


def test_remote_code_needs_trust_and_its_files(supported, tmp_path):
    cfg = {"architectures": ["MyModel"],
           "auto_map": {"AutoConfig": "configuration_my.MyConfig", "AutoModel": "modeling_my.MyModel"}}
    (problem,) = registry.servable_problems(cfg, supported, str(tmp_path), transformers_models=str(tmp_path))
    assert "trust-remote-code" in problem
    (problem,) = registry.servable_problems(cfg, supported, str(tmp_path), trust_remote_code=True,
                                            transformers_models=str(tmp_path))
    assert "configuration_my.py, modeling_my.py" in problem
    (tmp_path / "configuration_my.py").write_text("")
    (tmp_path / "modeling_my.py").write_text("")
    assert registry.servable_problems(cfg, supported, str(tmp_path), trust_remote_code=True,
                                      transformers_models=str(tmp_path)) == []


def test_the_packages_are_found_without_being_imported(tmp_path):
    # an __init__ that fails on import: finding the package must not run it
    pkg = tmp_path / "site" / "sglang"
    (pkg / "srt" / "models").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise SystemExit('imported')\n")
    tf = tmp_path / "site" / "transformers" / "models"
    tf.mkdir(parents=True)
    (tf.parent / "__init__.py").write_text("raise SystemExit('imported')\n")
    models, transformers, error = registry.find_models_dirs(sys.executable, {"PYTHONPATH": str(tmp_path / "site")},
                                                            run=local_run)
    assert error is None and models == str(pkg / "srt" / "models") and transformers == str(tf)
    out = subprocess.run([sys.executable, "-c", registry.FIND_SOURCE], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(tmp_path / "site"))).stdout
    assert json.loads(out)["sglang"] == [str(pkg)]
