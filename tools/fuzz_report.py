"""Rows of tools/fuzz-long.sh on stdin -> bench/results/fuzz.json and a RESULTS.md section."""

import json
import sys

sys.path.insert(0, "bench")
from _report import update_markdown  # noqa: E402

keys = ["package", "target", "duration", "execs", "corpus_before", "corpus_after", "status"]
new = [dict(zip(keys, line.split())) for line in sys.stdin if line.strip()]
# a run of some targets replaces their rows and keeps the others'
try:
    recs = json.load(open("bench/results/fuzz.json"))["records"]
except (OSError, ValueError, KeyError):
    recs = []
ran = {(r["package"], r["target"]) for r in new}
recs = [r for r in recs if (r["package"], r["target"]) not in ran] + new
with open("bench/results/fuzz.json", "w") as f:
    json.dump({"benchmark": "fuzz-long", "records": recs}, f, indent=1)
lines = ["## Long fuzzing (`make fuzz-long`)", "",
         "Each target for the duration shown, on this machine; the inputs that grew coverage are checked in as "
         "corpus (testdata/fuzz), so `make fuzz` starts from them.", "",
         "| package | target | duration | executions | corpus before | corpus after | result |",
         "|---|---|---|---|---|---|---|"]
lines += ["| " + " | ".join(r[k] for k in keys) + " |" for r in recs]
update_markdown("bench/RESULTS.md", "fuzz", "\n".join(lines))
