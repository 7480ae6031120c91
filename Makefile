# Gatehouse — two commands on a fresh Debian machine:
#   make dev    build and run Gatehouse behind nginx on http://127.0.0.1:8080 (dev mode)
#   make test   run the whole test suite
PORT ?= 8080
DATA ?= .gatehouse

.PHONY: dev test build release deps bench fuzz clean

dev: build
	@scripts/install-deps.sh run
	"$$(swift build --show-bin-path)/gatehouse" dev --port $(PORT) --data $(DATA)

test:
	@scripts/test.sh

build:
	@scripts/install-deps.sh run
	swift build

release:
	@scripts/install-deps.sh run
	scripts/build-release.sh
	@echo "built .build-release/release/gatehouse"

bench:
	bench/run

# Each fuzz target for FUZZ_SECONDS (default 60); crashes in fuzz-output/crashes (RELIABILITY.md).
fuzz:
	@scripts/fuzz.sh

clean:
	rm -rf .build .build-fuzz test-output fuzz-output
