# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The double's start-up lines held to real SGLang (issue 37): per version to the wheels' own format strings, and
for 0.5.15.post1 line by line to the real H200 capture (docs/evidence/real-sglang-h200/run1/base/server.log), in
order, numbers and names masked. Real SGLang is the referee: when this fails, the double changes.

Four places differed before: the weight loader's bar (multi-threaded from 0.5.10), ``Load weight end`` (``dtype=``
only up to 0.5.9), ``KV Cache is allocated`` (``dtype:`` from 0.5.15), the ``Tree cache initialized`` line (from
0.5.15), and the order of server_args= (the parser's, model_path first, not sorted)."""
import testpaths
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from netutil import free_port  # noqa: E402

DOUBLE = os.path.join(testpaths.REPO, "tools", "sglang_double")
REAL_LOG = os.path.join(testpaths.REPO, "docs", "evidence", "real-sglang-h200", "run1", "base", "server.log")
REAL_VERSION = "0.5.15.post1"
# The flags the real base server ran with (run1/base/result.json), as test_double_vs_real.py starts it.
REAL_ARGS = ["--attention-backend", "triton", "--sampling-backend", "pytorch", "--grammar-backend", "none",
             "--disable-cuda-graph", "--enable-metrics", "--log-level", "info", "--mem-fraction-static", "0.3"]
# The start-up lines compared, by the words they begin with (after the log prefix).
KINDS = [("server_args", r"server_args="), ("dist_begin", r"Init torch distributed begin\."),
         ("dist_end", r"Init torch distributed ends\."), ("load_begin", r"Load weight begin\."),
         ("shards", r"(?:Multi-thread loading shards|Loading safetensors checkpoint shards):"),
         ("load_end", r"Load weight end\."), ("kv", r"KV Cache is allocated\."), ("pool", r"Memory pool end\."),
         ("tokens", r"max_total_num_tokens="), ("tree", r"Tree cache initialized:")]
PREFIX = re.compile(r"^\[[0-9-]+ [0-9:]+(?: [A-Z]+[0-9]+)*\] ")


def shape(line):
    """A line with what varies between runs and hosts masked: numbers, the model's type, the server_args values."""
    if line.startswith("server_args="):
        return "server_args=ServerArgs(%s=..." % re.match(r"server_args=ServerArgs\((\w+)=", line).group(1)
    line = re.sub(r"type=\w+", "type=T", line)
    line = re.sub(r"\[[0-9:<?]+, *[0-9.?]+(?:it/s|s/it)\]", "[TIMES]", line)
    line = re.sub(r"\d+(?:\.\d+)?", "N", line)
    # the pool's two f-strings, both in each wheel: K and V apart (MHA: the real capture's Llama) or one MLA size
    # (the double's DeepseekV3); the model decides, not the version
    return line.replace("K size: N GB, V size: N GB", "KV size: N GB")


def startup(text):
    """[(kind, shape)] in the order the log first prints each kind (a bar counts once)."""
    out, seen = [], set()
    for raw in text.replace("\r", "\n").splitlines():
        line = PREFIX.sub("", raw.strip())
        for kind, pattern in KINDS:
            if kind not in seen and re.match(pattern, line):
                seen.add(kind)
                out.append((kind, shape(line)))
    return out


@pytest.fixture(scope="module")
def double_log(tmp_path_factory):
    """The double's log of a start like the real base server's, until it is ready."""
    log = tmp_path_factory.mktemp("double") / "server.log"
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_PACE="0.05", SGLANG_DOUBLE_VERSION=REAL_VERSION,
               SGLANG_DOUBLE_SCENARIO="ready", SGLANG_DOUBLE_SHARDS="1")
    with open(str(log), "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "sglang.launch_server", "--model-path", "/models/llama-tiny",
                                 "--host", "127.0.0.1", "--port", str(free_port())] + REAL_ARGS,
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            for _tick in range(600):
                if b"Tree cache initialized" in log.read_bytes() or proc.poll() is not None:
                    break
                try:
                    proc.wait(0.1)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return log.read_text(errors="replace")


