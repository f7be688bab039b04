# Every target sets up what it needs: a fresh clone runs `make demo` or `make test` directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS ?= docs
export NO_MKDOCS_2_WARNING := 1

.DEFAULT_GOAL := help
.PHONY: help setup demo demo-upstreams sync-upstream upstreams verify site serve test lint format bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	@touch $@

setup: $(STAMP)  ## create .venv and install the project with pinned dependencies

demo-upstreams: $(STAMP)  ## build the demo upstreams (fixed SHAs) and clone them into the cache
	$(BIN)/python -m generator demo build
	$(BIN)/python -m generator upstreams fetch

sync-upstream: $(STAMP)  ## move every pin to its branch head and re-anchor the references
	$(BIN)/python -m generator sync $(SYNC_ARGS)

upstreams: $(STAMP)  ## clone or fetch every upstream in upstreams.yaml
	$(BIN)/python -m generator upstreams fetch

verify: $(STAMP)  ## check every code reference and link in docs/
	$(BIN)/python scripts/verify_code_refs.py $(DOCS)

site: $(STAMP)  ## build the site into site/ (fails on any warning)
	$(BIN)/mkdocs build --strict

serve: $(STAMP)  ## serve the site on http://127.0.0.1:8000
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

demo: demo-upstreams  ## set up, build the demo upstreams, verify the demo pages, build the site
	$(BIN)/python scripts/verify_code_refs.py $(DOCS)
	$(BIN)/mkdocs build --strict --quiet
	@echo
	@echo "Demo verified and built into site/. Browse it with: make serve"

lint: $(STAMP)  ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)  ## apply ruff's formatting and fixes
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: $(STAMP)  ## set up and run the linters and the whole test suite
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)  ## run the benchmarks and print their figures
	$(BIN)/python scripts/bench_verify.py

clean:  ## remove the virtualenv, caches and the built site
	rm -rf $(VENV) .cache site .pytest_cache .ruff_cache
