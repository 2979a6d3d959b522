# RouteKit — the README's two commands are `make demo` and `make test`.
SWIFT ?= swift
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

# Where `make install` puts routekit ($(DESTDIR)$(PREFIX)/bin/routekit) and `make install-systemd` the unit.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: api demo test test-postgres test-server test-client test-tsan docs deps build release install install-systemd \
	serve verify-systemd lint format fuzz fuzz-smoke bench clean

deps:
	@scripts/install-deps.sh

## The main job: import sample-routes/ into the default SQLite store, list it, export a route, smooth every route,
## show the change feed, re-import (unchanged).
demo: deps
	@scripts/demo.sh

## Runs every test from one build (--traits Postgres,Server,Client in .build-full; scripts/test-all.sh). Corpus tests read
## ../shared/gpx-corpus when it exists. With $$ROUTEKIT_TEST_POSTGRES set (CI sets it), the PostgreSQL suites run
## too; without it they skip, saying so (`make test-postgres` starts a throwaway cluster for them).
test: deps
	SWIFT=$(SWIFT) scripts/test-all.sh

## The PostgreSQL suites (built with --traits Postgres), against $$ROUTEKIT_TEST_POSTGRES or a throwaway cluster.
test-postgres: deps
	SWIFT=$(SWIFT) scripts/test-postgres.sh

## The HTTP service's suites (built with --traits Postgres,Server,Client in .build-full): router, live-server and CLI tests.
test-server: deps
	SWIFT=$(SWIFT) scripts/test-server.sh

## The Swift client's suites (RouteKitClient, --traits Postgres,Server,Client in .build-client): the client against a
## live `routekit serve`, its demo killed and resumed (scripts/test-client.sh; ROUTEKIT_DOCS=1 builds the docs too).
test-client: deps
	SWIFT=$(SWIFT) scripts/test-client.sh

## The suites of code that runs on several threads (store, feed, import, pipeline, `import --jobs`, `smooth`,
## `changes --follow`, the HTTP service) under the thread sanitizer (a separate build with
## --traits Server in .build-tsan).
test-tsan: deps
	SWIFT=$(SWIFT) scripts/test-tsan.sh

## The public API listing (api/): `make api` rewrites it from a --traits Postgres,Server,Client build; CI checks it.
api: deps
	SWIFT=$(SWIFT) scripts/build-full.sh
	scripts/public-api.sh update

## The DocC documentation of every library module (on the --traits Postgres,Server,Client build of `make test`, .build-full):
## fails on any docc warning, and when a ```swift block of a catalog is not a test's snippet region.
docs: deps
	SWIFT=$(SWIFT) scripts/docs.sh

build: deps
	$(SWIFT) build

## A release routekit in .build/release (what the benchmarks run), with the HTTP service (--traits Server) so that its
## `serve` and `tokens` work; `make install` builds one with every trait.
release: deps
	$(SWIFT) build -c release --traits Server --product routekit

## A release routekit with every trait (--traits Postgres,Server: the HTTP service and the PostgreSQL store), built in
## .build-install and installed as $(DESTDIR)$(PREFIX)/bin/routekit (sudo only for the copy, when PREFIX is not
## yours; PREFIX=$$HOME/.local needs none). scripts/install.sh.
install: deps
	SWIFT=$(SWIFT) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh binary

## The systemd unit (deploy/routekit.service, ExecStart in $(PREFIX)/bin) to $(DESTDIR)$(PREFIX)/lib/systemd/system and
## its user (deploy/routekit.sysusers) to $(DESTDIR)$(PREFIX)/lib/sysusers.d; prints the commands that enable it.
install-systemd:
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install.sh systemd

## Builds as `make install` does, makes a store and a read/write token in .serve/ (once), prints the web view's
## address and the token, and runs `routekit serve` until Ctrl-C. ARGS passes options: make serve ARGS='--port 9000'.
serve: deps
	SWIFT=$(SWIFT) scripts/serve.sh $(ARGS)

## `systemd-analyze verify` on deploy/routekit.service (CI; skipped where systemd-analyze is missing).
verify-systemd:
	scripts/verify-systemd-unit.sh

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

format:
	$(SWIFT) format format --in-place --recursive Sources Tests Package.swift

fuzz:
	FuzzTesting/run.sh 180

## Every fuzz target for 15 s each (what CI runs).
fuzz-smoke:
	FuzzTesting/run.sh --smoke 15

bench: release
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark

clean:
	rm -rf .build .build-demo .build-install
