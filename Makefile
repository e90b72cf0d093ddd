# The two front-door commands are `make report` and `make test`; both build
# .venv on first use.  `make install` is idempotent: it reinstalls only when
# pyproject.toml changes.
VENV   := .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# One BLAS thread per sampling chain: oversubscribing 2 cores measured 3.7x slower.
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: install test test-accel-off lint report bench study audit readme readme-check clean

# The project's own modules are compiled to bytecode, as pip does for a regular
# install: the editable install leaves that to Python, which writes none where
# PYTHONDONTWRITEBYTECODE is set (as on these machines), and then every new
# process (a command, a worker, each of the suite's subprocesses) compiled the
# ~39,000 lines it imports again: 0.3-0.4 s of a 0.75-1.1 s `bayes-compare list`
# (docs/speed.md).  Up-to-date files are skipped (0.1 s); a module edited since is
# compiled in memory, as before, until the next make.
install: $(STAMP)
	@$(PYTHON) -m compileall -q analytic pymc_models compare

$(STAMP): pyproject.toml
	@test -x $(PYTHON) || { py=$$(scripts/find-python) && echo "creating $(VENV) with $$py" && "$$py" -m venv $(VENV); }
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

# Two pytest-xdist workers; each test goes to the free worker, except the tests of a
# module with a module- or session-scoped fixture (a calibration study, the report's
# `run --all`), which stay together (pytest_xdist_make_scheduler in tests/conftest.py).
# TEST_WORKERS=0 runs serially.  Tests marked `study` (real-MCMC calibration studies
# of the structured topics and of every sampler) are left to `make study`.
TEST_WORKERS ?= 2
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadscope)
test: install
	$(PYTHON) -m pytest -m "not study" $(XDIST)

# Correctness without the accelerators (compare/accel/, docs/architecture.md): every
# topic's agreement on its default data and the null calibration of one conjugate topic,
# with BAYES_COMPARE_ACCEL=0 (no patch, nutpie's own compile).  CI runs it after `make
# test`, on the same cold caches.
ACCEL_OFF_TESTS = tests/compare/outputs/test_report.py::test_every_topic_agrees_on_its_default_data \
	'tests/compare/studies/test_calibration.py::test_mcmc_z_scores_are_standard_normal[beta-binomial]'
test-accel-off: install
	BAYES_COMPARE_ACCEL=0 $(PYTHON) -m pytest -m "not study" $(XDIST) $(ACCEL_OFF_TESTS)

# ruff (lint and format check) and mypy, from the `lint` extra, configured in
# pyproject.toml.  Nothing is rewritten: `ruff check --fix .` and
# `ruff format .` do that by hand (or the pre-commit hooks).
LINT_STAMP := $(VENV)/.installed-lint
$(LINT_STAMP): $(STAMP)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	@touch $(LINT_STAMP)

lint: install $(LINT_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Every topic on its builtin data, then the summary table and the HTML site
# (reports/index.html).  Both are written even when a topic disagrees, and
# make then fails with that run's exit code.  REPORTS=DIR writes them there
# instead (benchmarks/make_report.py times the target in a temporary folder).
REPORTS ?= reports
report: install
	@status=0; $(VENV)/bin/bayes-compare run --all --out $(REPORTS)/runs || status=$$?; \
	$(VENV)/bin/bayes-compare summary --runs $(REPORTS)/runs --out $(REPORTS)/summary.md && \
	$(VENV)/bin/bayes-compare report --all --out $(REPORTS) && exit $$status

# Every inference method on every topic (docs/audit.md): reports/audit/audit.html,
# and the table in README.md.  On a running cluster: make audit SCHEDULER=tcp://HOST:PORT.
audit: install
	$(VENV)/bin/bayes-compare audit --all --out reports/audit $(if $(SCHEDULER),--scheduler $(SCHEDULER))
	$(PYTHON) scripts/audit_readme.py reports/audit/audit.md README.md

# The peers the benchmarks measure side by side (simuk), from the package index.
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): $(STAMP)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'
	@touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(PYTHON) benchmarks/run.py
	$(PYTHON) benchmarks/plain_pymc.py
	$(PYTHON) benchmarks/compile.py
	$(PYTHON) benchmarks/extraction.py
	$(PYTHON) benchmarks/expand.py
	$(PYTHON) benchmarks/new_length.py
	$(PYTHON) benchmarks/regression.py
	$(PYTHON) benchmarks/mixture.py
	$(PYTHON) benchmarks/gaussian_process.py
	$(PYTHON) benchmarks/classification.py
	$(PYTHON) benchmarks/gaussian_classifier.py
	$(PYTHON) benchmarks/logistic_regression.py
	$(PYTHON) benchmarks/sensitivity.py
	$(PYTHON) benchmarks/sbc.py
	$(PYTHON) benchmarks/report.py
	$(PYTHON) benchmarks/make_report.py
	$(PYTHON) benchmarks/light_commands.py
	$(PYTHON) benchmarks/second_run.py
	$(PYTHON) benchmarks/blas_threads.py
	$(PYTHON) benchmarks/ess.py
	$(PYTHON) benchmarks/memory.py
	$(PYTHON) benchmarks/netcdf.py
	$(PYTHON) benchmarks/cluster.py
	$(PYTHON) benchmarks/audit.py
	$(PYTHON) benchmarks/suite.py

# The calibration and power figures quoted in the README: 200 null runs per
# topic in compare/calibration.py's NULL_FIXTURES and 1400 planted-bug runs.
# 9.0 minutes on a fast 2-core machine with every topic (2026-12-07, after the
# tests marked `study`, 110.7 s); README.md says the same.
# Sections 2-3 run as Dask tasks: a LocalCluster of the usable cores, or a running
# cluster with `make study SCHEDULER=tcp://HOST:PORT`; so does the null calibration
# of every sampler of --method (1500 runs, ~80 minutes on 2 cores).
# First the suite's tests marked `study` (~7 minutes of test durations): the
# structured topics' and every sampler's null calibration, with their assertions.
SCHEDULER ?=
study: install
	$(PYTHON) -m pytest -m study $(XDIST)
	$(PYTHON) benchmarks/verdict_study.py $(if $(SCHEDULER),--scheduler $(SCHEDULER))
	$(PYTHON) benchmarks/tail_study.py
	$(PYTHON) benchmarks/power_study.py
	$(PYTHON) benchmarks/plugin_calibration.py 30 5
	$(PYTHON) benchmarks/sampler_calibration.py $(if $(SCHEDULER),--scheduler $(SCHEDULER))

# Every program output shown in README.md is regenerated by scripts/readme.py
# (blocks marked <!-- readme: ... -->).  readme-check reruns them all (6.5
# minutes measured on a busy 2-core machine; READMEFLAGS='--cost cheap' for the
# 70-second subset tests/test_readme.py runs) and fails when the structure,
# check names, thresholds or alpha splits drifted; `make readme` rewrites them.
READMEFLAGS ?=
readme-check: install
	$(PYTHON) scripts/readme.py --check $(READMEFLAGS)

readme: install
	$(PYTHON) scripts/readme.py --write $(READMEFLAGS)

clean:
	rm -rf $(VENV) reports/runs reports/summary.md reports/index.html build
