# llmserve.sglang - developer entry points. `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(CURDIR)/$(BIN):$(PATH)
# Scenarios under extensions/molecule/ (shared/ holds the fleet playbooks, not a scenario).
SCENARIOS ?= $(sort $(filter-out shared,$(notdir $(patsubst %/,%,$(dir $(wildcard extensions/molecule/*/molecule.yml))))))
HOSTS ?= 2

bench: setup system-deps ## baseline vs EAGLE-3 (vs adaptive) on a local 1-host fleet with the double (BENCH_ARGS=...)
	tools/bench_report/demo_bench.sh $(BENCH_ARGS)

bench-report: setup ## turn a benchmark run folder into report.md + PNG plots (DIR=benchmarks/results/...)
	$(BIN)/python tools/bench_report/bench_report.py $(DIR)

.PHONY: bench bench-report help setup system-deps lint unit sanity real-parser build molecule test demo fleet-up fleet-down clean promtool controller-matrix mutation

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 16

$(BIN)/.installed: requirements/controller.txt requirements/test.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements/test.txt
	touch $@

setup: $(BIN)/.installed ## controller virtualenv with pinned tools (.venv)

system-deps: ## podman, runc, debootstrap (the local fleet), shellcheck (sanity), promtool (prometheus), setfacl (acl: the unit tests' ACL case), from Debian, as root
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v debootstrap >/dev/null && \
	  command -v shellcheck >/dev/null && command -v promtool >/dev/null && command -v setfacl >/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap shellcheck acl >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

# mypy over module_utils and plugin_utils (.mypy.ini), the collection imported through the tracked collections/ link
MYPY_PACKAGES := $(foreach p,module_utils plugin_utils,-p ansible_collections.llmserve.sglang.plugins.$(p))
lint: setup ## yamllint + ansible-lint --profile production + mypy (module_utils, plugin_utils)
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint --profile production
	MYPYPATH=collections $(BIN)/mypy --config-file .mypy.ini $(MYPY_PACKAGES)

# xdist: the unit tests wait on sockets and processes more than they compute; UNIT_WORKERS=0 runs them in one process.
UNIT_WORKERS ?= auto
unit: setup ## unit tests (parsers, classifier, argv rendering, the SGLang double, ...), in parallel (xdist)
	$(BIN)/pytest -q -n $(UNIT_WORKERS) -rs tests/unit

promtool: setup system-deps ## roles/monitoring: promtool check config / check rules / test rules, dashboard queries parsed
	tests/promtool/run.sh

sanity: setup system-deps ## ansible-test sanity on a copy laid out as ansible_collections/llmserve/sglang
	tests/sanity/run.sh

real-parser: setup ## argv rendering checked by the real SGLang argument parsers (0.5.9, 0.5.10.post1, 0.5.15.post1, 0.5.23)
	tests/real_parser/build_venvs.sh
	$(BIN)/pytest -q -rs tests/real_parser

controller-matrix: system-deps ## units + sanity under ansible-core 2.20/2.21/2.22 on Python 3.13 (Debian 13 chroot; not in `test`)
	tools/controller_matrix/run.sh $(CORES)

build: setup ## build the collection tarball, install it in a scratch path, use it by FQCN
	tests/build/check_build.sh

molecule: setup system-deps ## every molecule scenario on the local fleet (create, converge, idempotence, verify, destroy)
	@[ -n "$(strip $(SCENARIOS))" ] || { echo "molecule: no scenario to run (SCENARIOS is empty)"; exit 1; }
	@times=""; for s in $(SCENARIOS); do echo "=== molecule test -s $$s"; t0=$$(date +%s); $(BIN)/molecule test -s $$s || exit 1; \
	  times="$$times $$s=$$(( $$(date +%s) - t0 ))s"; done; echo "molecule: all scenarios passed;$$times"

# The stages one after the other, each timed (the summary at the end is the per-stage figure issue 37 asks for).
TEST_STAGES := lint unit promtool sanity build real-parser molecule
test: setup system-deps ## everything CI runs (lint unit promtool sanity build real-parser molecule), each stage timed
	@times=""; for s in $(TEST_STAGES); do t0=$$(date +%s); $(MAKE) --no-print-directory $$s || { echo "make test: stage $$s failed"; exit 1; }; \
	  times="$$times $$s=$$(( $$(date +%s) - t0 ))s"; done; echo "make test: all stages passed;$$times"

# mutmut beside the controller venv (its packages seen through a .pth file), so mutmut's own pins stay out of it.
MUTVENV := $(VENV)-mutation
$(MUTVENV)/.installed: requirements/mutation.txt $(BIN)/.installed
	$(PYTHON) -m venv $(MUTVENV)
	$(MUTVENV)/bin/pip install -q -r requirements/mutation.txt
	$(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > \
	  "$$($(MUTVENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/llmserve-controller.pth"
	touch $@

mutation: setup $(MUTVENV)/.installed ## mutation score of the safety rooms, each against its own tests (ROOMS=..., not in `test`; tools/mutation/)
	$(MUTVENV)/bin/python tools/mutation/mutation.py $(ROOMS) $(MUTATION_ARGS)

demo: setup system-deps ## deploy EAGLE-3 with the SGLang double on a local fleet of $(HOSTS) hosts
	tools/demo/run.sh --hosts $(HOSTS) $(DEMO_ARGS)

fleet-up: setup system-deps ## bring up $(HOSTS) local test hosts (.fleet/fleet/inventory.yml)
	$(BIN)/python tools/fleet/fleet.py up -n $(HOSTS)

fleet-down: ## remove the local test hosts
	$(PYTHON) tools/fleet/fleet.py down --all

clean: ## remove local state (not the image cache)
	rm -rf .cache .pytest_cache tests/output
