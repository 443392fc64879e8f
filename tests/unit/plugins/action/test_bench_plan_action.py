# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bench_plan action through a real ansible-playbook: the instance's settings (inventory, roles/server's
defaults) and the mode give what roles/server launches; a bad mode is refused by name."""
import json

from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    server_env: {NCCL_DEBUG: WARN}
    server_speculative: {algorithm: EAGLE3, draft_model_path: /d, num_steps: 3}
  tasks:
    - llmserve.sglang.bench_plan:
        mode: allreduce_pcie_ipc
      register: ar
    - llmserve.sglang.bench_plan:
        mode: eagle3_adaptive
        speculative: {draft_model_path: /other, num_steps: 5}
      register: ad
    - llmserve.sglang.bench_plan:
        mode: eagle3_threshold
        max_batch: 64
        results:
          - {mode: baseline, concurrency: 4, decode_throughput: 240}
          - {mode: baseline, concurrency: 8, decode_throughput: 480}
          - {mode: eagle3, concurrency: 4, decode_throughput: 354}
          - {mode: eagle3, concurrency: 8, decode_throughput: 354}
        meta: {sglang_version: "0.5.23", speculative: {algorithm: EAGLE3, draft_model_path: /d, num_steps: 3}}
      register: th
    - llmserve.sglang.bench_plan:
        mode: eagle3_threshold
        results: []
      register: nothing
    - llmserve.sglang.bench_plan:
        mode: fast
      register: bad
      ignore_errors: true
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'ar': ar, 'ad': ad, 'bad': bad, 'th': th, 'none': nothing} | to_json }}"
"""


def test_bench_plan_through_ansible_playbook(tmp_path):
    (tmp_path / "play.yml").write_text(PLAY)
    playbook(tmp_path / "play.yml", "-e", "out=%s" % (tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["ar"]["speculative"] == {"algorithm": "EAGLE3", "draft_model_path": "/d", "num_steps": 3}
    assert r["ar"]["env"] == {"NCCL_DEBUG": "WARN", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1"}
    assert r["ad"]["speculative"] == {"draft_model_path": "/other", "num_steps": 5, "adaptive": True, "eagle_topk": 1,
                                      "adaptive_config": None, "num_draft_tokens": 6}
    assert r["bad"]["failed"] and "mode must be one of" in r["bad"]["msg"] and "fast" in r["bad"]["msg"]
    # the adaptive curve is measured with the setting of the crossover measured so far (5.9: speculate up to 5)
    assert not r["th"]["skip"] and r["th"]["candidate"]["effective_threshold"] == 5
    assert r["th"]["speculative"]["adaptive_config"] == {"1": {"candidate_steps": [3]}, "6": {"candidate_steps": [0]}}
    assert r["th"]["args"] == {"max-running-requests": 64, "cuda-graph-max-bs": 64, "enable-metrics": True}
    assert r["none"]["skip"] and r["none"]["why"].startswith("no adaptive setting to measure")
