# mobmem: the two quick-start targets (see README).
#   make demo   — set up (venv + build) and run the main job
#   make test   — set up and run the whole test suite (Rust and Python)
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test setup bench clean

$(STAMP): pyproject.toml Cargo.toml $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first"; exit 1; }
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mobmem demo

test: $(STAMP)
	cargo test --workspace --quiet
	$(PY) -m pytest -q tests/python

bench: $(STAMP)
	$(VENV)/bin/mobmem bench kernel

clean:
	rm -rf $(VENV) target
