SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules

GO_MODULES := api backend tools tui
GO_PACKAGES := $(addprefix ./,$(addsuffix /...,$(GO_MODULES)))
BIN := bin
NODE_STAMP := node_modules/.package-lock.json
PORT ?= 7420
OFFLINE_PORT ?= 7421
DEMO_DIR ?= .demo
BUF := node_modules/.bin/buf

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-15s\033[0m %s\n", $$1, $$2}'

$(NODE_STAMP): package.json package-lock.json web/package.json
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: $(NODE_STAMP) ## Install the npm packages (buf, protoc-gen-es, the web toolchain)

# The OpenAPI description of the JSON routes, generated from the route
# table and the protos (with their comments) by openapigen.
OPENAPI := backend/internal/server/openapi.json
OPENAPIGEN := go run ./backend/internal/server/openapigen

.PHONY: generate
generate: $(NODE_STAMP) ## Regenerate Go and TypeScript code and openapi.json from api/
	rm -rf api/gen web/src/gen
	$(BUF) generate
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BUF) build -o "$$tmp/api.binpb"; \
	$(OPENAPIGEN) -descriptors "$$tmp/api.binpb" -o $(OPENAPI)

.PHONY: checkgenerate
checkgenerate: $(NODE_STAMP) ## Fail when the committed generated code is stale
	$(BUF) lint
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BUF) generate -o "$$tmp"; \
	$(BUF) build -o "$$tmp/api.binpb"; \
	$(OPENAPIGEN) -descriptors "$$tmp/api.binpb" -o "$$tmp/openapi.json"; \
	diff -r api/gen "$$tmp/api/gen" && diff -r web/src/gen "$$tmp/web/src/gen" && diff $(OPENAPI) "$$tmp/openapi.json" \
	  || { echo "generated code is stale: run 'make generate' and commit" >&2; exit 1; }

.PHONY: breaking
breaking: $(NODE_STAMP) ## Check api/ for breaking changes against main
	$(BUF) breaking --against '.git#branch=main'

# The agents binary embeds the web app from WEBUI_DIST, where the build
# copies web/dist; only its .gitignore is committed, so a fresh clone
# compiles (and serves a page saying how to build the app).
WEBUI_DIST := backend/internal/webui/dist

# The agents binary is built without cgo (Go's own DNS resolver and user
# lookup: no libc and dynamic loader to map at every start), without
# build paths, and without the symbol table and DWARF (-s -w: a third of
# the file; stack traces and profiles read the function table, which
# stays). It starts about 1 ms sooner and idles 1.5 MB smaller; see
# BENCHMARKS.md, "Start-up and idle memory". AGENTS_LDFLAGS adds -ldflags.
AGENTS_LDFLAGS ?=
GO_BUILD_AGENTS = CGO_ENABLED=0 go build -trimpath -ldflags '-s -w $(AGENTS_LDFLAGS)'

.PHONY: build
build: $(NODE_STAMP) ## Build the web app, the agents binary (with the app inside) and the offline model
	npm run --workspace web build
	find $(WEBUI_DIST) -mindepth 1 ! -name .gitignore -delete
	cp -R web/dist/. $(WEBUI_DIST)/
	mkdir -p $(BIN)
	$(GO_BUILD_AGENTS) -o $(BIN)/agents ./backend/cmd/agents
	go build -o $(BIN)/fakellm ./tools/cmd/fakellm

# make run AGENTS_CONFIG=path/to/agents.json RULES=path/to/offline-rules.json
# serves your own agents (the config's agent files) and scripts the
# offline model with your own rules; the defaults are the examples.
AGENTS_CONFIG ?=
RULES ?= examples/offline-rules.json

.PHONY: run
run: build ## Build, then serve the example agents and the web app on http://127.0.0.1:7420/, demo data and logs in .demo/ (PORT=, DEMO_DIR=, AGENTS_CONFIG=, RULES=)
	PORT=$(PORT) OFFLINE_PORT=$(OFFLINE_PORT) DEMO_DIR=$(DEMO_DIR) BIN=$(BIN) AGENTS_CONFIG=$(AGENTS_CONFIG) RULES=$(RULES) tools/run-example.sh

