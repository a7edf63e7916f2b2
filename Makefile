# The README's two commands: `make demo` and `make test`. Each does all set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast docs venv bench clean

# A venv with the package (editable) and, for tests, the test extras. The stamp file
# is rebuilt when pyproject.toml changes.
$(BIN)/.installed-run: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(BIN)/.installed-test: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(BIN)/.installed-run $@

venv: $(BIN)/.installed-run

demo: $(BIN)/.installed-run
	$(BIN)/llm-power demo

# -n auto: pytest-xdist spreads the tests over the machine's cores; --dist loadgroup keeps the tests of one
# Spark session or Ray cluster (marked xdist_group) on one worker, so each starts once. `make test` runs the fast tier
# (about 6.5 minutes on the 2-core CI machine, -n 2; longer on a busy one); the long validity
# simulations and exhaustive enumerations (marked slow, about 5 minutes) run in `make test-slow`,
# which CI (.ci/run) runs after `make test`; `make test-all` runs both.
test: $(BIN)/.installed-test
	$(BIN)/python -m pytest -n auto --dist loadgroup -m "not slow"

test-slow: $(BIN)/.installed-test
	$(BIN)/python -m pytest -n auto --dist loadgroup -m slow

test-all: test test-slow

# the fast tier under its former name
test-fast: test

# The side-by-side benchmarks against the peers (evalica, arena-rank, choix, polars, orjson, scorio,
# statsmodels, scikit-learn) in their own environment; regenerates that part of benchmarks/README.md
# (about 30 minutes). One script: .venv-bench/bin/python benchmarks/run.py --only passk
.venv-bench/.installed: pyproject.toml
	$(PYTHON) -m venv .venv-bench
	.venv-bench/bin/python -m pip install --quiet --upgrade pip
	.venv-bench/bin/python -m pip install --quiet -e ".[bench]"
	touch $@

bench: .venv-bench/.installed
	.venv-bench/bin/python benchmarks/run.py

# The documentation site (mkdocs-material + mkdocstrings) in site/; no network needed
docs: $(BIN)/.installed-test
	$(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .venv-bench build dist site src/*.egg-info .pytest_cache
