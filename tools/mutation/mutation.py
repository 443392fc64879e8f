#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation score of the rooms whose rules keep hosts safe and verdicts true (``make mutation``).

    tools/mutation/mutation.py                      # every room, one after another
    tools/mutation/mutation.py sglang/ports nvidia/health   # some rooms
    tools/mutation/mutation.py --list               # the rooms, their files and their tests

Each room's mutants (mutmut, pinned in requirements/mutation.txt) run against that room's own tests only. mutmut
names a mutant after its module's path, and the collection imports as ``ansible_collections.llmserve.sglang``, so
the checkout is copied into .cache/mutation/<room>/ansible_collections/llmserve/sglang/ and mutmut runs there (its
collections/ symlink points at the mutated copy itself, so neither tests/unit/conftest.py nor a module run as a
subprocess can reach the unmutated tree).

A surviving mutant that no test can kill because the program does the same either way is written down in
tools/mutation/equivalent.txt (``<mutant name without the collection's prefix> <reason>``) and leaves the count. The room's score is
killed / (mutants - equivalent); a mutant ended by a limit (mutmut's timeout, a signal, or over MEMORY_LIMIT_MB) is
"limited": listed apart and no kill. The run fails (exit 1) when a room is below --floor (90 by default), when a
survivor is neither killed nor written down as equivalent and --strict is given, when a room has no mutant, or when
a line of equivalent.txt for the room's files names a mutant the run no longer has or now kills (stale). Whole
runs only: the scores in the README come from a run of the whole room on the commit they name.
"""
from __future__ import print_function

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MU = "plugins/module_utils/"
UT = "tests/unit/plugins/module_utils/"
PT = "tests/unit/plugins/plugin_utils/"
AT = "tests/unit/plugins/action/"

# room -> (files mutated, tests that hold them). A room's tests are the tests of the files it mutates.
ROOMS = {
    "models/contain": ([MU + "models/contain.py"], [UT + "models/test_models_safety.py", UT + "models/test_contain_bounds.py",
                                                    UT + "host/test_host_boundary.py"]),
    "models/checkpoint": ([MU + "models/checkpoint.py"],
                          [UT + "models/test_models_checkpoint.py", UT + "models/test_models_servable.py",
                           UT + "models/test_models_hostile.py", UT + "host/test_host_untrusted.py"]),
    "models/manifest": ([MU + "models/manifest.py"],
                        [UT + "models/test_models_manifest.py", UT + "models/test_models_safety.py",
                         UT + "models/test_models_stage.py", UT + "models/test_manifest_bounds.py"]),
    "models/verify": ([MU + "models/verify.py"],
                      [UT + "models/test_models_manifest.py", UT + "models/test_models_stage.py",
                       UT + "models/test_models_draft.py", UT + "models/test_models_servable.py",
                       UT + "models/test_verify_mutants.py", UT + "models/test_models_serving.py"]),
    "models/draft": ([MU + "models/draft.py"], [UT + "models/test_models_draft.py", UT + "models/test_models_servable.py"]),
    # host/ in three rooms (one run each stays under an hour on 2 cores): the untrusted-file reader, the owned
    # directories (root safety), and the rest.
    "host/untrusted": ([MU + "host/untrusted.py"], [UT + "host/test_host_untrusted.py", UT + "host/test_untrusted_mutants.py",
                                                   UT + "models/test_models_hostile.py"]),
    "host/values": ([MU + "host/values.py"], [UT + "host/test_host_values.py"]),
    "host/owned_dirs": ([MU + "host/owned_dirs.py"],
                        [UT + "host/test_host_owned_dirs.py", UT + "host/test_owned_dirs_mutants.py",
                         UT + "host/test_host_boundary.py", PT + "test_server_owned_dirs.py",
                         "tests/unit/plugins/modules/test_owned_dir_module.py"]),
    "host": ([MU + "host/access.py", MU + "host/lock.py", MU + "host/mounts.py", MU + "host/net.py",
              MU + "host/ownership.py", MU + "host/proc_watch.py", MU + "host/run.py", MU + "host/spawn.py",
              MU + "host/user_regex.py"],
             [UT + "host/test_host_access.py", UT + "host/test_host_mounts.py", UT + "host/test_host_net.py",
              UT + "host/test_host_ownership.py", UT + "host/test_host_run_spawn.py", UT + "host/test_host_run_spawn_mutants.py",
              UT + "host/test_proc_watch_port.py", UT + "host/test_proc_watch_marked.py", UT + "host/test_host_mutants.py",
              UT + "host/test_host_run_bounds.py", UT + "host/test_user_regex.py",
              UT + "server/test_server_lock.py"]),
    # a pid file is not proof (#42): the verdict every stop, status and readiness wait acts on
    "host/pidfile": ([MU + "host/pidfile.py"], [UT + "host/test_pidfile.py", UT + "server/test_server_pid_identity.py"]),
    "server/preflight": ([MU + "server/preflight.py"], [UT + "server/test_server_preflight.py", UT + "server/test_preflight_bounds.py",
                                                   UT + "sglang/test_sglang_ports.py", UT + "server/test_preflight_mutants.py",
                                                   UT + "server/test_preflight_model_limits.py",
                                                   UT + "server/test_preflight_refusals.py", UT + "server/test_preflight_gpu_neighbours.py"]),
    # plan.py moved to plugin_utils (issue 35): its refusals (validation, plan-time) and their tests.
    "server/plan": (["plugins/plugin_utils/_server_plan.py"],
                    [PT + "test_server_plan.py", PT + "test_server_plan_inputs.py", PT + "test_server_owned_dirs.py",
                     PT + "test_server_plan_mutants.py"]),
    "server/drift": ([MU + "server/drift.py"], [UT + "server/test_server_drift.py", UT + "server/test_drift_secrets.py",
                                                UT + "server/test_drift_mutants.py"]),
    "ready/verdicts": ([MU + "ready/verdicts.py"], [UT + "ready/test_ready_verdicts.py", UT + "ready/test_verdicts_bounds.py",
                                                         UT + "ready/test_ready_chat_probe.py"]),
    "ready/spec_accept": ([MU + "ready/spec_accept.py"], [UT + "ready/test_spec_accept.py", UT + "ready/test_spec_accept_bounds.py"]),
    "sglang/argv": ([MU + "sglang/argv.py"],
                    [UT + "sglang/test_server_argv.py", UT + "sglang/test_sglang_adaptive.py", UT + "sglang/test_sglang_allreduce.py"]),
    "sglang/ports": ([MU + "sglang/ports.py"], [UT + "sglang/test_sglang_ports.py", UT + "sglang/test_ports_bounds.py"]),
    "nvidia/health": ([MU + "nvidia/health.py"], [UT + "nvidia/test_gpu_health.py", UT + "nvidia/test_gpu_health_checks.py",
                                              UT + "nvidia/test_smi_hostile.py"]),
    "router/drain": ([MU + "router/drain.py"], [UT + "router/test_router_drain.py", UT + "router/test_drain_bounds.py"]),
    # issue 47: the rooms users lean on - the classifier's signatures, the benchmark's decision, the deploy lock,
    # the gate, the waiter and the modules' main()
    "sglang/signatures": ([MU + "sglang/signatures.py"],
                          [UT + "sglang/test_sglang_signatures.py", UT + "sglang/test_signatures_cause_rules.py",
                           UT + "sglang/test_signatures_model_check.py", UT + "sglang/test_signatures_args_dump.py",
                           UT + "sglang/test_sglang_failure_classes.py", UT + "sglang/test_log_patterns_linear.py",
                           UT + "sglang/test_sglang_real_logs.py", UT + "sglang/test_sglang_log_order.py",
                           UT + "sglang/test_signatures_survivable.py", UT + "sglang/test_signatures_model_limits.py",
                           UT + "sglang/test_signatures_mutants.py"]),
    "bench/decision": (["plugins/plugin_utils/_bench_curves.py", "plugins/plugin_utils/_bench_spec_setting.py"],
                       [PT + "test_bench_curves.py", PT + "test_bench_report.py", PT + "test_bench_decision.py",
                        PT + "test_bench_spec_setting.py", PT + "test_bench_decision_real.py",
                        PT + "test_bench_tiers.py"]),
    "actions": (["plugins/action/server_lock.py", "plugins/action/server_ready.py", "plugins/action/bench_plan.py",
                 "plugins/action/server_plan.py"],
                [AT + "test_server_lock_action.py", AT + "test_server_ready_action.py", AT + "test_bench_plan_action.py",
                 AT + "test_bench_plan_decide.py", AT + "test_server_plan_action.py", AT + "test_server_plan_rank0_vars.py",
                 AT + "test_action_argspec.py",
                 UT + "server/test_server_lock.py"]),
    "nvidia/gate": ([MU + "nvidia/gate.py"], [UT + "nvidia/test_gate_verdicts.py", UT + "nvidia/test_gate_allreduce.py",
                                              UT + "nvidia/test_gate_reuses_facts.py", UT + "nvidia/test_gate_mutants.py"]),
    "ready/waiter": ([MU + "ready/waiter.py"], [UT + "ready/test_server_ready_waiter.py", UT + "ready/test_ready_own_errors.py",
                                               UT + "ready/test_server_ready_host_and_order.py", UT + "ready/test_waiter_loop.py"]),
    # each module's main(): the documented options, check mode, refusals and what reaches the task
    "modules/main": (["plugins/modules/server_ready.py", "plugins/modules/owned_dir.py", "plugins/modules/server_instance.py"],
                     ["tests/unit/plugins/modules/test_server_ready_main.py", "tests/unit/plugins/modules/test_server_ready_doc.py",
                      "tests/unit/plugins/modules/test_main_argspec.py", "tests/unit/plugins/modules/test_owned_dir_main.py",
                      "tests/unit/plugins/modules/test_owned_dir_module.py",
                      "tests/unit/plugins/modules/test_server_instance_main.py"]),
}
# Tests a room's mutants do not run (pytest -k): ones that start the SGLang double as real processes and wait on it
# take tens of seconds per mutant; the room's other tests hold the same rules without a server.
DESELECT = {
    "ready/spec_accept": "not (matched_draft or mismatched_draft or stuck_generation or without_speculation)",
    # ansible-playbook lives in the controller venv only (the mutation venv sees its packages, not its scripts): these
    # two failed mutmut's clean run, so the room checked nothing; the in-process tests hold the same decisions
    "actions": "not through_ansible_playbook",
}
PKG = os.path.join("ansible_collections", "llmserve", "sglang")
EQUIVALENT = os.path.join(HERE, "equivalent.txt")
PREFIX = PKG.replace(os.sep, ".") + ".plugins.module_utils."
PLUGINS = PKG.replace(os.sep, ".") + ".plugins."
# mutmut's statuses that count as the tests catching the mutant. A mutant that ran out of time or memory, or died
# of a signal, is counted apart ("limited"): the tests did not tell it apart, a limit did, so it is no kill.
KILLED = ("killed", "caught by type check")
LIMITED = ("timeout", "segfault", "suspicious")
# Each mutant's test run (mutmut forks one per mutant, inheriting these): at most this much address space. A
# mutant that grows past it raises MemoryError, which the guard conftest below turns into exit 35 ("suspicious").
MEMORY_LIMIT_MB = 4096
GUARD = """# written by tools/mutation/mutation.py: a MemoryError ends the run as a limit, not as a failed test
import os


def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and call.excinfo.errisinstance(MemoryError):
        os._exit(35)
"""


def checkout_files():
    """Tracked and untracked-not-ignored files of the checkout (what a fresh clone plus the work in hand holds)."""
    out = subprocess.check_output(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO)
    return [p for p in out.decode().split("\0") if p and not p.startswith("collections/")]


def short(name):
    """A mutant's name without the collection's prefix: sglang.ports.x_check__mutmut_4 (module_utils),
    plugin_utils._server_plan.x_plan__mutmut_4 (any other plugins/ directory)."""
    for prefix in (PREFIX, PLUGINS):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def equivalents():
    found = {}
    if os.path.exists(EQUIVALENT):
        with open(EQUIVALENT) as handle:
            for line in handle:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, _, reason = line.partition(" ")
                    found[name] = reason.strip()
    return found


def stage(room, work):
    """Copy the checkout under work/ansible_collections/llmserve/sglang and write mutmut's setup.cfg for room."""
    mutate, tests = ROOMS[room]
    gone = [m for m in mutate if not os.path.isfile(os.path.join(REPO, m))]
    if gone:
        raise SystemExit("mutation: room %s mutates %s, not in the checkout (moved? fix ROOMS)" % (room, ", ".join(gone)))
    if os.path.isdir(work):
        shutil.rmtree(work)
    root = os.path.join(work, PKG)
    for rel in checkout_files():
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src) or os.path.islink(src):
            continue
        dst = os.path.join(root, rel)
        if not os.path.isdir(os.path.dirname(dst)):
            os.makedirs(os.path.dirname(dst))
        shutil.copy2(src, dst)
    missing = [t for t in tests if not os.path.exists(os.path.join(REPO, t))]
    tests = [t for t in tests if t not in missing]
    if not tests:
        raise SystemExit("mutation: room %s has no test file in the checkout" % room)
    tops = sorted(set(p.split("/")[0] for p in os.listdir(root)) - {"plugins"})
    lines = ["[mutmut]",
             "source_paths = %s/plugins" % PKG,
             "only_mutate ="] + ["    %s/%s" % (PKG, m) for m in mutate] + [
             "also_copy =", "    conftest.py"] + ["    %s/%s" % (PKG, t) for t in tops] + [
             "pytest_add_cli_args_test_selection ="] + ["    %s/%s" % (PKG, t) for t in tests] + [
             "pytest_add_cli_args =", "    -p", "    no:cacheprovider", "    -p", "    no:xdist"] + (
             ["    -k", "    " + DESELECT[room]] if room in DESELECT else []) + [""]
    with open(os.path.join(work, "setup.cfg"), "w") as handle:
        handle.write("\n".join(lines))
    # the guard: a conftest.py above the tests (mutmut copies it into mutants/, where pytest runs)
    with open(os.path.join(work, "conftest.py"), "w") as handle:
        handle.write(GUARD)
    # Tests that run a module file as a subprocess put <checkout>/collections on its PYTHONPATH: give the mutants'
    # copy that symlink (made here, since mutmut's copy would follow it round and round), pointing at itself.
    link = os.path.join(work, "mutants", PKG, "collections", PKG)
    os.makedirs(os.path.dirname(link))
    os.symlink(os.path.join("..", "..", ".."), link)
    return tests, missing


def _limit_memory():
    import resource
    limit = MEMORY_LIMIT_MB * 2 ** 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def mutmut(work, *args):
    exe = os.path.join(os.path.dirname(sys.executable), "mutmut")
    return subprocess.run([exe] + list(args), cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, preexec_fn=_limit_memory)


def statuses(work):
    """mutant name -> status, from ``mutmut results --all true``."""
    found = {}
    for line in mutmut(work, "results", "--all", "true").stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name:
            found[name] = status.strip()
    return found


def run_room(room, jobs, equivalent):
    work = os.path.join(REPO, ".cache", "mutation", room.replace("/", "-"))
    tests, missing = stage(room, work)
    done = mutmut(work, "run", "--max-children", str(jobs))
    found = statuses(work)
    if not found:
        print(done.stdout[-4000:])
        raise SystemExit("mutation: room %s produced no mutant (mutmut exit %d)" % (room, done.returncode))
    if all(s == "not checked" for s in found.values()):
        print(done.stdout[-4000:])
        raise SystemExit("mutation: room %s: mutmut checked no mutant (exit %d; its output above)" % (room, done.returncode))
    killed = sorted(n for n, s in found.items() if s in KILLED)
    limited = sorted(n for n, s in found.items() if s in LIMITED)
    equiv = sorted(n for n in found if n not in killed and n not in limited and short(n) in equivalent)
    survived = sorted(n for n in found if n not in killed and n not in limited and short(n) not in equivalent)
    counted = len(found) - len(equiv)
    score = 100.0 * len(killed) / counted if counted else 100.0
    return {"room": room, "mutants": len(found), "killed": len(killed), "equivalent": len(equiv),
            "limited": [(n, found[n]) for n in limited],
            "survived": [(n, found[n]) for n in survived], "score": round(score, 1), "tests": tests,
            "tests_missing": missing, "work": work,
            "stale_equivalents": stale_equivalents(room, dict((short(n), st) for n, st in found.items()), equivalent)}


def room_prefixes(room):
    """The mutant-name prefixes of a room's files: models.contain.x_, plugin_utils._bench_curves.x_, action.server_lock.x_"""
    out = []
    for path in ROOMS[room][0]:
        mod = path[:-3].replace("/", ".")
        for prefix in ("plugins.module_utils.", "plugins."):
            if mod.startswith(prefix):
                mod = mod[len(prefix):]
                break
        out.append(mod + ".x")
    return tuple(out)


def stale_equivalents(room, found, equivalent):
    """Lines of equivalent.txt for this room's files that no longer earn their place: the name is no mutant of
    this run (renumbered or gone), or the tests now kill it (then it was never equivalent)."""
    prefixes = room_prefixes(room)
    stale = []
    for name in sorted(equivalent):
        if not name.startswith(prefixes):
            continue
        if name not in found:
            stale.append((name, "no such mutant in this run (renumbered or removed): delete the line"))
        elif found[name] in KILLED + LIMITED:
            stale.append((name, "%s by the tests: not equivalent, delete the line" % found[name]))
    return stale


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rooms", nargs="*", help="rooms to run (default: all): %s" % ", ".join(sorted(ROOMS)))
    parser.add_argument("--list", action="store_true", help="print the rooms, their files and tests")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2), help="mutmut --max-children")
    parser.add_argument("--floor", type=float, default=90.0, help="lowest score a room may have (percent)")
    parser.add_argument("--strict", action="store_true", help="fail on any survivor not written down as equivalent")
    parser.add_argument("--json", help="write the per-room results here")
    args = parser.parse_args(argv)
    unknown = [r for r in args.rooms if r not in ROOMS]
    if unknown:
        parser.error("unknown room(s) %s; known: %s" % (", ".join(unknown), ", ".join(sorted(ROOMS))))
    if args.list:
        for room in sorted(ROOMS):
            print("%-18s %s\n%18s tests: %s" % (room, " ".join(ROOMS[room][0]), "", " ".join(ROOMS[room][1])))
        return 0
    equivalent = equivalents()
    results, failed = [], []
    for room in args.rooms or sorted(ROOMS):
        result = run_room(room, args.jobs, equivalent)
        results.append(result)
        print("%-18s %5.1f%%  %d mutants, %d killed, %d equivalent, %d survived, %d limited (time/memory/signal)" % (
            room, result["score"], result["mutants"], result["killed"], result["equivalent"], len(result["survived"]),
            len(result["limited"])))
        for name, status in result["limited"]:
            print("    limited, not a kill: %s: %s" % (short(name), status))
        for name, why in result["stale_equivalents"]:
            print("    equivalent.txt: %s: %s" % (name, why))
        if result["tests_missing"]:
            print("    tests listed but not in the checkout: %s" % " ".join(result["tests_missing"]))
        if result["survived"]:
            print("    survivors (cd %s && mutmut show NAME):" % result["work"])
        for name, status in result["survived"]:
            print("    %s: %s" % (short(name), status))
        if result["score"] < args.floor or (args.strict and result["survived"]) or result["stale_equivalents"]:
            failed.append(room)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    if failed:
        print("mutation: below %.0f%%, with unexplained survivors or stale equivalents: %s" % (args.floor, ", ".join(failed)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
