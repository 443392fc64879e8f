# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""install.py puts the double into a real virtualenv as the package 'sglang' of a given version."""
import testpaths
import os
import subprocess
import sys

REPO = testpaths.REPO
INSTALL = os.path.join(REPO, "tools", "sglang_double", "install.py")


def test_install_into_venv_is_idempotent(tmp_path):
    venv = str(tmp_path / "venv")
    subprocess.check_call([sys.executable, "-m", "venv", "--without-pip", venv])
    py = os.path.join(venv, "bin", "python")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("SGLANG_DOUBLE_VERSION", None)
    first = subprocess.check_output([sys.executable, INSTALL, "--venv", venv, "--version", "0.5.9"], env=env)
    assert first.startswith(b"changed:")
    again = subprocess.check_output([sys.executable, INSTALL, "--venv", venv, "--version", "0.5.9"], env=env)
    assert again.startswith(b"unchanged:")
    probe = "import importlib.metadata as m, sglang; print(m.version('sglang'), sglang.__version__)"
    assert subprocess.check_output([py, "-c", probe], env=env, cwd=str(tmp_path)).split() == [b"0.5.9", b"0.5.9"]
    # switching versions replaces the dist-info
    subprocess.check_call([sys.executable, INSTALL, "--venv", venv, "--version", "0.5.23"], env=env)
    assert subprocess.check_output([py, "-c", probe], env=env, cwd=str(tmp_path)).split() == [b"0.5.23", b"0.5.23"]
    # the env override still wins over the installed version
    env2 = dict(env, SGLANG_DOUBLE_VERSION="0.5.10.post1")
    assert subprocess.check_output([py, "-c", "import sglang; print(sglang.__version__)"], env=env2,
                                   cwd=str(tmp_path)).strip() == b"0.5.10.post1"
    # <venv>/bin/python -m sglang.launch_server parses like the installed version
    p = subprocess.run([py, "-m", "sglang.launch_server", "--model-path", "m", "--cuda-graph-max-bs", "8"], env=env,
                       cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20, check=False)
    assert p.returncode == 2 and b"ambiguous option: --cuda-graph-max-bs" in p.stderr


def test_the_installed_double_answers_the_model_check_as_sglang_does(tmp_path):
    # issue 43: the model check asks the server's Python for SGLang's registry and Transformers' model types; real
    # SGLang comes with both, so does the double (a Transformers stand-in where the venv has none, a real one kept)
    sys.path.insert(0, os.path.join(REPO, "tests", "unit"))
    from localrun import local_run  # pylint: disable=import-outside-toplevel
    from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import registry  # pylint: disable=import-outside-toplevel
    venv = str(tmp_path / "venv")
    subprocess.check_call([sys.executable, "-m", "venv", "--without-pip", venv])
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    subprocess.check_output([sys.executable, INSTALL, "--venv", venv, "--version", "0.5.15.post1"], env=env)
    py = os.path.join(venv, "bin", "python")
    notes, unchecked = [], []
    found = registry.installed(py, {}, local_run, notes, unchecked)
    assert not unchecked and not notes and "llama" in found["model_types"] and "llamaX" not in found["model_types"]
    archs = registry.supported_architectures(found["models"])
    assert {"LlamaForCausalLM", "LlamaForCausalLMEagle3", "KimiK25ForConditionalGeneration"} <= set(archs)
    # a real Transformers in the venv is never replaced; the double's own is, and is put back when removed
    sp = registry.find_models_dirs(py, {}, run=local_run)[1].rsplit("/models", 1)[0]
    with open(os.path.join(sp, "__init__.py"), "w") as f:
        f.write("__version__ = 'real'\n")
    subprocess.check_output([sys.executable, INSTALL, "--venv", venv, "--version", "0.5.23"], env=env)
    with open(os.path.join(sp, "__init__.py")) as f:
        assert f.read() == "__version__ = 'real'\n"
