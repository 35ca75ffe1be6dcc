# Chimera — every entry point for people and CI. `make help` lists the targets.
# Two commands set up a fresh machine (Node 20.19+ and npm only):
#   make serve   install, build, run `chimera otter serve` on 127.0.0.1:5173 (offline model;
#                `make serve PORT=8080 HOST=0.0.0.0` elsewhere)
#   make test    install, then every check and the whole suite on Node 20 and Node 24
.DEFAULT_GOAL := help
SHELL := /bin/bash
NODE24_VERSION := 24.21.0
NODE24_DIR := .tmp/node24
NODE24 := $(NODE24_DIR)/node_modules/node/bin/node
TSX := node_modules/.bin/tsx
VITEST := node_modules/vitest/vitest.mjs

.PHONY: help install system-deps build generate check-generated specs-refresh lint-specs typecheck \
        test test-node20 test-node24 test-deps serve bench clean

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

node_modules/.install-stamp: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.install-stamp system-deps ## install dependencies (npm ci, install scripts limited by allowScripts; bubblewrap where possible)

system-deps: ## install bubblewrap (the Bash sandbox; required by the confined modes) when missing and apt-get is usable as root
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 || echo "note: could not install bubblewrap; Bash is refused in the read-only and workspace-write sandboxes (or start with --allow-unconfined)"; \
	  else echo "note: bubblewrap (bwrap) is not installed; Bash is refused in the read-only and workspace-write sandboxes (install the bubblewrap package, or start with --allow-unconfined)"; fi; }

test-deps: ## install chromium (the /ui browser test) when missing and apt-get is usable as root
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 || echo "note: could not install chromium; the /ui browser test fails without it (or set CHIMERA_CHROMIUM)"; \
	  else echo "note: chromium is not installed; the /ui browser test needs it (install Debian's chromium package, or set CHIMERA_CHROMIUM)"; fi; }

dist/chimera.mjs: node_modules/.install-stamp $(shell find server generated client -name '*.ts' -o -name '*.json' -o -name '*.html' -o -name '*.css' -o -name '*.svg' 2>/dev/null) package.json scripts/build.mjs
	node scripts/build.mjs

build: dist/chimera.mjs ## bundle the CLI into dist/ (esbuild)

generate: install ## specs/ -> generated/ (offline, deterministic)
	$(TSX) specs/codegen/generate.ts

check-generated: install ## fail if generated/ differs from what specs/ generate
	$(TSX) specs/codegen/generate.ts --check

specs-refresh: install ## re-vendor the ACP v1 schema from @agentclientprotocol/sdk and re-assemble its OpenRPC
	$(TSX) specs/codegen/refresh-acp.ts

lint-specs: install ## validate every spec with its ecosystem's validator
	$(TSX) specs/codegen/validate.ts

typecheck: install ## tsc --noEmit over specs/codegen, generated, server, client, conformance
	node_modules/.bin/tsc -p tsconfig.json

$(NODE24):
	npm install --prefix $(NODE24_DIR) --no-save --no-package-lock --no-audit --no-fund node@$(NODE24_VERSION)

test-node20: install test-deps build ## the whole suite on this machine's Node
	node $(VITEST) run

test-node24: install test-deps build $(NODE24) ## the whole suite on Node 24 LTS (npm package `node`)
	$(NODE24) $(VITEST) run

test: install test-deps build check-generated lint-specs typecheck $(NODE24) ## every check, then the suite on Node 20 and Node 24
	node scripts/test-matrix.mjs node $(NODE24)

# `make serve PORT=8080 HOST=0.0.0.0`: taken from make's command line only (shells export HOST as
# the machine's name, which would turn a loopback server into a LAN one).
cli_var = $(if $(filter command line,$(origin $(1))),$($(1)),$(2))

serve: install build ## run `chimera otter serve` with the offline model on HOST:PORT (default 127.0.0.1:5173: make serve PORT=8080 HOST=0.0.0.0)
	node bin/chimera.mjs otter serve --port $(call cli_var,PORT,5173) --host $(call cli_var,HOST,127.0.0.1)

bench: install build ## print the figures of bench/ (start-up, run rollups, tool patterns, ACP, LSP calls)
	node bench/cold-start.mjs
	$(TSX) bench/runs-rollup.ts
	$(TSX) bench/acp-startup.ts
	$(TSX) bench/acp-encoder.ts
	$(TSX) bench/acp-rss.ts
	$(TSX) bench/tool-patterns.ts
	$(TSX) bench/http-health.ts
	$(TSX) bench/http-sse.ts
	$(TSX) bench/lsp-calls.ts

clean: ## remove build output and caches (keeps node_modules)
	rm -rf dist .tmp
