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

.PHONY: install test report bench study clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PYTHON) || { py=$$(scripts/find-python) && echo "creating $(VENV) with $$py" && "$$py" -m venv $(VENV); }
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

# Two pytest-xdist workers, one test file per worker at a time (module fixtures
# such as the calibration studies stay on one worker).  TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= 2
test: install
	$(PYTHON) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# Every topic on its builtin data, then the summary table and the HTML site
# (reports/index.html).  Both are written even when a topic disagrees, and
# make then fails with that run's exit code.
report: install
	@status=0; $(VENV)/bin/bayes-compare run --all --out reports/runs || status=$$?; \
	$(VENV)/bin/bayes-compare summary --runs reports/runs --out reports/summary.md && \
	$(VENV)/bin/bayes-compare report --all --out reports && exit $$status

# The peers the benchmarks measure side by side (simuk), from the package index.
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): $(STAMP)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'
	@touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(PYTHON) benchmarks/run.py
	$(PYTHON) benchmarks/plain_pymc.py
	$(PYTHON) benchmarks/regression.py
	$(PYTHON) benchmarks/mixture.py
	$(PYTHON) benchmarks/gaussian_process.py
	$(PYTHON) benchmarks/classification.py
	$(PYTHON) benchmarks/gaussian_classifier.py
	$(PYTHON) benchmarks/logistic_regression.py
	$(PYTHON) benchmarks/sensitivity.py
	$(PYTHON) benchmarks/sbc.py
	$(PYTHON) benchmarks/report.py

# The calibration and power figures quoted in the README (~10 minutes).
study: install
	$(PYTHON) benchmarks/verdict_study.py

clean:
	rm -rf $(VENV) reports/runs reports/summary.md reports/index.html build
