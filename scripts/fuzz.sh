#!/usr/bin/env bash
# Fuzzes the parsers an attacker reaches (Fuzz/Targets, RELIABILITY.md "Fuzzing"): builds the fuzz
# program once with libFuzzer and AddressSanitizer, then runs each target for FUZZ_SECONDS.
#
#   scripts/fuzz.sh                 every target, FUZZ_SECONDS each (default 60)
#   scripts/fuzz.sh json cookie     those targets only
#   FUZZ_RUNS=10000000 scripts/fuzz.sh json     a number of executions instead of a time
#   FUZZ_CONFIG=release scripts/fuzz.sh         optimised build (.build-fuzz-release), for long runs
#
# New corpus entries and crashes go to FUZZ_OUT (default fuzz-output/, ignored by git); the seeds
# in Fuzz/corpus/<target> are read, never written. Prints one line per target and a closing
# `fuzz: …` line; exits 1 when a target crashed (the crash file is named in its line).
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
runs="${FUZZ_RUNS:-}"
out="${FUZZ_OUT:-$PWD/fuzz-output}"
mkdir -p "$out/crashes" "$out/logs"

# libFuzzer without its main (the fuzz program has its own, which also replays files), and the
# coverage -sanitize=fuzzer would add: -sanitize=fuzzer itself links libFuzzer's main into every
# executable the build makes, the build's own tools included.
swiftc_path="$(readlink -f "$(command -v swiftc)")"
runtime="$(dirname "$swiftc_path")/../lib/swift/clang/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a"
[ -f "$runtime" ] || { echo "fuzz: libFuzzer runtime not found at $runtime"; exit 1; }

# Long runs use an optimised build: several times the executions per second, same sanitizer and
# coverage; -enable-testing keeps the @testable imports the targets use.
config="${FUZZ_CONFIG:-debug}"
case "$config" in
    debug) scratch=.build-fuzz; extra=() ;;
    release) scratch=.build-fuzz-release; extra=(-Xswiftc -enable-testing) ;;
    *) echo "fuzz: FUZZ_CONFIG is debug or release"; exit 1 ;;
esac
echo "== fuzz build (libFuzzer + AddressSanitizer, $config, $scratch)"
if ! swift build -c "$config" --product gatehouse-fuzz --scratch-path "$scratch" "${extra[@]}" \
    -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
    -Xswiftc -use-ld=lld -Xlinker "$runtime" -Xlinker -lstdc++ -Xlinker -u -Xlinker LLVMFuzzerRunDriver \
    > "$out/logs/build.log" 2>&1; then
    tail -n 30 "$out/logs/build.log"
    echo "fuzz: build failed"
    exit 1
fi
bin="$PWD/$scratch/$config/gatehouse-fuzz"

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    read -r -a targets < <("$bin" list 2>&1 | sed -n 's/^targets: //p')
fi

# The Swift runtime's crash reporter reads other threads' memory, which AddressSanitizer takes
# for a wild read; libFuzzer reports crashes itself. Leaks are not findings here: caches meant
# to live for the process are allocated on first use.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:symbolize=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

limit=(-max_total_time="$seconds")
[ -n "$runs" ] && limit=(-runs="$runs")
crashed=0
total_execs=0
printf '%-16s %12s %9s %7s %7s  %s\n' target executions exec/s cov ft result
for t in "${targets[@]}"; do
    work="$out/corpus/$t"
    mkdir -p "$work"
    seeds=()
    [ -d "Fuzz/corpus/$t" ] && seeds=("Fuzz/corpus/$t")
    dict=()
    [ -f "Fuzz/dict/$t.dict" ] && dict=(-dict="Fuzz/dict/$t.dict")
    log="$out/logs/$t.log"
    start=$(date +%s)
    "$bin" "$t" "$work" "${seeds[@]}" "${dict[@]}" "${limit[@]}" -max_len=16384 -timeout=20 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$out/crashes/$t-" > "$log" 2>&1
    rc=$?
    elapsed=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
    total_execs=$(( total_execs + ${execs:-0} ))
    if [ "$rc" -eq 0 ]; then
        result="ok (${elapsed}s)"
    else
        crashed=$((crashed + 1))
        artifact=$(sed -n "s/.*Test unit written to //p" "$log" | tail -n 1)
        result="CRASH rc=$rc ${artifact:-see $log}"
        grep -m 3 -E "ERROR: |Fatal error|expectation failed|SUMMARY" "$log" | sed 's/^/    /'
    fi
    printf '%-16s %12s %9s %7s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
done

echo "fuzz: ${#targets[@]} targets, $total_execs executions, $crashed crashed; logs in $out/logs"
[ "$crashed" -eq 0 ]
