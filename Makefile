# The two commands of the README: `make run` and `make test`. Both bootstrap .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
WORKSPACE ?= .harness
# Two workers (pytest-xdist, in the test extra): most tests wait on subprocesses, servers and PostgreSQL, so two
# workers halve the wall time on the two-core machines CI runs on. `make test PYTEST_ARGS=` runs serially.
PYTEST_ARGS ?= -n 2

CHROMIUM ?= /usr/bin/chromium

.PHONY: run test bench venv clean browser

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The stamp is rebuilt when pyproject.toml changes, so a pull that adds a dependency reinstalls.
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@ $(VENV)/.installed-run

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	@touch $@ $(VENV)/.installed-test $(VENV)/.installed-run

venv: $(VENV)/.installed-test

run: $(VENV)/.installed-run
	$(BIN)/harness --workspace $(WORKSPACE) init >/dev/null
	$(BIN)/harness --workspace $(WORKSPACE) serve --http 127.0.0.1:8765

# The ledger view's tests drive Debian's Chromium (Playwright from the test extra, the system browser, no download).
# Installed here when missing and possible (root with apt); a no-op once it is there.
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "note: $(CHROMIUM) is missing (apt-get install chromium); the browser tests will skip" >&2; \
	  fi; \
	fi

test: $(VENV)/.installed-test browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
