#!/usr/bin/env bash
# Benchmarks gpusched against its peers in one run, on this machine. Run by hand from the
# repository root (needs: hyperfine parallel time, from Debian):
#   apt-get install -y hyperfine parallel time && bench/run.sh
# Figures go to docs/benchmarks.md; ratios are relative to `xargs -P8 -I{} sh -c '{}'`.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-10000}           # trivial jobs for throughput
HANDOFFS=${HANDOFFS:-1000}    # sequential jobs for hand-off latency
BIG=${BIG:-1000000}           # lines for the memory test
RUNS=${RUNS:-5}

source bench/common.sh
start_work


machine
echo "# versions: $("$gpusched" --version), $(parallel --version | head -1), xargs $(xargs --version | head -1 | awk '{print $NF}')"

echo; echo "## 1. Throughput: $JOBS 'true' jobs over 8 GPU ids (hyperfine, $RUNS runs)"
repeat "$JOBS" true > "$work/true.txt"
hyperfine --runs "$RUNS" --warmup 1 --export-markdown "$work/throughput.md" \
  -n "xargs -P8" "xargs -P8 -I{} sh -c '{}' < $work/true.txt" \
  -n "gpusched" "$gpusched --gpus 0-7 $work/true.txt 2>/dev/null" \
  -n "gpusched -q" "$gpusched -q --gpus 0-7 $work/true.txt" \
  -n "parallel -j8" "parallel -j8 < $work/true.txt" >/dev/null
cat "$work/throughput.md"

# Median and 90th percentile of the gap between a job's end and the next start on its slot.
handoff_stats() {
  sort -k1,1 -k2,2n "$1" | awk '
    NR > 1 && $1 "" == slot "" { print ($2 - end) / 1000 } { slot = $1; end = $3 }' | sort -n |
    awk '{ v[NR] = $1 } END { printf "median %.0f us, p90 %.0f us (%d hand-offs)\n", v[int((NR + 1) / 2)], v[int(NR * 0.9)], NR }'
}

echo; echo "## 2. Hand-off: a job's end to the next job's start on the same slot"
echo "# jobs are bench/stamp (static), sleeping 2 ms; the start is its first instruction"
repeat "$HANDOFFS" 2000 > "$work/handoff.txt"
STAMP_LOG=$work/floor.log "$floor" "$stamp" 2000 "$HANDOFFS"
echo "spawn floor (posix_spawn + waitpid loop): $(handoff_stats "$work/floor.log")"
STAMP_LOG=$work/g1.log "$gpusched" -q --gpus 0 --shell "$stamp" "$work/handoff.txt"
echo "gpusched, 1 GPU:   $(handoff_stats "$work/g1.log")"
STAMP_LOG=$work/g8.log "$gpusched" -q --gpus 0-7 --shell "$stamp" "$work/handoff.txt"
echo "gpusched, 8 GPUs:  $(handoff_stats "$work/g8.log")"
STAMP_LOG=$work/x1.log xargs -P1 -I{} "$stamp" -c {} < "$work/handoff.txt"
echo "xargs -P1:         $(handoff_stats "$work/x1.log")"
STAMP_LOG=$work/p1.log parallel -j1 "$stamp" -c {} < "$work/handoff.txt"
echo "parallel -j1:      $(handoff_stats "$work/p1.log")"

echo; echo "## 3. Scheduler CPU while 8 jobs sleep 5 s"
# /proc/PID/schedstat's first field is the CPU time of the process in ns, at full precision.
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
rm -f "$work/queue"
"$gpusched" -q --gpus 0-7 --fifo "$work/queue" &
scheduler=$!
while [ ! -p "$work/queue" ]; do sleep 0.01; done
repeat 8 "sleep 5" > "$work/queue"
sleep 0.5; idle_from=$(cpu_ns $scheduler)
sleep 4;   idle_to=$(cpu_ns $scheduler)
sleep 1.5; total=$(cpu_ns $scheduler)
kill -USR1 $scheduler; wait $scheduler
echo "CPU during the 4 s of pure waiting: $(( (idle_to - idle_from) / 1000 )) us"
echo "CPU over the whole run (start-up, 8 spawns, 8 reaps): $(( total / 1000 )) us"

echo; echo "## 4. Peak RSS against input length (jobs: /bin/true run directly, 8 GPU ids)"
# time's peak RSS is the largest of the process and its children: ids that are not indices
# need no CUDA probe child (which maps indices to UUIDs for the leases), so it is gpusched's.
for lines in 1000 "$BIG"; do
  repeat "$lines" x > "$work/lines.txt"
  /usr/bin/time -f "%M" -o "$work/rss" "$gpusched" -q \
    --gpus GPU-b0,GPU-b1,GPU-b2,GPU-b3,GPU-b4,GPU-b5,GPU-b6,GPU-b7 --shell /bin/true "$work/lines.txt"
  echo "$lines lines: peak RSS $(cat "$work/rss") KiB"
done
