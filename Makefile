# pinery's two everyday commands are `make demo` and `make test`; everything else is a helper.
# Python 3.11 is the supported interpreter (CI and the README use it).

PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# Examples per property for `make fuzz` (CI and `make test` run a fixed 60).
FUZZ_EXAMPLES ?= 1000

.DEFAULT_GOAL := help
.PHONY: help install demo test test-long unit lint fmt fuzz chaos faults compat compat-venvs sdk9-overlay bench bench-quick crds check-crds deploy check-deploy validate-examples clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,trainer,embed]'
	@touch $(STAMP)

install: $(STAMP)  ## create .venv and install pinery with its dev, trainer and embed extras (and the 9.x SDK overlay)
	$(BIN)/python compat/overlay.py

demo: $(STAMP)  ## run the local demo
	$(BIN)/python -m pinery.local.demo

# The client venvs the tests drive (tests.conftest.compat_python): made once, then kept until
# their pins change (compat/run.py stamps each venv with its requirements).
COMPAT_TEST_CLIENTS := pinecone-7,pinecone-10,pinecone-7-grpc

# pinery runs on the pinecone 10.x SDK (API 2026-07), which .venv holds; the tests marked sdk9
# check the emulator's API 2025-10 with the real 9.x SDK, so they run apart, with pinecone 9.1.0
# laid over .venv's 10.x (compat/overlay.py makes the overlay when missing or stale). A run that
# selects no sdk9 test (pytest's status 5) is not a failure. A `-m` in PYTEST_ARGS replaces the
# first run's `-m "not sdk9"`. The first run lists its 25 slowest steps, to keep the suite's time
# in sight.
SDK9_OVERLAY := $(or $(PINERY_COMPAT_VENV_DIR),.compat-venvs)/pinecone-9-overlay

test: $(STAMP) lint  ## run the whole test suite (after make lint): everything on 10.x, then the sdk9 tests on 9.1.0
	$(BIN)/python compat/run.py --install-only --clients $(COMPAT_TEST_CLIENTS)
	$(BIN)/python compat/overlay.py
	$(BIN)/python -m pytest -m "not sdk9 and not long" --durations=25 $(PYTEST_ARGS)
	PYTHONPATH=$(SDK9_OVERLAY) $(BIN)/python -m pytest -m sdk9 $(PYTEST_ARGS) || test $$? -eq 5

test-long: $(STAMP)  ## the tests marked long, which make test leaves out (about 5 minutes)
	$(BIN)/python -m pytest -m "long and not sdk9" --durations=10 $(PYTEST_ARGS)

sdk9-overlay: $(STAMP)  ## only make or update the 9.x SDK overlay the sdk9 tests run with (.compat-venvs/pinecone-9-overlay)
	$(BIN)/python compat/overlay.py

