# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""install/plan.py's install request and pip commands: what roles/sglang runs, decided in Python."""
from ansible_collections.llmserve.sglang.plugins.module_utils.install import plan as ip

BASE = {
    "version": "0.5.23", "venv": "/opt/sglang/venvs/0.5.23", "venv_link": "/opt/sglang/venv", "python": "",
    "reuse_torch": False, "wheelhouse": "", "wheelhouse_dest": "/opt/sglang/wheelhouse", "wheelhouse_on_host": "",
    "exact": False, "pip_index_url": "", "pip_extra_index_urls": [], "pip_trusted_hosts": [],
    "torch_index_url": "https://download.pytorch.org/whl/cu130", "kernel_index_url": "", "ca_bundle": "",
    "proxy": "", "no_proxy": "", "flashinfer_extra": "cu13", "flashinfer_prebuilt_packages": [], "extra_packages": [],
    "install_dependencies": True, "force_reinstall": False, "ptxas_path": "/usr/local/cuda/bin/ptxas",
    "server_env_extra": {}, "default_cuda_home": "/usr/local/cuda",
}
# sglang 0.5.23's Requires-Dist as classify() groups it
REQUIRES = {"torch_install": ["torch==2.9.1", "torchaudio==2.9.1", "torchvision"], "kernel": ["sglang-kernel==0.4.4"],
            "flashinfer": ["flashinfer_python==0.6.12", "flashinfer_cubin==0.6.12"], "wheels": []}
PY = "/usr/bin/python3.12"


def s(**kw):
    return dict(BASE, **kw)


def test_sources_online_offline():
    assert ip.sources(s()) == []
    assert ip.sources(s(pip_index_url="https://pypi.example/simple", pip_extra_index_urls=["https://x/simple"],
                        pip_trusted_hosts=["x"])) == ["--index-url", "https://pypi.example/simple",
                                                      "--extra-index-url=https://x/simple", "--trusted-host=x"]
    assert ip.sources(s(wheelhouse="files/wheels", pip_index_url="ignored")) == \
        ["--no-index", "--find-links", "/opt/sglang/wheelhouse"]
    assert ip.sources(s(wheelhouse_on_host="/opt/wheels")) == ["--no-index", "--find-links", "/opt/wheels"]


def test_pip_env():
    assert ip.pip_env(s()) == {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    env = ip.pip_env(s(ca_bundle="/etc/ca.pem", proxy="http://p:3128", no_proxy="localhost"))
    assert env["PIP_CERT"] == env["SSL_CERT_FILE"] == env["REQUESTS_CA_BUNDLE"] == "/etc/ca.pem"
    assert env["https_proxy"] == env["HTTP_PROXY"] == "http://p:3128" and env["no_proxy"] == "localhost"


def test_reinstall_follows_the_record():
    first = ip.request(s(), PY, None, [], [])
    assert first["reinstall"] and first["sglang_argv"] == [
        "/opt/sglang/venvs/0.5.23/bin/python", "-m", "pip", "install", "--no-deps", "sglang==0.5.23"]
    again = ip.request(s(), PY, first["spec"], [], [])
    assert not again["reinstall"]                                           # the same install: nothing to do
    assert ip.request(s(), "/usr/bin/python3.11", first["spec"], [], [])["reinstall"]   # another interpreter
    forced = ip.request(s(force_reinstall=True), PY, first["spec"], [], [])
    assert forced["reinstall"] and "--force-reinstall" in forced["sglang_argv"]


def test_an_exact_install_changes_with_the_wheelhouse_files():
    settings = s(wheelhouse_on_host="/w", exact=True)
    one = ip.request(settings, PY, None, ["/w/sglang-0.5.23-py3-none-any.whl"], [])
    assert one["spec"]["wheels"] == ["sglang-0.5.23-py3-none-any.whl"]
    assert ip.request(settings, PY, one["spec"], ["/w/sglang-0.5.23-py3-none-any.whl", "/w/torch-2.9.1-x.whl"],
                      [])["reinstall"]
    assert ip.request(s(), PY, None, ["/w/a.whl"], [])["spec"]["wheels"] == []  # not exact: files do not count


def test_server_env_path_cuda_and_sm120():
    env = ip.server_env(s(), ["9.0"])
    assert env == {"PATH": "/opt/sglang/venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                           "/usr/bin:/sbin:/bin", "CUDA_HOME": "/usr/local/cuda"}
    env = ip.server_env(s(reuse_torch=True, python="/opt/torch/.venv/bin/python3",
                          server_env_extra={"CUDA_HOME": "/usr/local/cuda-13.0", "X": "1"}), ["12.0"])
    assert env["PATH"].startswith("/opt/sglang/venv/bin:/opt/torch/.venv/bin:/usr/local/cuda-13.0/bin:")
    assert env["SGLANG_ENABLE_JIT_DEEPGEMM"] == "0" and env["TRITON_PTXAS_PATH"] == "/usr/local/cuda/bin/ptxas"
    assert env["X"] == "1" and env["CUDA_HOME"] == "/usr/local/cuda-13.0"


def test_pip_commands_online():
    pip = ip.pip_argv(s(kernel_index_url="https://kernels/simple", flashinfer_prebuilt_packages=["flashinfer-jit-cache"]),
                      REQUIRES)
    head = ["/opt/sglang/venvs/0.5.23/bin/python", "-m", "pip", "install"]
    assert pip["torch"] == head + ["--index-url", "https://download.pytorch.org/whl/cu130"] + REQUIRES["torch_install"]
    assert pip["exact"] == []
    assert pip["rest"] == head + ["--extra-index-url", "https://kernels/simple", "sglang==0.5.23",
                                  "sglang-kernel==0.4.4", "flashinfer_python[cu13]==0.6.12", "flashinfer_cubin==0.6.12",
                                  "flashinfer-jit-cache"]


def test_pip_commands_offline_reused_torch_and_exact():
    pip = ip.pip_argv(s(wheelhouse_on_host="/w", install_dependencies=False, flashinfer_extra=""),
                      dict(REQUIRES, torch_install=[]))
    assert pip["torch"] == []                                         # torch reused: nothing to install
    assert pip["rest"][4:8] == ["--no-deps", "--no-index", "--find-links", "/w"]
    assert "flashinfer_python==0.6.12" in pip["rest"]                 # no extra asked for
    pip = ip.pip_argv(s(wheelhouse_on_host="/w", exact=True, force_reinstall=True),
                      dict(REQUIRES, torch_install=[], wheels=["/w/a.whl", "/w/sglang-0.5.23-py3-none-any.whl"]))
    assert pip["exact"][4:] == ["--no-index", "--no-deps", "--force-reinstall", "/w/a.whl",
                                "/w/sglang-0.5.23-py3-none-any.whl"]
    assert pip["rest"] == []
