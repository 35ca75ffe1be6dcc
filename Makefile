# Chimera — every entry point for people and CI. `make help` lists the targets.
# Two commands set up a fresh machine (Node 20.19+ and npm only):
#   make serve   the serving install (build, then prune), run `chimera otter serve` on 127.0.0.1:5173 (offline model;
#                `make serve PORT=8080 HOST=0.0.0.0` elsewhere)
#   make test    the full toolchain, then every check, the packages' check and the whole suite on Node 20 and 24
# The serving install (build with the server workspace's tools, then keep in node_modules only what
# the built server loads at run time) is kept apart from the toolchain (`npm ci`: tests, codegen,
# spec validators, type declarations). docs/decisions/0425-build-then-prune.md
.DEFAULT_GOAL := help
# A failed build leaves no target behind (dist/chimera.mjs is written before the console bundle).
.DELETE_ON_ERROR:
SHELL := /bin/bash
NODE24_VERSION := 24.21.0
NODE24_DIR := .tmp/node24
NODE24 := $(NODE24_DIR)/node_modules/node/bin/node
TSX := node_modules/.bin/tsx
VITEST := node_modules/vitest/vitest.mjs
# The API reference renderers: installed on demand by `make docs` only (not by `make install`),
# pinned, with install scripts off (@asyncapi/cli's postinstall edits ~/.bashrc). docs/reference.md
ASYNCAPI_CLI_VERSION := 4.1.1
ASYNCAPI_TEMPLATE_VERSION := 3.5.6
REDOCLY_CLI_VERSION := 2.77.0
DOCS_NPM := npm install --no-save --no-package-lock --no-audit --no-fund --ignore-scripts

.PHONY: help install install-dev system-deps build check-packages generate check-generated specs-refresh lint-specs typecheck \
        test test-node20 test-node24 test-deps serve bench clean lint format docs docs-tools check-docs

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

WORKSPACE_MANIFESTS := package.json package-lock.json client/package.json conformance/package.json server/package.json

# What the build needs: the server workspace's build tools and the libraries it bundles (its
# devDependencies, `npm ci -w server`), or the full toolchain when that is installed.
node_modules/.build-stamp: $(WORKSPACE_MANIFESTS)
	@[ ! -f node_modules/.install-stamp ] || $(MAKE) --no-print-directory node_modules/.install-stamp
	@[ -f node_modules/.install-stamp ] || npm ci -w server --no-audit --no-fund
	@touch $@

# The serving install: built, then node_modules pruned to what the build loads at run time (ripgrep,
# the language servers; scripts/prune-serve.mjs). The full toolchain is never pruned. A later
# build (changed sources) installs the build tools again, and the next `make install` prunes again.
# ($(MAKE) on lines of its own: `make -n` runs such lines, and must not install or prune.)
node_modules/.serve-stamp: dist/chimera.mjs
	@[ -f node_modules/.install-stamp ] || $(MAKE) -s --no-print-directory node_modules/.build-stamp
	@[ -f node_modules/.install-stamp ] || { node scripts/prune-serve.mjs && rm -f node_modules/.build-stamp; }
	@touch $@

node_modules/.install-stamp: $(WORKSPACE_MANIFESTS)
	npm ci --no-audit --no-fund
	@touch $@ node_modules/.build-stamp

install: node_modules/.serve-stamp system-deps ## the serving install: build, then keep only what serving loads (ripgrep, the language servers); bubblewrap where possible

install-dev: node_modules/.install-stamp system-deps ## the full toolchain (npm ci: tests, codegen, spec validators, declarations)

system-deps: ## install bubblewrap (the Bash sandbox; required by the confined modes) when missing and apt-get is usable as root
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 || echo "note: could not install bubblewrap; Bash is refused in the read-only and workspace-write sandboxes (or start with --allow-unconfined)"; \
	  else echo "note: bubblewrap (bwrap) is not installed; Bash is refused in the read-only and workspace-write sandboxes (install the bubblewrap package, or start with --allow-unconfined)"; fi; }

test-deps: ## install chromium (the /ui browser test) and redis-server (the Redis store's tests) when missing and apt-get is usable as root
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 || echo "note: could not install chromium; the /ui browser test fails without it (or set CHIMERA_CHROMIUM)"; \
	  else echo "note: chromium is not installed; the /ui browser test needs it (install Debian's chromium package, or set CHIMERA_CHROMIUM)"; fi; }
	@# The package's service is never started (no init in CI; policy-rc.d may forbid it): each test starts its own.
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server) >/dev/null 2>&1 || echo "note: could not install redis-server; the Redis store's tests fail without it (or set CHIMERA_REDIS_SERVER)"; \
	  else echo "note: redis-server is not installed; the Redis store's tests need it (install Debian's redis-server package, or set CHIMERA_REDIS_SERVER)"; fi; }

dist/chimera.mjs: $(shell find server generated client conformance -path '*/dist' -prune -o \( -name '*.ts' -o -name '*.json' -o -name '*.html' -o -name '*.css' -o -name '*.svg' \) -print 2>/dev/null) $(WORKSPACE_MANIFESTS) scripts/build.mjs scripts/bundles.mjs scripts/build-package.mjs
	@$(MAKE) --no-print-directory node_modules/.build-stamp
	node scripts/build.mjs

