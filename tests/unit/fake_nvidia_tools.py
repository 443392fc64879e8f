# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fake GPU tools of tools/fake_nvidia/ (nvidia-smi, dmesg, lspci, nvcc) for the unit tests: run as executables, or
their main()s in this process, without a Python start per call (a gpu_health collect() makes about seven calls, and
mutation testing runs those tests for every mutant of nvidia/health.py). tests/unit/tools/test_fake_nvidia_in_process.py
holds the two equal, byte for byte."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import subprocess

import testpaths

FAKE = os.path.join(testpaths.REPO, "tools", "fake_nvidia")


def _load_tool(name):
    loader = importlib.machinery.SourceFileLoader("fake_tool_" + name.replace("-", "_"), os.path.join(FAKE, name))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


# The fake tools' main()s, loaded once.
TOOLS = dict((name, _load_tool(name)) for name in ("nvidia-smi", "dmesg", "lspci", "nvcc"))


def in_process(argv, env):
    """(rc, stdout, stderr) of the fake tool argv[0] names, run in this process under env: what the executable gives
    Any other tool runs as it is."""
    tool = TOOLS.get(os.path.basename(argv[0]))
    if tool is None:
        return executable(argv, env)
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = tool.main() if argv[0].endswith("dmesg") else tool.main(argv[1:])
            except SystemExit as exc:
                rc = exc.code
            if rc is not None and not isinstance(rc, int):
                err.write("%s\n" % rc)
                rc = 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return rc or 0, out.getvalue(), err.getvalue()


def executable(argv, env):
    proc = subprocess.run(argv, env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def fake_host(profile, faults="", runner=in_process, **env):
    env = dict(env, FAKE_NVIDIA_PROFILE=profile, FAKE_NVIDIA_FAULTS=faults)

    def run(argv):
        return runner(argv, env)

    tools = {"nvidia-smi": os.path.join(FAKE, "nvidia-smi"), "dmesg": os.path.join(FAKE, "dmesg"),
             "lspci": os.path.join(FAKE, "lspci")}
    return run, tools.get
