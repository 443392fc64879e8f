# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_health module end to end (argument spec -> nvidia/gate.check -> return values), run by ansible-playbook
against the fake nvidia-smi (real output formats, injected faults)."""
import json
import os

import testpaths
from playbook import playbook

FAKE = os.path.join(testpaths.REPO, "tools", "fake_nvidia")

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - llmserve.sglang.gpu_health:
        nvidia_smi_path: %s
        expected_count: 8
        kernel_log: false
        ignore: "{{ ignore }}"
      environment:
        FAKE_NVIDIA_PROFILE: rtxpro6000x8
        FAKE_NVIDIA_FAULTS: "{{ faults }}"
      register: r
      failed_when: false
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ r | to_json }}"
"""


def gate(tmp_path, faults="", ignore=()):
    (tmp_path / "play.yml").write_text(PLAY % os.path.join(FAKE, "nvidia-smi"))
    out = tmp_path / "r.json"
    playbook(tmp_path / "play.yml", "-e", json.dumps({"faults": faults, "ignore": list(ignore), "out": str(out)}))
    return json.loads(out.read_text())


def test_a_fault_fails_the_gate_and_is_ignored_on_purpose(tmp_path):
    r = gate(tmp_path, "remap_pending:3")
    assert r["healthy"] is False and r["checks"]["remapped_rows"] == "error"
    assert r["checks"]["xid"] == "skipped" and r["checks"]["dcgm_diag"] == "skipped"  # kernel_log off, no dcgm
    assert r["checks"]["gpu_model"] == "skipped"                                       # nothing to compare with
    ignored = gate(tmp_path, "remap_pending:3", ignore=["remapped_rows", "ecc_errors"])
    assert ignored["checks"]["remapped_rows"] == "ignored"
    assert any("'remapped_rows' is ignored on purpose" in w for w in ignored["warnings"])


def test_an_unknown_check_name_is_refused(tmp_path):
    r = gate(tmp_path, "", ignore=["remaped_rows"])
    assert "healthy" not in r and "unknown check(s) remaped_rows" in r["msg"]  # refused before anything ran