def test_the_doubles_startup_lines_are_the_real_captures(double_log):
    with open(REAL_LOG, errors="replace") as handle:
        real = startup(handle.read())
    assert [k for k, _s in real] == [k for k, _pattern in KINDS]  # the capture holds every kind compared
    assert startup(double_log) == real


def test_shape_masks_what_varies_and_keeps_the_words():
    assert shape("Load weight end. elapsed=0.08 s, type=LlamaForCausalLM, avail mem=124.75 GB, mem usage=0.02 GB.") \
        == "Load weight end. elapsed=N s, type=T, avail mem=N GB, mem usage=N GB."
    assert shape("Load weight end. elapsed=0.08 s, type=X, dtype=torch.bfloat16, avail mem=1 GB") != shape(
        "Load weight end. elapsed=0.08 s, type=X, avail mem=1 GB")
    assert shape("server_args=ServerArgs(model_path='/m', tp_size=1)") == "server_args=ServerArgs(model_path=..."


def double_texts(version):
    code = ("import json; from sglang._double import texts; print(json.dumps({'load_end': texts.load_weight_end(1.0), "
            "'kv': texts.kv_cache_line(), 'tree': texts.tree_cache_line(), 'bar': texts.weights_bar_desc()}))")
    env = dict(os.environ, PYTHONPATH=DOUBLE, SGLANG_DOUBLE_VERSION=version)
    out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    return json.loads(out)


def wheel_sources(version):
    with zipfile.ZipFile(W.wheel_path(version)) as z:
        return dict((n, z.read(n).decode("utf-8", "replace")) for n in z.namelist()
                    if n.startswith("sglang/srt/") and n.endswith(".py"))


def fstring_regex(template):
    """An f-string's text -> a regex its output matches ({...} fields become any text)."""
    parts = re.split(r"\{[^}]*\}", template)
    return "^" + ".+?".join(re.escape(p) for p in parts) + "$"


@pytest.mark.parametrize("version", W.SUPPORTED)
def test_each_start_up_line_is_one_the_versions_wheel_writes(version):
    src, texts = wheel_sources(version), double_texts(version)
    # Load weight end: the wheel's f-string pieces, dtype= in it or not
    runner = src["sglang/srt/model_executor/model_runner.py"]
    assert ('f"dtype={self.dtype}, "' in runner) == ("dtype=" in texts["load_end"]), texts["load_end"]
    # KV Cache is allocated: the MLA pool's f-string, or no such line in this version
    kv = [m.group(1) for s in src.values() for m in re.finditer(r'f"(KV Cache is allocated\. [^"]*KV size: [^"]*)"', s)]
    if texts["kv"] is None:
        assert kv == []
    else:
        assert any(re.match(fstring_regex(t), texts["kv"]) for t in kv), (kv, texts["kv"])
    # Tree cache initialized: registry.py's %-format, or none before 0.5.15
    registry = src.get("sglang/srt/mem_cache/registry.py", "")
    m = re.search(r'"(Tree cache initialized: [^"]*)"\s*"([^"]*)"', registry)
    if texts["tree"] is None:
        assert m is None
    else:
        pattern = "^" + re.escape(m.group(1) + m.group(2)).replace("%s", ".+?") + "$"
        assert re.match(pattern, texts["tree"]), (pattern, texts["tree"])
    # the shard bar: multi-threaded loading is on unless the wheel defaults it off
    loader = src["sglang/srt/model_loader/loader.py"]
    multithread = 'extra_config.get("enable_multithread_load", True)' in loader
    assert texts["bar"] == ("Multi-thread loading shards" if multithread else "Loading safetensors checkpoint shards")
    assert 'desc="%s"' % texts["bar"] in src["sglang/srt/model_loader/weight_utils.py"]