build: dist/chimera.mjs ## bundle the CLI, kit, client and /ui into dist/ and the packages' dist/ (esbuild)

check-packages: install-dev ## pack the three packages, install the tarballs into temporary projects and check them as users get them
	node scripts/check-packages.mjs

generate: install-dev ## specs/ -> generated/ (offline, deterministic)
	$(TSX) specs/codegen/generate.ts

check-generated: install-dev ## fail if generated/ differs from what specs/ generate
	$(TSX) specs/codegen/generate.ts --check

check-docs: install-dev ## fail if docs/reference/ is stale against specs/ or edited by hand (needs no renderer)
	$(TSX) scripts/docs-reference/build.ts --check

.tmp/asyncapi-cli/.v$(ASYNCAPI_CLI_VERSION):
	rm -rf .tmp/asyncapi-cli && $(DOCS_NPM) --prefix .tmp/asyncapi-cli @asyncapi/cli@$(ASYNCAPI_CLI_VERSION)
	@touch $@

.tmp/asyncapi-template/.v$(ASYNCAPI_TEMPLATE_VERSION):
	rm -rf .tmp/asyncapi-template && $(DOCS_NPM) --prefix .tmp/asyncapi-template @asyncapi/html-template@$(ASYNCAPI_TEMPLATE_VERSION)
	@touch $@

.tmp/redocly-cli/.v$(REDOCLY_CLI_VERSION):
	rm -rf .tmp/redocly-cli && $(DOCS_NPM) --prefix .tmp/redocly-cli @redocly/cli@$(REDOCLY_CLI_VERSION)
	@touch $@

docs-tools: .tmp/asyncapi-cli/.v$(ASYNCAPI_CLI_VERSION) .tmp/asyncapi-template/.v$(ASYNCAPI_TEMPLATE_VERSION) .tmp/redocly-cli/.v$(REDOCLY_CLI_VERSION) ## install the reference renderers into .tmp/ (on demand; ~1.7 GB; install scripts off)

docs: install-dev docs-tools ## render docs/reference/ (served at /docs) from specs/: AsyncAPI, OpenAPI (Redocly), OpenRPC
	$(TSX) scripts/docs-reference/build.ts

specs-refresh: install-dev ## re-vendor the ACP v1 schema from @agentclientprotocol/sdk and re-assemble its OpenRPC
	$(TSX) specs/codegen/refresh-acp.ts

lint-specs: install-dev ## validate every spec with its ecosystem's validator
	$(TSX) specs/codegen/validate.ts

typecheck: install-dev ## tsc --noEmit over specs/codegen, generated, server, client, conformance
	node_modules/.bin/tsc -p tsconfig.json

lint: install-dev ## the formatter's check (prettier) and the type-aware linter (typescript-eslint)
	node_modules/.bin/prettier --check --log-level warn .
	node_modules/.bin/eslint --max-warnings 0 .

format: install-dev ## rewrite sources in the house format (prettier), then apply the linter's safe fixes
	node_modules/.bin/prettier --write --log-level warn .
	node_modules/.bin/eslint --fix .

$(NODE24):
	npm install --prefix $(NODE24_DIR) --no-save --no-package-lock --no-audit --no-fund node@$(NODE24_VERSION)

test-node20: install-dev test-deps build ## the whole suite on this machine's Node
	node $(VITEST) run

test-node24: install-dev test-deps build $(NODE24) ## the whole suite on Node 24 LTS (npm package `node`)
	$(NODE24) $(VITEST) run

test: install-dev test-deps build check-generated check-docs lint-specs typecheck lint check-packages $(NODE24) ## every check (specs, reference pages, types, format, lint), the packages' check, then the suite on Node 20 and Node 24
	node scripts/test-matrix.mjs node $(NODE24)

# `make serve PORT=8080 HOST=0.0.0.0`: taken from make's command line only (shells export HOST as
# the machine's name, which would turn a loopback server into a LAN one).
cli_var = $(if $(filter command line,$(origin $(1))),$($(1)),$(2))

serve: install ## run `chimera otter serve` with the offline model on HOST:PORT (default 127.0.0.1:5173: make serve PORT=8080 HOST=0.0.0.0)
	node bin/chimera.mjs otter serve --port $(call cli_var,PORT,5173) --host $(call cli_var,HOST,127.0.0.1)

bench: install-dev build $(NODE24) ## print the figures of bench/ (start-up phases on Node 20 and 24, run rollups, tool patterns, ACP, LSP calls, event log, Redis store, three instances)
	$(TSX) bench/startup-profile.ts
	node bench/cold-start.mjs
	$(TSX) bench/runs-rollup.ts
	$(TSX) bench/acp-startup.ts
	$(TSX) bench/acp-encoder.ts
	$(TSX) bench/acp-rss.ts
	$(TSX) bench/tool-patterns.ts
	$(TSX) bench/http-health.ts
	$(TSX) bench/http-sse.ts
	$(TSX) bench/store-redis.ts
	$(TSX) bench/scale-out.ts
	$(TSX) bench/lsp-calls.ts
	$(TSX) bench/events.ts
	$(TSX) bench/acp-remote.ts

clean: ## remove build output and caches (keeps node_modules)
	rm -rf dist client/dist conformance/dist server/dist .tmp
