# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench_serving through a real ansible-playbook (issue 42, item 6): its numbers refused by name before any load -
concurrency 0 and 10^9, a timeout of 1e309 (inf), NaN and -8, a FIFO as its server log - beside a good run in
check mode (which sends nothing)."""
import json
import os

from playbook import playbook

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - llmserve.sglang.bench_serving:
        url: http://127.0.0.1:9
        concurrency: "{{ item.concurrency | default(8) }}"
        timeout: "{{ item.timeout | default(600) }}"
        server_log: "{{ item.log | default(omit) }}"
        engine: builtin
      loop: "{{ cases }}"
      register: r
      failed_when: false
      check_mode: "{{ item.check | default(false) }}"
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ r.results | map(attribute='msg', default='ok') | list | to_json }}"
"""


def test_bench_serving_refuses_its_bad_numbers_by_name_and_runs_the_good_ones(tmp_path):
    fifo = tmp_path / "server.log"
    os.mkfifo(str(fifo))
    cases = [{"concurrency": 0}, {"concurrency": 10 ** 9}, {"concurrency": 64, "check": True},
             {"timeout": "1e309"}, {"timeout": "nan"}, {"timeout": -8}, {"timeout": 30, "check": True},
             {"log": str(fifo)}]
    (tmp_path / "play.yml").write_text(PLAY)
    out = tmp_path / "r.json"
    playbook(tmp_path / "play.yml", "-e", json.dumps({"cases": cases, "out": str(out)}))
    msgs = json.loads(out.read_text())
    assert msgs[0] == "concurrency: 0 is outside 1..4096"
    assert msgs[1] == "concurrency: 1000000000 is outside 1..4096"
    assert msgs[2] == "ok" and msgs[6] == "ok"
    assert msgs[3] == "timeout must be a finite number of seconds, not inf"
    assert msgs[4] == "timeout must be a finite number of seconds, not nan"
    assert msgs[5] == "timeout: -8.0 s must be above 0 and at most 604800 s"
    assert msgs[7].startswith("server_log: %s: is a FIFO" % fifo)
