# memd: `make serve` runs the daemon in the foreground, `make test` runs every check.
# Both create .venv on first use and reinstall only when a pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: serve test bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml client/pyproject.toml
	$(BIN)/python -m pip install --quiet -e ./client[async] -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ./client[async] -e .[test]
	touch $@

serve: $(VENV)/.installed
	$(BIN)/memd serve

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
