# Every target sets up what it needs: a fresh clone runs `make demo` or `make test` directly.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS ?= docs
export NO_MKDOCS_2_WARNING := 1
# Python keeps each module's bytecode beside it (__pycache__), as it does by default: where the
# environment turns that off (PYTHONDONTWRITEBYTECODE), every run compiled the whole package again,
# half a second before the verifier read its first page.
unexport PYTHONDONTWRITEBYTECODE
# Mermaid is served from the site itself (no CDN): this pinned version from the npm registry.
MERMAID_VERSION := 11.17.2
MERMAID_STAMP := .cache/node/.mermaid-$(MERMAID_VERSION)
# The real LeanSpec CLI (npm, prebuilt binary `leanspec`), for the compatibility test.
LEANSPEC_VERSION := 0.3.0
LEANSPEC_STAMP := .cache/npm/.leanspec-$(LEANSPEC_VERSION)

.DEFAULT_GOAL := help
.PHONY: help setup mermaid leanspec browser bench-sync bench-long-jump bench-site bench-serve bench-evidence bench-pins fuzz demo demo-upstreams sync-upstream upstreams verify site serve test lint format bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	$(BIN)/python -m compileall -q generator
	@touch $@

setup: $(STAMP)  ## create .venv and install the project with pinned dependencies

$(MERMAID_STAMP):
	rm -rf .cache/node && mkdir -p .cache/node
	npm install --no-save --no-audit --no-fund --loglevel=error --prefix .cache/node mermaid@$(MERMAID_VERSION)
	@touch $@

mermaid: $(MERMAID_STAMP)  ## install the pinned Mermaid (npm) that the site serves

# Skipped (and the test skips with the reason) only when npm is absent.
$(LEANSPEC_STAMP):
	@if command -v npm >/dev/null; then \
	  rm -rf .cache/npm && mkdir -p .cache/npm && \
	  npm install --no-save --no-audit --no-fund --loglevel=error --prefix .cache/npm @leanspec/cli-linux-x64@$(LEANSPEC_VERSION) && \
	  chmod +x .cache/npm/node_modules/@leanspec/cli-linux-x64/leanspec && touch $@; \
	else echo "npm not found: the LeanSpec CLI compatibility test will be skipped"; fi

leanspec: $(LEANSPEC_STAMP)  ## install the pinned LeanSpec CLI (npm) into .cache/npm

# Chromium, and a CJK font so that screenshots of the Chinese pages show their text.
browser:  ## install Debian's Chromium for the browser tests (skipped when present)
	@{ test -x /usr/bin/chromium && test -e /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc; } || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-wqy-zenhei; }

demo-upstreams: $(STAMP)  ## build the demo upstreams (fixed SHAs) and clone them into the cache
	$(BIN)/python -m generator demo build
	$(BIN)/python -m generator upstreams fetch

sync-upstream: $(STAMP)  ## move every pin to its branch head and re-anchor the references
	$(BIN)/python -m generator sync $(SYNC_ARGS)

upstreams: $(STAMP)  ## clone or fetch every upstream in upstreams.yaml
	$(BIN)/python -m generator upstreams fetch

verify: $(STAMP)  ## check every code reference and link in docs/ (VERIFY_ARGS: more options)
	$(BIN)/python scripts/verify_code_refs.py $(DOCS) $(VERIFY_ARGS)

site: $(STAMP) $(MERMAID_STAMP)  ## verify and build the site into site/ (fails on any finding)
	$(BIN)/mkdocs build --strict

serve: $(STAMP) $(MERMAID_STAMP)  ## serve the site on http://127.0.0.1:8000
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

demo: demo-upstreams $(MERMAID_STAMP)  ## set up, build the demo upstreams, verify the demo pages, build the site
	$(BIN)/python scripts/verify_code_refs.py $(DOCS)
	$(BIN)/mkdocs build --strict --quiet
	@echo
	@echo "Demo verified and built into site/. Browse it with: make serve"

lint: $(STAMP)  ## ruff lint and format check, and the import layers of generator/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

format: $(STAMP)  ## apply ruff's formatting and fixes
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: $(STAMP) $(MERMAID_STAMP) $(LEANSPEC_STAMP) browser  ## set up and run the linters and the whole test suite
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)  ## time the verifier on 2,000 generated pages (50,000 refs)
	$(BIN)/python scripts/bench_verify.py

bench-pins: $(STAMP)  ## time the verifier on 300 pages, each pinned to its own commit
	$(BIN)/python scripts/bench_verify.py --shape pin-per-page

bench-evidence: $(STAMP)  ## evidence on a drift corpus: detection, --fix, pin suggest, its cost
	$(BIN)/python scripts/bench_evidence.py
	$(BIN)/python scripts/bench_verify.py --quotes --runs 5

fuzz: $(STAMP)  ## hostile pages (4 x 500) through verify, ingest and the site; GitHub faults
	$(BIN)/python scripts/fuzz.py --batches 4 --pages 500
	$(BIN)/python scripts/fuzz_github.py

bench-sync: $(STAMP)  ## sync 20,000 refs across a generated 200-commit history vs ground truth
	$(BIN)/python scripts/bench_sync.py

bench-long-jump: $(STAMP)  ## sync 20,000 refs across 1,000 commits of a 3,000-file upstream
	$(BIN)/python scripts/bench_sync.py --long-jump

bench-site: $(STAMP) $(MERMAID_STAMP)  ## time the site build with and without the plugin
	$(BIN)/python scripts/bench_site.py

bench-serve: $(STAMP) $(MERMAID_STAMP)  ## mkdocs serve's rebuild after an edit, with and without the plugin
	$(BIN)/python scripts/bench_serve.py

clean:  ## remove the virtualenv, caches and the built site
	rm -rf $(VENV) .cache site .pytest_cache .ruff_cache
