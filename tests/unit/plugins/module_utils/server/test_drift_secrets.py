# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift report's secret flags (issue 37): a secret that differs, is only configured or only running is no
drift and its value is never shown; a flag that only looks like one is compared as any other."""
import pytest

from ansible_collections.llmserve.sglang.plugins.module_utils.server import drift

BASE = ["--model-path", "/m", "--port", "30000"]


@pytest.mark.parametrize("flag", drift.SECRET_FLAGS)
def test_a_secret_flag_is_never_drift_and_never_shown(flag):
    for configured, running in ((BASE + [flag, "conf-secret"], BASE + [flag, "run-secret"]),
                                (BASE + [flag, "conf-secret"], BASE), (BASE, BASE + [flag + "=run-secret"])):
        d = drift.compare(configured, running)
        assert d == {"same": True, "changed": [], "missing": [], "extra": []}
        r = drift.report(configured, {"launch_command": " ".join(running)})
        assert "secret" not in r["msg"] and r["msg"].startswith("drift: none: runs what is configured (launch_command)")


def test_the_secret_flags_are_the_ones_sglang_redacts():
    assert drift.SECRET_FLAGS == ("--api-key", "--admin-api-key", "--watermark-config", "--watermark-key",
                                  "--watermark-key-b")


@pytest.mark.parametrize("flag", ["--api-key-file", "--watermark", "--api", "--admin-api-keys"])
def test_a_flag_that_only_looks_secret_is_compared(flag):
    d = drift.compare(BASE + [flag, "a"], BASE + [flag, "b"])
    assert d["changed"] == [{"flag": flag, "configured": "a", "running": "b"}] and not d["same"]
    assert drift.compare(BASE + [flag, "a"], BASE)["missing"] == [flag]
    assert drift.compare(BASE, BASE + [flag])["extra"] == [flag]


def test_shown_redacts_a_secret_and_names_a_bare_flag():
    assert drift._shown("--api-key", ("k",)) == "<redacted>"
    assert drift._shown("--enable-metrics", ()) == "(set)"
    assert drift._shown("--x", ("a", "b")) == "a b"


def test_a_changed_secret_beside_a_changed_flag_shows_only_the_flag():
    r = drift.report(BASE + ["--api-key", "one", "--tp-size", "8"],
                     {"launch_command": " ".join(BASE + ["--api-key", "two", "--tp-size", "4"])})
    assert r["msg"] == ("drift: DRIFT (launch_command): --tp-size 8 -> 4 - restart to apply (playbooks/restart.yml); "
                        "start-up phases: not reported (SGLang < 0.5.20)")
    assert "one" not in str(r) and "two" not in str(r)
