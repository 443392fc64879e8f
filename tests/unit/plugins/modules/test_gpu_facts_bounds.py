# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_facts through a real ansible-playbook (issue 42, item 6): random bytes from nvidia-smi fail the module with
"unparseable nvidia-smi output", never read as GPUs or as a host without GPUs; the working fake beside it reads 8."""
import json
import os

import testpaths
from playbook import playbook

SMI = os.path.join(testpaths.REPO, "tools", "fake_nvidia", "nvidia-smi")
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - llmserve.sglang.gpu_facts:
        nvidia_smi_path: %s
        nvcc_path: /nonexistent/nvcc
        proc_version_path: /nonexistent
      environment:
        FAKE_NVIDIA_PROFILE: "{{ item }}"
      loop: [garbage, rtxpro6000x8]
      register: r
      failed_when: false
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ r.results | to_json }}"
"""


def test_gpu_facts_fails_on_garbage_by_name_and_reads_the_working_tool(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY % SMI)
    out = tmp_path / "r.json"
    playbook(tmp_path / "play.yml", "-e", json.dumps({"out": str(out)}))
    garbage, good = json.loads(out.read_text())
    assert garbage["msg"].startswith("unparseable nvidia-smi output: row 1 has ")  # failed (failed_when: false)
    assert "ansible_facts" not in garbage
    assert good["ansible_facts"]["gpu"]["count"] == 8 and not good.get("failed")
