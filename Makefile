# mobmem: the two quick-start targets (see README).
#   make demo   — set up (venv + build) and run the main job
#   make test   — set up and run the whole test suite (Rust and Python)
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup bench clean

$(STAMP): pyproject.toml Cargo.toml $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first"; exit 1; }
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mobmem demo

test: $(STAMP) lint
	cargo test --workspace --quiet
	$(PY) -m pytest -q tests/python

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