# make test is every check and the unit and integration tests; the race
# detector's run (race) and the suites that run the real binary as child
# processes (e2e, webe2e), the slowest, take their own targets, and
# testall (what .ci/run runs) is all of them.
.PHONY: test
test: checkgenerate fmtcheck vet gotest webtest ## Run every check and the unit and integration tests (the race detector: make race; the black-box suites: make e2e webe2e)

.PHONY: testall
testall: test race e2e webe2e ## Run every check and test: make test, the race detector, the black-box suites (CI)

.PHONY: fmtcheck
fmtcheck: ## Fail when Go code is not gofmt-formatted
	@unformatted=$$(gofmt -l $(GO_MODULES)); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

.PHONY: vet
vet: ## go vet every module
	go vet $(GO_PACKAGES)

# make test runs every package without the race detector; make race runs
# the packages whose own code shares state between goroutines under it:
# the kernel, the event hub and its SSE framing, the committer, the
# stores, the cluster's bus and sequencer, the server, the client's
# reconnecting subscription, the tool runners' process reaper and MCP
# pool, the webhooks' dispatcher. The detector triples their time (and its first build of the
# standard library is minutes on a cold machine), so it has a target of
# its own that testall, and CI, run after make test. The black-box suite
# has its own too: e2e.
RACE_PACKAGES := ./api/client/... ./backend/internal/bashtool/... ./backend/internal/cluster/... \
  ./backend/internal/committer/... ./backend/internal/events/... ./backend/internal/mcptools/... \
  ./backend/internal/runner/... ./backend/internal/server/... ./backend/internal/store/... \
  ./backend/internal/webhooks/...
E2E_PACKAGES := ./backend/cmd/agents/...
# Of the black-box suite, the several-server tests (two and three agents
# serve processes on one PostgreSQL database) run in make test too: they
# take seconds, and they are what says the scale-out deployment works.
CLUSTER_TESTS := ^TestCluster

.PHONY: gotest
gotest: ## go test every module but the black-box suite (make e2e, of which the several-server tests run here), without the race detector (make race)
	go test -count=1 $$(go list $(GO_PACKAGES) | grep -vxFf <(go list $(E2E_PACKAGES)))
	go test -count=1 -run '$(CLUSTER_TESTS)' $(E2E_PACKAGES)

.PHONY: race
race: ## go test -race the packages whose goroutines share state (RACE_PACKAGES)
	go test -race -count=1 $(RACE_PACKAGES)

# The black-box suite (backend/cmd/agents) builds the binary and runs it
# as child processes: crashes and restarts on SQLite and PostgreSQL,
# several servers on one PostgreSQL database (in make test), the TUI in
# tmux, agents mcp, and the README's quick start against make run's
# script (readme_test.go).
.PHONY: e2e
e2e: ## Run the black-box tests: the real binary as child processes, on SQLite and PostgreSQL, and the TUI in tmux
	go test -count=1 -skip '$(CLUSTER_TESTS)' $(E2E_PACKAGES)

.PHONY: webtest
webtest: $(NODE_STAMP) ## Type-check and unit-test the web app
	npm run --workspace web typecheck
	npm run --workspace web test

# The browser tests (web/e2e): bin/agents and bin/fakellm against Debian's
# Chromium; skipped with a message when /usr/bin/chromium is missing.
.PHONY: webe2e
webe2e: build ## Build, then run the web app's end-to-end tests in Chromium (web/e2e)
	npm exec --workspace web -- vitest run --config vitest.e2e.config.ts

# The kernel benchmark (BENCHMARKS.md): steps per second and the server's
# own time per step, for 1 and 64 concurrent sessions, on SQLite and on
# PostgreSQL.
KERNEL_BENCH := ^BenchmarkSteps(Postgres)?$$
KERNEL_PKG := ./backend/internal/runner/

.PHONY: bench
bench: bench-kernel bench-load ## Run every benchmark: the kernel's, the load over HTTP, then the rest
	@echo '== other benchmarks'
	go test -run '^$$' -bench . -skip '$(KERNEL_BENCH)' -benchmem $(GO_PACKAGES)

