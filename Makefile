# `make test` is the whole test suite: vet, lint (the layering rules of
# .golangci.yml included), then every package with the race detector, the
# integration tests against moto's server included. It first
# installs what the machine lacks (scripts/test-deps: moto into .venv or the
# user's Python, Chromium from the distribution's packages).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GOLANGCI_LINT_VERSION ?= v2.15.0
# The code generators of `make proto`, pinned; protoc is Debian's
# protobuf-compiler (3.21.12 on Debian 12), named in the generated headers.
PROTOC_GEN_GO_VERSION      ?= v1.36.12
PROTOC_GEN_GO_GRPC_VERSION ?= v1.6.2

# moto_server installed by scripts/test-deps is found after whatever PATH has.
export PATH := $(PATH):$(CURDIR)/.venv/bin:$(HOME)/.local/bin

.PHONY: all build test test-deps vet lint bench comparison bursts slo scoreboard flash matrix tidy-check validate-example clean proto

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/checker ./cmd/checker

vet:
	$(GO) vet ./...
	$(GO) vet -tags comparison ./cmd/checker

test: test-deps vet lint
	$(GO) test -race -count=1 -timeout 20m ./...
	# The simulator's claims about the policies (docs/simulation.md), on spike, bursty and cron: the
	# race detector makes the simulations ten times slower, so without it (their files are
	# built with //go:build !race: under -race they do not exist).
	$(GO) test -count=1 -timeout 20m -run 'TestComparison' ./cmd/checker
	# The oracle's bounds (internal/sim/bound_test.go): every policy on every
	# built-in scenario and an exhaustive search, likewise without it.
	$(GO) test -count=1 -timeout 20m -run 'TestOracle' ./internal/sim
	# The bursty-traffic yardstick and the SLO table of docs/simulation.md as
	# the simulator gives them now (`make bursts`, `make slo`; about two
	# minutes): a change that moves them updates the page with it. And the
	# flash steps over 60 seeds (`make flash`; seconds).
	$(GO) test -tags comparison -count=1 -timeout 20m -run 'TestBurstTable|TestSLOTable|TestFlashSeeds' ./cmd/checker -bursts -slo -flash

test-deps:
	scripts/test-deps

# golangci-lint from the Go module proxy, built once into Go's build cache.
lint:
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The comparison of docs/simulation.md: every policy on every built-in scenario,
# seeds 1 to 3, through `checker simulate`; checks its claims and
# prints its table (several minutes). The table's test is built only with
# the comparison tag.
comparison:
	$(GO) test -tags comparison -count=1 -timeout 60m -run 'TestComparison' ./cmd/checker -comparison -v

# The bursty-traffic yardstick of docs/simulation.md: the model against the
# fixed fleets chosen in hindsight on irregular and the burst traces; checks
# the page's table and prints it (about a minute).
bursts:
	$(GO) test -tags comparison -count=1 -timeout 30m -run 'TestBurstTable' ./cmd/checker -bursts -v

# The estimate of the promise measured where the truth is known
# (docs/simulation.md, "The promise as an SLO"): every built-in scenario,
# seeds 1 to 3, and the real traces of docs/traces; checks the goals and
# the page's table and prints it (several minutes).
slo:
	$(GO) test -tags comparison -count=1 -timeout 60m -run 'TestSLOTable' ./cmd/checker -slo -v

# The flash steps (docs/traces/flash-steps.csv) over seeds 1 to 60 at a 5 s
# interval: the mean share within the promise and the runs below 93.5 %,
# the figures the measured ceiling's top is argued by (several minutes;
# FLASH_ARGS='-flash-interval 10s' for another interval).
flash:
	$(GO) test -tags comparison -count=1 -timeout 60m -run 'TestFlashSeeds' ./cmd/checker -flash $(FLASH_ARGS) -v

# The policy matrix: the model alone on the scoreboard's traffics, seeds 1
# to 3, each traffic's means (a few minutes on two cores): the quick check of
# a change to the policy. Save the runs of one build and check another
# against them, which fails past 0.5 point of share or 3 % of worker-hours:
# make matrix MATRIX_ARGS='-matrix-save /tmp/main.json' on main, then
# make matrix MATRIX_ARGS='-matrix-against /tmp/main.json' on the change.
matrix:
	$(GO) test -tags comparison -count=1 -timeout 60m -run 'TestMatrix$$' ./cmd/checker -matrix $(MATRIX_ARGS) -v

# The scoreboard of docs/simulation.md: the model against the fleet an
# operator sizes from the warm-up (fixed-warm-up), fixed-best and the oracle
# on the real traces of docs/traces and every built-in scenario, seeds 1
# to 3; checks the page's table and prints it. One run at a time (each
# runs its four policies side by side); the weeks scenario takes most of it.
scoreboard:
	$(GO) test -tags comparison -count=1 -timeout 180m -run 'TestScoreboard' ./cmd/checker -scoreboard -v

validate-example:
	$(GO) run ./cmd/checker validate --config config.example.yaml

# Regenerates api/externalscaler's Go code from KEDA's external scaler
# contract (the .proto beside it). Needs protoc (apt-get install
# protobuf-compiler); the plugins come from the Go module proxy.
proto:
	GOBIN=$(CURDIR)/bin/tools $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(CURDIR)/bin/tools $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH="$(CURDIR)/bin/tools:$$PATH" protoc -I api/externalscaler \
	  --go_out=api/externalscaler --go_opt=paths=source_relative \
	  --go-grpc_out=api/externalscaler --go-grpc_opt=paths=source_relative \
	  api/externalscaler/externalscaler.proto

tidy-check:
	$(GO) mod tidy -diff

clean:
	rm -rf bin
