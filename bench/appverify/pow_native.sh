#!/usr/bin/env bash
# Solutions per second of a native single-core solver against a challenge difficulty
# (default: the policy's minimum, 50,000; pass another maxnumber, and the seconds to run).
set -euo pipefail
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/pow_solver" "$(dirname "$0")/pow_solver.c" -lcrypto
"$out/pow_solver" "${1:-50000}" "${2:-10}"
