# jail: build, test, bench, lint. Everything builds static (CGO_ENABLED=0).
GO       ?= go
export CGO_ENABLED = 0
# Empty outside a git checkout: jail then reports the version Go recorded.
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
BIN      := bin/jail
LDFLAGS  := -s -w -X main.version=$(VERSION)
PREFIX   ?= /usr/local
DESTDIR  ?=
SHARE    := $(DESTDIR)$(PREFIX)/share

.PHONY: all build test e2e bench lint fuzz clean install uninstall docs

all: build

# The lean init program first (package initbin embeds it and its sha256 with
# the build tag jail_leaninit): each sandbox's init then starts sooner. A plain
# `go build ./cmd/jail` works too: its init is a re-exec of jail itself.
# On amd64 it gets an ELF entry of its own (cmd/jail-init/entry_linux_amd64.s),
# which starts init without a fork of jail's supervisor; $(INIT).entry tells
# jail (package initbin) that it has one.
INIT     := initbin/jail-init
AMD64    := $(filter amd64,$(shell $(GO) env GOARCH))
INITENTRY := $(if $(AMD64),main.entry)
# The entry also makes a window of each program's heap ahead, around where its
# first objects are (KiB below and above; package prefault, heap rows in
# docs/performance.md): the supervisor writes 2-4 MiB of heap in a start, the
# lean init ~600 KiB.
heapwindow = -X github.com/jail-sandbox/jail/prefault.heapBefore=$(1) -X github.com/jail-sandbox/jail/prefault.heapAfter=$(2)
# jail itself starts at package slack's entry (amd64), which sets the
# supervisor's timer slack before the Go runtime makes its first thread (fewer
# wake-ups of its monitor thread), then jumps to package prefault's: its code
# and read-only data are mapped in one system call before the Go runtime runs,
# instead of page by page as they are first touched.
JAILENTRY := $(if $(AMD64),-E jail_supervisor_entry $(call heapwindow,1024,3072))
# That mapping costs what the page cache's folios make it cost: the Go
# linker, cp and install write the program 4 KiB at a time (a copy goes
# through copy_file_range), and each start's populate then walks ~2,700 small
# pages (0.7-1.0 ms here); written 2 MiB at a time, the page cache holds it in
# 2 MiB folios (Linux with large folios: ext4 since 6.16, xfs) and the populate
# maps them whole (0.2-0.3 ms; docs/performance.md, suphead2 rows). So on Linux
# bin/jail and the installed jail are rewritten by dd in 2 MiB blocks, into a
# new file renamed over the old (a running jail keeps its own). The bytes are
# the same; where the kernel has no large folios nothing changes.
# $(call bigwrite,FROM,TO,MODE)
ifeq ($(shell uname -s),Linux)
define bigwrite
	rm -f $(2).tmp
	dd if=$(1) of=$(2).tmp bs=2097152 status=none
	chmod $(3) $(2).tmp
	mv -f $(2).tmp $(2)
endef
else
define bigwrite
	$(if $(filter $(1),$(2)),,install -m $(3) $(1) $(2))
endef
endif
# The lean init's read-only data is laid out to hold a whole 2 MiB-aligned
# range: internal/rodatapad prints how many bytes short of that it is (0
# when it holds one already, or when more than 256 KiB would be needed), and
# the program is built again with that many bytes of padding in its
# read-only data (cmd/jail-init's pad.go, replaced by go build -overlay with
# a copy in a temporary directory: the tree is not written). Each start of
# init then maps that range by one page-table entry (with the copy in 2 MiB
# folios: package initbin; docs/performance.md, initfolio rows).
INITLD   := -s -w $(if $(INITENTRY),-E $(INITENTRY) $(call heapwindow,512,1024))
build:
	$(GO) build -trimpath -ldflags '$(INITLD)' -o $(INIT) ./cmd/jail-init
	pad=$$($(GO) run ./internal/rodatapad $(INIT)) && if [ "$$pad" -gt 0 ]; then \
		d=$$(mktemp -d) && \
		printf 'package main\n\nconst padding = "%s"\n' "$$(head -c $$pad /dev/zero | tr '\0' 0)" > $$d/pad.go && \
		printf '{"Replace":{"%s":"%s"}}\n' "$(CURDIR)/cmd/jail-init/pad.go" "$$d/pad.go" > $$d/overlay.json && \
		$(GO) build -trimpath -overlay $$d/overlay.json -ldflags '$(INITLD)' -o $(INIT) ./cmd/jail-init; \
		rc=$$?; rm -rf $$d; [ $$rc -eq 0 ]; fi
	sha256sum $(INIT) | cut -d' ' -f1 > $(INIT).sum
	echo '$(INITENTRY)' > $(INIT).entry
	$(GO) build -trimpath -tags jail_leaninit -ldflags '$(LDFLAGS) $(JAILENTRY)' -o $(BIN) ./cmd/jail
	$(call bigwrite,$(BIN),$(BIN),0755)

# Unit, adversarial and end-to-end tests (the e2e tests use the built binary).
# TESTFLAGS adds go test flags (.ci/run passes -json).
TESTFLAGS ?=
test: build
	JAIL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 20m $(TESTFLAGS) ./...
	$(GO) test -count=1 -tags jail_leaninit $(TESTFLAGS) ./initbin

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

# The binary, its man page and completion scripts, generated by the binary
# from its option table. make install PREFIX=~/.local puts them in your home.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/man/man1 $(SHARE)/bash-completion/completions \
		$(SHARE)/zsh/site-functions $(SHARE)/fish/vendor_completions.d
	$(call bigwrite,$(BIN),$(DESTDIR)$(PREFIX)/bin/jail,0755)
	$(BIN) man > $(SHARE)/man/man1/jail.1
	$(BIN) completion bash > $(SHARE)/bash-completion/completions/jail
	$(BIN) completion zsh > $(SHARE)/zsh/site-functions/_jail
	$(BIN) completion fish > $(SHARE)/fish/vendor_completions.d/jail.fish
	chmod 0644 $(SHARE)/man/man1/jail.1 $(SHARE)/bash-completion/completions/jail \
		$(SHARE)/zsh/site-functions/_jail $(SHARE)/fish/vendor_completions.d/jail.fish

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/jail $(SHARE)/man/man1/jail.1 $(SHARE)/bash-completion/completions/jail \
		$(SHARE)/zsh/site-functions/_jail $(SHARE)/fish/vendor_completions.d/jail.fish

# README's flag tables and docs/jail.1, regenerated from the option table
# (go test checks that they match).
docs:
	$(GO) test ./cmd/jail -run 'TestReadmeFlagTable|TestManPage' -update

clean:
	rm -rf bin $(INIT) $(INIT).sum
