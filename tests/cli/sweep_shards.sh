#!/bin/sh
# A sweep cut into four shards, run by GNU parallel as a batch engine would run them, then merged,
# gives exactly the table of the same sweep run whole (docs/planning.md).
set -eu
relaysim="$1"; scenario="$2"; work="$3"
rm -rf "$work" && mkdir -p "$work"
sweep() { "$relaysim" sweep "$scenario" --vary webhook.platform.pods=1..3 --vary webhook.platform.concurrency_per_pod=4,16 \
  -r 3 --set duration=5m --jobs 1 -q "$@"; }
sweep --out "$work/whole"
export relaysim scenario work
parallel --halt now,fail=1 "$relaysim" sweep "$scenario" --vary webhook.platform.pods=1..3 \
  --vary webhook.platform.concurrency_per_pod=4,16 -r 3 --set duration=5m --jobs 1 -q --shard {}/4 --out "$work/part{}" ::: 1 2 3 4
"$relaysim" merge "$work/merged" "$work/part1" "$work/part2" "$work/part3" "$work/part4" > "$work/merge.txt"
for f in summary.csv tails.csv summary.json runs.csv latency.csv sweep.json; do
  cmp "$work/whole/$f" "$work/merged/$f" || { echo "the merged $f differs from the whole sweep's"; exit 1; }
done
# A shard missing, or given twice, is refused.
if "$relaysim" merge "$work/bad" "$work/part1" "$work/part2" "$work/part3" 2> "$work/err.txt"; then exit 1; fi
grep -q "shard 4/4 is missing" "$work/err.txt"
if "$relaysim" merge "$work/bad" "$work/part1" "$work/part1" 2> "$work/err.txt"; then exit 1; fi
grep -q "given twice" "$work/err.txt"
# A shard's pooled latency that is not one is refused, naming the line.
sed -i '2s/:/;/' "$work/part2/latency.csv"
if "$relaysim" merge "$work/bad" "$work/part1" "$work/part2" "$work/part3" "$work/part4" 2> "$work/err.txt"; then exit 1; fi
grep -q "part2/latency.csv:2: the latency is not a histogram" "$work/err.txt"
echo "four shards merged give the whole sweep's table ($(wc -l < "$work/whole/runs.csv") lines of runs)"
