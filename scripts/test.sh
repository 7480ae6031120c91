#!/usr/bin/env bash
# The whole test suite: engine unit tests (swift test), then HTTP, browser and compatibility
# tests through real nginx and the real responder (pytest). Prints one summary line at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test || exit 1

out="${GATEHOUSE_TEST_OUTPUT:-$PWD/test-output}"
mkdir -p "$out"
export GATEHOUSE_TEST_OUTPUT="$out"

echo "== build"
swift build 2>&1 | tail -n 3 || exit 1
export GATEHOUSE_BIN="$(swift build --show-bin-path)/gatehouse"

echo "== engine and unit tests (swift test)"
swift test 2>&1 | tee "$out/swift-test.log" | grep -E "^(✘|􀢄)|error:|Test run with|Executed [0-9]+ tests" 
unit=${PIPESTATUS[0]}

echo "== HTTP, browser and compatibility tests (pytest, real nginx)"
python3 -m pytest -q -p no:cacheprovider Tests/integration --junitxml="$out/pytest.xml" 2>&1 | tee "$out/pytest.log" | tail -n 25
integ=${PIPESTATUS[0]}

if [ "$unit" -ne 0 ] || [ "$integ" -ne 0 ]; then
    echo "FAILED: swift test exit $unit, pytest exit $integ (logs in $out)"
    exit 1
fi
echo "all tests passed (logs and screenshots in $out)"
