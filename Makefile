# jail: build, test, bench, lint. Everything builds static (CGO_ENABLED=0).
GO       ?= go
export CGO_ENABLED = 0
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN      := bin/jail
LDFLAGS  := -s -w -X main.version=$(VERSION)

.PHONY: all build test e2e bench lint fuzz clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/jail

# Unit, adversarial and end-to-end tests (the e2e tests use the built binary).
# TESTFLAGS adds go test flags (.ci/run passes -json).
TESTFLAGS ?=
test: build
	JAIL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 20m $(TESTFLAGS) ./...

# The end-to-end tests alone, e.g. as an unprivileged user.
e2e: build
	JAIL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -v ./tests

# Measurements, not checks (they assert nothing, so they are not in make test):
# the end-to-end bench program, then the packages' own Benchmark* functions
# that measure whole mechanisms (Setup of the network namespaces, 1,000 flows).
bench: build
	JAIL_BIN=$(CURDIR)/$(BIN) $(GO) run ./tests/bench
	$(GO) test -run '^$$' -bench '^BenchmarkSetup$$' -benchtime 10x ./netproxy/nsnet
	$(GO) test -run '^$$' -bench '^BenchmarkMemory1000Flows$$' -benchtime 1x ./netproxy

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./... ./.ci/testreport
	GOOS=darwin $(GO) vet ./...
	$(GO) mod tidy -diff

# Short fuzzing of every parser (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin
