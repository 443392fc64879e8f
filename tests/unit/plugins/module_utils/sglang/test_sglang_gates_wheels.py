# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang/gates.py against the real wheels (tests/sglang_wheels): every start-up line a readiness stage waits for,
every gated flag and environment switch, every endpoint the collection calls is in the source of each supported
version - and a gate's feature is absent before its first version. A new SGLang release that renames one of them
fails here, naming the version and the text."""
import functools
import os
import re
import sys
import zipfile

import pytest

import testpaths
sys.path.insert(0, os.path.join(testpaths.REPO, "tests"))
import sglang_wheels as W  # noqa: E402

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates, stages  # noqa: E402
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import release  # noqa: E402

# The versions on either side of the 0.5.21 log rename, read as well so the gate's first version is exact.
BOUNDARY = ("0.5.20", "0.5.21")
VERSIONS = tuple(gates.VERIFIED_VERSIONS) + BOUNDARY

# Lines a stage pattern matches that uvicorn or tqdm print, not SGLang's own source.
EXTERNAL = ("Uvicorn running on ", "Application startup complete", "Started server process [",
            "Waiting for application startup")
# Lines SGLang prints through an f-string whose source does not hold the logged text: the forms the source has.
SOURCE_FORMS = {"server_args=ServerArgs(": ('f"{server_args=}"',),
                "server_args={": ('f"server_args={server_args.resolved_dict()}"', 'f"server_args={_server_args_for_logging(')}


def in_source(text, src):
    return any(f in src for f in SOURCE_FORMS.get(text, (text,)))


@functools.lru_cache(maxsize=None)
def source(version):
    """Every Python file of the wheel's sglang/srt, concatenated."""
    parts = []
    with zipfile.ZipFile(W.wheel_path(version)) as z:
        for name in z.namelist():
            if name.startswith("sglang/srt/") and name.endswith(".py"):
                parts.append(z.read(name).decode("utf-8", "replace"))
    return "\n".join(parts)


def http_server(version):
    return W.read_member(version, "sglang/srt/entrypoints/http_server.py")


@pytest.mark.parametrize("version", VERSIONS)
def test_each_versions_startup_lines_are_its_own(version):
    src = source(version)
    for name in gates.STARTUP_LINES:
        mine = gates.line_for(name, version)
        assert in_source(mine, src), "SGLang %s does not log %r (sglang/gates.STARTUP_LINES[%r])" % (version, mine, name)
        for other in gates.lines(name):
            if other != mine:
                assert not in_source(other, src), "SGLang %s still logs %r: the gate of %r is wrong" % (version, other, name)


def _literals(pattern):
    """The literal text each alternative of a stage regex starts with."""
    out = []
    for alt in pattern.split("|"):
        lit, i = "", 0
        while i < len(alt):
            c = alt[i]
            if c == "\\":
                if alt[i + 1] in "dwsDWSb":
                    break
                lit += alt[i + 1]
                i += 2
                continue
            if c in "[](){}*+?^$.":
                break
            lit += c
            i += 1
        out.append(lit)
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_every_readiness_stage_has_a_line_in_the_source(version):
    src = source(version)
    for stage, pattern in stages._STAGE_PATTERNS:
        lits = [x for x in _literals(pattern) if x]
        own = [x for x in lits if not any(x.startswith(e) or e.startswith(x) for e in EXTERNAL)]
        if not own:
            continue  # uvicorn's lines only
        assert any(in_source(x, src) for x in own), "SGLang %s logs none of %s for stage %s" % (version, own, stage)


@pytest.mark.parametrize("version", VERSIONS)
def test_gated_features_start_at_their_gate(version):
    src = source(version)
    routes = http_server(version)
    # (gate, evidence in the source)
    evidence = {
        "ready": re.search(r'@app\.get\("/ready"\)', routes) is not None,
        "adaptive": "--speculative-adaptive" in src,
        "pcie_ipc_allreduce": "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE" in src,
        "init_parallel_log": "Init parallel begin." in src,
        "server_args_dict": "server_args.resolved_dict()" in src or "_server_args_for_logging(" in src,
        # the health latch: one handler for both paths, the timeout knob and its default, the switch, the latch
        "health_latch": all(t in routes for t in (
            '@app.get("/health_generate")', 'os.getenv("%s", %d)' % (
                gates.HEALTH_CHECK_TIMEOUT_ENV, gates.HEALTH_CHECK_TIMEOUT_DEFAULT_S),
            gates.HEALTH_GENERATION_ENV, "ServerStatus.UnHealthy", gates.HEALTH_LATCH_LINE)),
    }
    if version in gates.VERIFIED:
        # the old decode-graph flag is gone (0.5.15.post1 still has it beside the new names). Between the verified
        # versions only: 0.5.20 and 0.5.21 already lack it, so the true first version is earlier than the gate,
        # which names the first one the renderer's tables were verified on.
        evidence["new_cli"] = '"--cuda-graph-max-bs"' not in W.read_member(version, "sglang/srt/server_args.py")
        # first seen in 0.5.15.post1 among the verified ones (the plan only recommends it before)
        evidence["weight_prefetch"] = "weight-loader-prefetch-checkpoints" in src or "weight_loader_prefetch_checkpoints" in src
    for gate, present in evidence.items():
        assert present == gates.has(gate, version), "%s in SGLang %s: source says %s, gates.py says %s" % (
            gate, version, present, gates.has(gate, version))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_endpoints_the_collection_calls_exist(version):
    routes = http_server(version)
    for path in ("/health", "/generate", "/v1/models", "/v1/chat/completions", "/metrics"):
        # /metrics is mounted (prometheus make_asgi_app) rather than routed on some versions
        assert '"%s"' % path in routes or (path == "/metrics" and "/metrics" in source(version)), (version, path)
    # the server facts: /server_info, or its older name /get_server_info (the client falls back)
    assert '"/server_info"' in routes or '"/get_server_info"' in routes


def test_versions_compare_on_their_release_except_ready():
    assert gates.has("new_cli", "0.5.23rc1") and not gates.has("ready", "0.5.20rc1")
    assert gates.has("adaptive", "0.5.15.post1") and not gates.has("adaptive", "0.5.10.post1")
    assert not gates.has("ready", "") and not gates.has("ready", "garbage")
    assert gates.first("new_cli") == release(gates.GATES["new_cli"])
    assert gates.python_min("0.5.23") == "3.11" and gates.python_min("9.9.9") == gates.PYTHON_MIN_DEFAULT


def test_roles_sglang_asks_the_table_for_its_python_floor():
    # no version table of the role's own: the floor comes through the _sglang_python_min filter (test_filter_endpoints
    # runs it through Ansible)
    import yaml
    with open(os.path.join(testpaths.REPO, "roles", "sglang", "vars", "main.yml")) as f:
        assert "__sglang_known_versions" not in yaml.safe_load(f)
    with open(os.path.join(testpaths.REPO, "roles", "sglang", "tasks", "python.yml")) as f:
        assert "sglang_version | llmserve.sglang._sglang_python_min" in f.read()