.PHONY: bench-kernel
bench-kernel: ## Run the kernel benchmark on SQLite and PostgreSQL: steps/s, server time per step (BENCHMARKS.md)
	@echo '== kernel: steps/s and server overhead per step, offline model, no delay (see BENCHMARKS.md)'
	go test -run '^$$' -bench '$(KERNEL_BENCH)' -benchmem $(KERNEL_PKG)

# The load over HTTP (BENCHMARKS.md): tools/cmd/loadgen drives bin/agents
# against the offline model. LOADGEN_FLAGS=-quick runs small sizes in
# about a minute; see `go run ./tools/cmd/loadgen -h`.
LOADGEN_FLAGS ?=

.PHONY: bench-load
bench-load: ## Run the load tool against bin/agents over HTTP (BENCHMARKS.md; LOADGEN_FLAGS=-quick)
	@echo '== load over HTTP: prompts, SSE fan-out, GetSession, stored sessions, start-up, idle memory, one and two servers on PostgreSQL (see BENCHMARKS.md)'
	mkdir -p $(BIN)
	$(GO_BUILD_AGENTS) -o $(BIN)/agents ./backend/cmd/agents
	go build -o $(BIN)/loadgen ./tools/cmd/loadgen
	$(BIN)/loadgen -agents-bin $(BIN)/agents $(LOADGEN_FLAGS)

# make bench-compare BASE=<rev> builds the base revision as make build
# does (into bin/rev-<commit>/, once) and runs it and the working tree
# (or REV=<rev>) in turns on the same offline model: the prompts rows (CONCURRENCY=1,16,
# REPEAT=3) and start-up, each figure with its ratio to the base. Every
# performance change in BENCHMARKS.md is reported this way.
BASE ?=
REV ?=

.PHONY: bench-compare
bench-compare: ## Compare the working tree with a base revision, side by side on one machine (BASE=<rev>; BENCHMARKS.md)
	BASE=$(BASE) REV=$(REV) BIN=$(BIN) tools/bench-compare.sh

.PHONY: lint
lint: $(NODE_STAMP) fmtcheck vet ## buf lint, gofmt, go vet, tsc
	$(BUF) lint
	npm run --workspace web typecheck

# make install: the agents binary, its systemd unit and its system user.
# PREFIX=/usr installs for the distribution's paths; DESTDIR stages a
# package. See docs/service.md.
PREFIX ?= /usr/local
DESTDIR ?=
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# The web app as the binary embeds it, built when it is missing or older
# than its sources: make install builds it first, so the installed
# binary serves the app rather than the page saying how to build it, and
# after a make build as yourself, sudo make install builds nothing as root.
WEB_SOURCES := $(shell find web/src -type f 2>/dev/null) web/index.html web/package.json web/vite.config.ts web/tsconfig.json

$(WEBUI_DIST)/index.html: $(NODE_STAMP) $(WEB_SOURCES)
	npm run --workspace web build
	find $(WEBUI_DIST) -mindepth 1 ! -name .gitignore -delete
	cp -R web/dist/. $(WEBUI_DIST)/

.PHONY: install
install: AGENTS_LDFLAGS += -X github.com/agents-os/agents/backend/internal/cli.Version=$(VERSION)
install: $(WEBUI_DIST)/index.html ## Build the web app if needed, then install the agents binary (app inside), systemd unit and sysusers file (PREFIX=/usr/local, DESTDIR=)
	mkdir -p $(BIN)
	$(GO_BUILD_AGENTS) -o $(BIN)/agents ./backend/cmd/agents
	install -D -m 0755 $(BIN)/agents $(DESTDIR)$(PREFIX)/bin/agents
	sed 's|@BINDIR@|$(PREFIX)/bin|g' packaging/systemd/agents.service > $(BIN)/agents.service
	install -D -m 0644 $(BIN)/agents.service $(DESTDIR)$(PREFIX)/lib/systemd/system/agents.service
	install -D -m 0644 packaging/systemd/agents.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/agents.conf

.PHONY: clean
clean: ## Remove build outputs
	rm -rf $(BIN) web/dist web/e2e/output
	find $(WEBUI_DIST) -mindepth 1 ! -name .gitignore -delete
