# mobmem: the two quick-start targets (see README).
#   make demo   — set up (venv + build) and run the main job
#   make test   — set up and run the whole test suite (Rust and Python)
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup bench clean test-tools

$(STAMP): pyproject.toml Cargo.toml $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first"; exit 1; }
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "installing mobmem into $(VENV): its Python packages, then a release build of the Rust core (a few minutes on two cores; the whole log in $(VENV)/install.log)"
	@# pip -v passes cargo's output through; only the packages collected and the crates compiled are shown
	@set -o pipefail; $(PY) -m pip install -v -e '.[test]' 2>&1 | tee $(VENV)/install.log | { grep --line-buffered -E '^Collecting | +(Compiling|Finished) ' || true; } \
	  || { echo "installing mobmem failed; the end of $(VENV)/install.log:"; tail -n 40 $(VENV)/install.log; exit 1; }
	@# Ray (for --executor ray) where it installs; its tests are skipped with a message elsewhere
	@echo "installing Ray for --executor ray (optional)"
	@$(PY) -m pip install --quiet 'ray[client]>=2.9' || echo "Ray is not installable here: --executor ray and its tests are unavailable"
	@touch $(STAMP)

# Tools some tests use when present (a headless Chromium for the HTML report, hyperfine for its
# export format): installed from the distribution where this runs as root with apt, else skipped.
TEST_TOOLS := chromium hyperfine
test-tools:
	@for t in $(TEST_TOOLS); do command -v $$t >/dev/null && continue; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get install -y -q $$t >/dev/null 2>&1 || echo "could not install $$t: its tests will be skipped"; \
	  else echo "$$t is not installed: its tests will be skipped"; fi; done

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mobmem demo

test: $(STAMP) lint test-tools
	@echo "building and running the Rust tests (the first build takes a few minutes)"
	cargo test --workspace --quiet
	@# one worker per core; a file's tests stay on one worker (module fixtures run once, e.g. the shipped scenarios)
	$(PY) -m pytest -q -n auto --dist loadfile tests/python

# Formatting and lints (part of `make test`): rustfmt, clippy with warnings as errors, ruff.
lint: $(STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests/python
	$(VENV)/bin/ruff format --check python tests/python

bench: $(STAMP)
	$(VENV)/bin/mobmem bench kernel

clean:
	rm -rf $(VENV) target