unit: $(STAMP)  ## the fast suite: tests/unit (about a minute)
	$(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

# The sources ruff and mypy read; import-linter reads the contracts in .importlinter.
LINT_PATHS := operator trainer tests compat benchmarks tools

lint: $(STAMP)  ## ruff (pyflakes, bugbear, isort, pycodestyle), mypy, and the layer contracts of .importlinter
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/mypy -p pinery -p pinery_trainer
	PYTHONPATH=operator:trainer $(BIN)/lint-imports

fmt: $(STAMP)  ## apply ruff's safe fixes (import order, unused imports and the like)
	$(BIN)/ruff check --fix $(LINT_PATHS)

fuzz: $(STAMP)  ## the fuzz and security suites with FUZZ_EXAMPLES examples per property, random seeds
	PINERY_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest tests/fuzz tests/security --hypothesis-show-statistics $(PYTEST_ARGS)

# The client compatibility suite (compat/run.py): each client in compat/clients.py in its own venv
# under .compat-venvs/, made on first use, against one emulator. COMPAT_ARGS: e.g.
# `--clients pinecone-7,pinecone-10`, `--no-install`, `--update-docs` (rewrites the table in
# docs/local-mode.md). `make test` runs a subset (tests/integration/test_compat_subset.py).
COMPAT_ARGS ?=

compat: $(STAMP)  ## real clients against local mode: pinecone 5.x-10.x, langchain-pinecone, llama-index (results in benchmarks/results/compat/)
	$(BIN)/python compat/run.py $(COMPAT_ARGS)

compat-venvs: $(STAMP)  ## only create or update the compat venvs (e.g. COMPAT_ARGS=--clients=pinecone-7,pinecone-10)
	$(BIN)/python compat/run.py --install-only $(COMPAT_ARGS)

# Benchmarks are CPU-heavy: on a shared machine they queue behind each other on this lock.
BENCH_LOCK ?= $(shell command -v flock >/dev/null 2>&1 && echo flock /tmp/pinery-heavy.lock)
OPERATOR_BENCHMARKS := fsdpjob_convergence vectorindex_convergence operator_memory

bench: $(STAMP)  ## run the operator benchmarks (about 7 minutes; results in benchmarks/results/)
	@for b in $(OPERATOR_BENCHMARKS); do $(BENCH_LOCK) $(BIN)/python benchmarks/$$b.py || exit 1; done

bench-quick: $(STAMP)  ## the operator benchmarks at a small scale (about 2 minutes; results under /tmp)
	@for b in $(OPERATOR_BENCHMARKS); do $(BENCH_LOCK) $(BIN)/python benchmarks/$$b.py --quick --out $${TMPDIR:-/tmp}/pinery-$$b.json || exit 1; done

crds: $(STAMP)  ## regenerate crds/, the chart's CRDs and the plain manifests from the API models
	$(BIN)/pinery crds
	$(BIN)/python tools/render_deploy.py

check-crds: $(STAMP)  ## fail when the committed CRDs are stale
	$(BIN)/pinery crds --check

deploy: $(STAMP)  ## regenerate deploy/pinery.yaml and deploy/kustomize/ from the Helm chart
	$(BIN)/python tools/render_deploy.py

check-deploy: $(STAMP)  ## fail when the committed plain manifests are stale
	$(BIN)/python tools/render_deploy.py --check

validate-examples: $(STAMP)  ## validate examples/ with `pinery validate`
	$(BIN)/pinery validate -f examples/

# The reliability suites' full forms (docs/reliability.md); `make test` runs their reduced forms.
# Each run writes its JSON result under RELIABILITY_RESULTS, then the totals go to summary.json.
RELIABILITY_RESULTS ?= benchmarks/results/reliability
CHAOS_SEEDS ?= 1 2 3
# CHAOS_BUSY_CORES=1: that many busy loops run beside each chaos run (CPU load, as a busy CI
# machine has), and the results are named chaos-full-seedN-one-core-busy.json (N-cores-busy).
CHAOS_BUSY_CORES ?= 0
CHAOS_LABEL = $(if $(filter 0,$(CHAOS_BUSY_CORES)),,$(if $(filter 1,$(CHAOS_BUSY_CORES)),one-core-busy,$(CHAOS_BUSY_CORES)-cores-busy))
RELIABILITY_PYTEST = $(BIN)/python -m pytest -q -p no:cacheprovider --reliability-profile=full --reliability-results=$(RELIABILITY_RESULTS)

chaos: $(STAMP)  ## operator chaos, full form: one run per seed in CHAOS_SEEDS, the operator SIGKILLed throughout
	@mkdir -p $(RELIABILITY_RESULTS)
	@busy=""; for i in $$(seq 1 $(CHAOS_BUSY_CORES)); do $(BIN)/python -c 'while True: pass' & busy="$$busy $$!"; done; \
	trap 'kill $$busy 2>/dev/null' EXIT; status=0; for seed in $(CHAOS_SEEDS); do \
	  rm -f $(RELIABILITY_RESULTS)/chaos-full-seed$$seed$(if $(CHAOS_LABEL),-$(CHAOS_LABEL)).json; \
	  $(RELIABILITY_PYTEST) --reliability-seed=$$seed --reliability-label=$(CHAOS_LABEL) tests/reliability/test_chaos.py::test_operator_chaos || status=1; \
	done; $(BIN)/python -m tests.reliability.summary $(RELIABILITY_RESULTS) || status=1; exit $$status

faults: $(STAMP)  ## Pinecone faults and training faults (a rank SIGKILLed mid-run), full forms
	@mkdir -p $(RELIABILITY_RESULTS)
	@status=0; $(RELIABILITY_PYTEST) tests/reliability/test_pinecone_faults.py tests/reliability/test_training_faults.py || status=1; \
	$(BIN)/python -m tests.reliability.summary $(RELIABILITY_RESULTS) || status=1; exit $$status

clean:  ## remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
