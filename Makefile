# The README's two commands: `make demo` and `make test`. Both set everything up if needed, offline once set up.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
CACHE ?= .cache
SETUP_STAMP := $(VENV)/.lmms-eval-tasks-setup
WORDNET_STAMP := $(VENV)/.lmms-eval-tasks-wordnet
DOCTOR_STAMP := $(VENV)/.lmms-eval-tasks-doctor
TEST_STAMP := $(VENV)/.lmms-eval-tasks-test
BUILD_TINY_LLAVA := $(PY) -m lmms_eval_tasks.cli build-tiny-llava --output $(CACHE)/tiny-llava
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
# Python caches each module's bytecode in the venv on its first import: with PYTHONDONTWRITEBYTECODE=1 (common
# in container images) every process compiled all it imported on every start (the host's import: 33.8 s of
# CPU, 16.2 s from cached bytecode). uv does not compile at install (pip does); compiling all ~22,500
# installed files (uv --compile-bytecode) measured ~105 s of CPU, more than the first imports compile.
unexport PYTHONDONTWRITEBYTECODE
export LMMS_EVAL_TASKS_CACHE ?= $(abspath $(CACHE))
export NLTK_DATA ?= $(abspath $(CACHE))/nltk_data

.PHONY: setup demo test test-quick bench lint generate doctor tiny-llava wordnet clean

setup: $(SETUP_STAMP) $(WORDNET_STAMP) $(DOCTOR_STAMP)

# Installs torch's local CPU wheel and the pack with its extras, without torchvision and timm
# (scripts/install_packages.sh: with uv, installed into the venv from PyPI, much faster than pip's resolver
# and serial installs; pip when uv cannot be had; LMMS_EVAL_TASKS_NO_UV=1 forces pip). The PyPI torchvision
# that lmms-eval drags in fails to import next to the CPU wheel and breaks transformers' import paths
# (spec 00 §3); transformers works without it. timm imports torchvision, and `accelerate launch` imports timm
# whenever it is installed. Then the tiny LLaVA is built while WordNet is installed (independent; side by
# side on two cores): the packages' first imports (bytecode compilation) are most of both steps.
$(SETUP_STAMP): pyproject.toml constraints/cpu.txt scripts/install_packages.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	VENV=$(VENV) bash scripts/install_packages.sh constraints/cpu.txt torch==2.13.0 '.[dev,llava-hf]'
	$(BUILD_TINY_LLAVA) & \
	PYTHON=$(PY) bash scripts/install_wordnet.sh $(NLTK_DATA); wordnet=$$?; wait $$! && exit $$wordnet
	touch $@ && touch $(WORDNET_STAMP)

# WordNet is (re)checked whenever its installer changes: "installed" means every file nltk opens is there,
# and the step ends by loading WordNet through nltk (scripts/install_wordnet.sh).
$(WORDNET_STAMP): $(SETUP_STAMP) scripts/install_wordnet.sh lmms_eval_tasks/wordnet.py
	PYTHON=$(PY) bash scripts/install_wordnet.sh $(NLTK_DATA)
	touch $@

wordnet:
	PYTHON=$(PY) bash scripts/install_wordnet.sh $(NLTK_DATA)

# Set-up ends by checking what works (exit 1 on a broken setup); re-checked whenever set-up changed.
$(DOCTOR_STAMP): $(SETUP_STAMP) $(WORDNET_STAMP)
	$(PY) -m lmms_eval_tasks.cli doctor --dev
	touch $@

doctor: $(SETUP_STAMP) $(WORDNET_STAMP)
	$(PY) -m lmms_eval_tasks.cli doctor --dev

# What only `make test` needs, on top of the same set-up `make demo` uses: headless Chromium for the
# report's browser test (root only; the test says why it skips otherwise). Checked once per venv.
$(TEST_STAMP): $(SETUP_STAMP)
	@if command -v chromium >/dev/null 2>&1; then :; elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
	  echo "setup: chromium could not be installed: the report's browser test will be skipped"; \
	else echo "setup: not root: chromium not installed (the report's browser test will be skipped)"; fi
	touch $@

# Regenerates every generated file (task YAML, per-task hook lines, sample data, host task index) from the
# generators named in the benchmark registry; tests fail when a generated file drifts.
generate: setup
	$(PY) -m lmms_eval_tasks.framework.taskgen

tiny-llava:
	$(BUILD_TINY_LLAVA)

demo: setup
	$(PY) -m lmms_eval_tasks.demo --output out/demo --tiny-llava $(CACHE)/tiny-llava

# Every test, on TEST_WORKERS pytest-xdist workers, a whole file per worker (module-scoped launcher runs are
# made once). `make test-quick`, the edit loop, leaves out the tests marked `slow` (launcher runs and
# benchmark scripts in subprocesses). Extra pytest options: `make test PYTEST_ARGS='-k vrb'`.
# Three workers on two cores: the launcher tests wait on servers and subprocesses, which left the CPU 20 %
# idle with two (a fresh clone of 985a186: 497 s with 2 workers, 429 s with 3, 419 s with 4; all passing).
TEST_WORKERS ?= 3
# --no-loadscope-reorder: files are handed out in collection order (tests/conftest.py puts the longest ones,
# timed by the last run, first), not xdist's most-tests-first, which left the long launcher files for the end.
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
NO_TESTS_IS_A_FAILURE := status=$$?; if [ $$status -eq 5 ]; then echo "no tests collected"; exit 1; fi; exit $$status
# Bytecode is written during the tests even where the shell sets PYTHONDONTWRITEBYTECODE (empty is unset):
# without it each launcher or CLI subprocess compiles the ~70 pack modules it imports again (0.5 s of CPU,
# hundreds of subprocesses) and each xdist worker re-rewrites every test module's asserts (about 10 s).
test test-quick: export PYTHONDONTWRITEBYTECODE :=

test: setup $(TEST_STAMP)
	$(PYTEST) $(PYTEST_ARGS); $(NO_TESTS_IS_A_FAILURE)

test-quick: setup $(TEST_STAMP)
	$(PYTEST) -m "not slow" $(PYTEST_ARGS); $(NO_TESTS_IS_A_FAILURE)

# Every script in benchmarks/ (each honours --quick: `make bench BENCH_ARGS=--quick`; the tests run that).
bench: setup
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script $(BENCH_ARGS) || exit 1; done

lint: setup
	$(VENV)/bin/ruff check lmms_eval_tasks tests benchmarks
	$(VENV)/bin/ruff format --check lmms_eval_tasks tests benchmarks

clean:
	rm -rf $(VENV) $(CACHE) out
