#!/usr/bin/env bash
# tools/fuzz-long.sh DURATION pkg:Target:n ... — runs each fuzz target for DURATION, copies the inputs it
# found (Go keeps them in its cache) into the package's testdata/fuzz/<Target> so they are checked in as
# corpus (FUZZ_PARALLEL sets the workers, default all cores; FUZZ_MINIMIZE bounds the minimizing of each new
# input, default 200x: with a time bound (Go's default 60s, or 5s) some targets spent their run minimizing,
# 68-273 executions in a run where 200x gives 25,000 a second), and writes a table of the runs into bench/RESULTS.md and bench/results/fuzz.json.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=$1; shift
cache=$(go env GOCACHE)/fuzz/github.com/gotensor/gotensor
rows=()
for t in "$@"; do
	pkg=${t%%:*}; rest=${t#*:}; name=${rest%%:*}
	corpus="$pkg/testdata/fuzz/$name"
	before=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
	log=$(mktemp)
	status=ok
	go test -run '^$' -fuzz "^$name\$" -fuzztime "$dur" -fuzzminimizetime "${FUZZ_MINIMIZE:-200x}" -parallel "${FUZZ_PARALLEL:-$(nproc)}" "./$pkg" 2>&1 | tee "$log" | tail -3 || status=FAILED
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
	mkdir -p "$corpus"
	if [ -d "$cache/$pkg/$name" ]; then cp -n "$cache/$pkg/$name"/* "$corpus"/ 2>/dev/null || true; fi
	after=$(ls "$corpus" | wc -l)
	rows+=("$pkg $name $dur $execs $before $after $status")
	rm -f "$log"
done
printf '%s\n' "${rows[@]}" | python3 tools/fuzz_report.py
printf '%s\n' "${rows[@]}" | grep -q FAILED && { echo "fuzz-long: a target failed (see above)" >&2; exit 1; } || true
