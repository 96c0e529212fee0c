# Two commands: `make demo` runs the offline demo, `make test` runs the whole suite.
# Each creates .venv and installs the project on first use; later runs skip the install.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/swarmkit demo

test: $(STAMP)
	$(BIN)/ruff format --check swarmkit tests bench examples
	$(BIN)/ruff check swarmkit tests bench examples
	$(BIN)/mypy
	$(BIN)/pytest

bench: $(STAMP)
	for script in bench/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
