#!/usr/bin/env bash
# The release build, as deployed and as measured: one place for its flags (make release, the test
# suite and the benchmarks all call this).
#   --static-swift-stdlib   the Swift runtime linked in: no libswift*.so to ship, fewer libraries
#                           to map and relocate at every CGI start.
#   --disable-local-rpath   no $ORIGIN run path: the binary needs only system libraries, and with
#                           the run path the loader first looked for each of them (and theirs) in
#                           the binary's own folder, 42 failed system calls a CGI request.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path .build-release \
    --product gatehouse "$@"
