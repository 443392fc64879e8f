# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45 in the preflight: config.json's dtype and the argv's context-length, judged in the server's Python by
what is installed there. The installed SGLang is the double (its get_context_length and envs are SGLang's, held to
every verified wheel below); torch is a stand-in with dtypes (this venv has none; the lead's GPU run has the real
one). Each refusal next to its good twin."""
import json
import os
import re
import sys

import pytest

import testpaths
from localrun import local_run

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.server import preflight as pf  # noqa: E402

DOUBLE = os.path.join(testpaths.REPO, "tools", "sglang_double")
TORCH = "class dtype(object):\n    pass\n\nbfloat16 = float16 = float32 = dtype()\nTensor = object\n__version__ = '2.11.0'\n"


def env(tmp_path, **extra):
    stand_in = tmp_path / "torch_stand_in"
    (stand_in / "torch").mkdir(parents=True, exist_ok=True)
    (stand_in / "torch" / "__init__.py").write_text(TORCH)
    out = {"PYTHONPATH": "%s:%s" % (DOUBLE, stand_in), "SGLANG_DOUBLE_VERSION": "0.5.15.post1"}
    out.update(extra)
    return out


def limits(tmp_path, config, argv=(), **extra):
    check, version, model = pf.parse_and_limits(sys.executable, ["--model-path", "/m"] + list(argv), config,
                                                env(tmp_path, **extra), run=local_run)
    assert check["ok"] and version == "0.5.15.post1", check
    return pf.check_limits(model, None, [])


@pytest.mark.parametrize("key", ["torch_dtype", "dtype"])
def test_a_dtype_torch_lacks_is_refused_its_good_twin_and_auto_pass(tmp_path, key):
    assert limits(tmp_path, {key: "bfloat16"})["ok"]
    assert limits(tmp_path, {key: "auto"})["ok"]
    bad = limits(tmp_path, {key: "bfloat17"})
    assert not bad["ok"] and bad["msg"].startswith("config.json %s: 'bfloat17' is not a dtype of the installed torch "
                                                   "2.11.0" % key)
    assert "set it to one torch has (bfloat16, float16, float32) or auto" in bad["msg"]
    assert not limits(tmp_path, {key: "Tensor"})["ok"]  # an attribute of torch that is no dtype


def test_a_context_length_above_the_models_is_refused_naming_both_numbers_and_both_fixes(tmp_path):
    config = {"max_position_embeddings": 4096}
    assert limits(tmp_path, config, ["--context-length", "4096"])["ok"]
    bad = limits(tmp_path, config, ["--context-length", "4097"])
    assert not bad["ok"] and bad["msg"] == (
        "server_args context-length 4097 is above the 4096 SGLang 0.5.15.post1 derives from config.json "
        "(max_position_embeddings) (SGLang would stop at start with a ValueError): lower context-length to 4096 or "
        "less, or set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 in server_env when the model really takes longer "
        "inputs (RoPE scaling)")
    assert limits(tmp_path, config, ["--context-length", "1000000"], SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN="1")["ok"]
    # SGLang's own rule: RoPE scaling's factor counts, llama3's does not
    assert limits(tmp_path, dict(config, rope_scaling={"factor": 4.0}), ["--context-length", "16384"])["ok"]
    assert not limits(tmp_path, dict(config, rope_scaling={"factor": 4.0, "rope_type": "llama3"}),
                      ["--context-length", "16384"])["ok"]


def test_a_multimodal_config_is_noted_not_judged(tmp_path):
    warnings = []
    check, _v, model = pf.parse_and_limits(sys.executable, ["--model-path", "/m", "--context-length", "99999999"],
                                           {"text_config": {"max_position_embeddings": 8}}, env(tmp_path),
                                           run=local_run)
    assert pf.check_limits(model, None, warnings)["ok"] and "sub-config (multimodal)" in warnings[0]


def test_run_all_reads_config_json_through_the_untrusted_reader(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"")
    params = {"python": sys.executable, "argv": ["--model-path", str(model)], "model_path": str(model),
              "env": env(tmp_path), "gpu_count": 1, "tp": 1}
    (model / "config.json").write_text(json.dumps({"torch_dtype": "bfloat17"}))
    checks = dict((c["name"], c) for c in pf.run_all(params, local_run)[0])
    assert not checks["model_limits"]["ok"] and "bfloat17" in checks["model_limits"]["msg"]
    (model / "config.json").write_text("not json")
    checks = dict((c["name"], c) for c in pf.run_all(params, local_run)[0])
    assert checks["model_limits"] == {"name": "model_limits", "ok": False,
                                      "msg": "model_path config.json: not JSON (Expecting value: line 1 column 1 "
                                             "(char 0)): replace it with the publisher's file"}
    (model / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    checks = dict((c["name"], c) for c in pf.run_all(params, local_run)[0])
    assert checks["model_limits"]["ok"]


@pytest.mark.parametrize("version", W.SUPPORTED)
def test_the_rule_the_script_asks_is_where_each_wheel_has_it(version):
    """PARSE_SCRIPT imports get_context_length from the first of its two homes that has it, and the env switch
    from srt/environ.py; the double's copy is the wheels' function."""
    src = W.read_member(version, "sglang/srt/environ.py")
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN = EnvBool(False)" in src
    homes = {"sglang/srt/utils/hf_transformers/common.py", "sglang/srt/utils/hf_transformers_utils.py"}
    bodies = []
    for home in homes:
        try:
            text = W.read_member(version, home)
        except KeyError:
            continue
        m = re.search(r"\ndef get_context_length\(config\):\n(.*?)\n    return 2048\n", text, re.S)
        if m:
            bodies.append(m.group(1))
    assert len(bodies) == 1, version
    with open(os.path.join(DOUBLE, "sglang", "srt", "utils", "hf_transformers_utils.py")) as f:
        double = f.read()
    for line in bodies[0].splitlines():
        line = line.strip()
        if line and not line.startswith(("#", '"""')) and "text_config" not in line:
            assert line in double, (version, line)
