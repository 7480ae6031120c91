#!/usr/bin/env bash
# The whole test suite: engine unit tests (swift test, the store contract suite on SQLite and on a
# throw-away PostgreSQL cluster), then HTTP, browser and compatibility tests through real nginx
# and the real responder (pytest), on SQLite and again on PostgreSQL, then every fuzz target for 30 s
# (scripts/fuzz.sh). Prints one summary line at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test || exit 1

out="${GATEHOUSE_TEST_OUTPUT:-$PWD/test-output}"
mkdir -p "$out"
export GATEHOUSE_TEST_OUTPUT="$out"

echo "== build (debug for unit tests; the release binary, as deployed, for the HTTP tests)"
swift build 2>&1 | tail -n 3 || exit 1
scripts/build-release.sh 2>&1 | tail -n 3 || exit 1
export GATEHOUSE_BIN="$PWD/.build-release/release/gatehouse"
[ -x "$GATEHOUSE_BIN" ] || { echo "release build missing: $GATEHOUSE_BIN"; exit 1; }

# A throw-away PostgreSQL cluster for the whole run: the store contract suite runs on it as well
# as on SQLite, and the PostgreSQL HTTP tests make their databases in it. Stopped on exit.
pg_dir="$(mktemp -d /tmp/gatehouse-pg.XXXXXX)"
trap 'scripts/pg-cluster.sh stop "$pg_dir"' EXIT
if GATEHOUSE_TEST_POSTGRES_URL="$(scripts/pg-cluster.sh start "$pg_dir")"; then
    export GATEHOUSE_TEST_POSTGRES_URL
else
    echo "PostgreSQL cluster did not start; the PostgreSQL tests fail"
    export GATEHOUSE_TEST_POSTGRES_URL="postgresql://unavailable@127.0.0.1:1/none"
fi

echo "== engine and unit tests (swift test)"
timeout --kill-after=30 1800 swift test 2>&1 | tee "$out/swift-test.log" | grep -E "^(✘|􀢄)|error:|Test run with" 
unit=${PIPESTATUS[0]}

# The HTTP suite twice at once: on SQLite, and with every Gatehouse on PostgreSQL (a fresh database
# each, on the run's cluster; tests of the SQLite file itself are skipped there). The two mostly wait
# (browsers, timeouts, nginx), so side by side they take little more than the longer one. The
# SQLite pass runs the PostgreSQL deployment tests, which restart their cluster: they get one of their
# own (no GATEHOUSE_TEST_POSTGRES_URL), so the PostgreSQL pass's cluster is never restarted under it.
# pytest.ini bounds each test and the session; `timeout` is the last resort for a pass that no
# longer answers signals, so the run still prints both logs' tails and its closing line.
echo "== HTTP, browser and compatibility tests, on SQLite and on PostgreSQL side by side (pytest, real nginx)"
bounded=(timeout --kill-after=60 2700)
env -u GATEHOUSE_TEST_POSTGRES_URL "${bounded[@]}" python3 -m pytest -q -p no:cacheprovider Tests/integration --junitxml="$out/pytest.xml" \
    > "$out/pytest.log" 2>&1 &
sqlite_pid=$!
GATEHOUSE_TEST_STORE=postgresql GATEHOUSE_TEST_OUTPUT="$out/postgresql" "${bounded[@]}" python3 -m pytest -q -p no:cacheprovider Tests/integration \
    --junitxml="$out/pytest-postgresql.xml" > "$out/pytest-postgresql.log" 2>&1 &
pg_pid=$!
wait "$sqlite_pid"; integ=$?
wait "$pg_pid"; [ "$?" -eq 0 ] || integ=1
echo "-- on SQLite"
tail -n 25 "$out/pytest.log"
echo "-- on PostgreSQL"
tail -n 25 "$out/pytest-postgresql.log"

# Every fuzz target for FUZZ_SECONDS (30 by default here; 0 skips), after a build of its own
# (libFuzzer + AddressSanitizer). A crash fails the run; its line comes before the summary.
fuzz_seconds="${FUZZ_SECONDS:-30}"
fuzz=0
if [ "$fuzz_seconds" -gt 0 ]; then
    echo "== fuzzing (${fuzz_seconds} s per target)"
    FUZZ_SECONDS="$fuzz_seconds" FUZZ_OUT="$out/fuzz" scripts/fuzz.sh 2>&1 | tee "$out/fuzz.log" | tail -n 20
    fuzz=${PIPESTATUS[0]}
fi

# One closing line over both runners.
read -r sp sf < <(python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
text = open(f"{out}/swift-test.log", errors="replace").read()
m = re.findall(r"Test run with (\d+) tests? .*?(passed|failed)(?: after [\d.]+ seconds)?(?: with (\d+) issues?)?", text)
passed = failed = 0
for total, outcome, issues in m:
    failed_here = len(set(re.findall(r'✘ Test "([^"]+)"[^\n]* failed', text))) if outcome == "failed" else 0
    passed += int(total) - failed_here
    failed += failed_here
for log in ("pytest.log", "pytest-postgresql.log"):
    try:
        tail = open(f"{out}/{log}", errors="replace").read().strip().splitlines()[-1]
    except (OSError, IndexError):
        tail = ""
    pp = re.search(r"(\d+) passed", tail)
    pf = re.search(r"(\d+) (failed|error)", tail)
    passed += int(pp.group(1)) if pp else 0
    failed += int(pf.group(1)) if pf else 0
print(passed, failed)
PY
)
echo "swift test exit $unit, pytest exit $integ, fuzz exit $fuzz; logs and screenshots in $out"
echo "tests: ${sp:-0} passed, ${sf:-0} failed"
if [ "$unit" -ne 0 ] || [ "$integ" -ne 0 ] || [ "$fuzz" -ne 0 ]; then
    exit 1
fi
