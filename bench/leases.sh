#!/usr/bin/env bash
# Benchmarks host-wide GPU leases on this machine. Run by hand from the repository root
# (needs hyperfine, from Debian): bench/leases.sh
#  1. release to start: a process holding a GPU's lease exits; how long until a gpusched
#     that was waiting for that GPU starts its job (a scheduler, and `gpusched exec`);
#  2. the cost of leases per job: the same runs with and without --no-lock.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEATS=${REPEATS:-40}        # hand-overs between processes
JOBS=${JOBS:-10000}           # trivial jobs for throughput
HANDOFFS=${HANDOFFS:-1000}    # sequential jobs for hand-off latency
RUNS=${RUNS:-5}

source bench/common.sh
start_work
# UUID prefixes, not indices: no CUDA probe, so only the lease machinery is measured.
gpu=GPU-be0c
eight=GPU-b0,GPU-b1,GPU-b2,GPU-b3,GPU-b4,GPU-b5,GPU-b6,GPU-b7

# Median and 90th percentile of a column of microseconds.
stats() {
  sort -n | awk '{ v[NR] = $1 } END {
    printf "median %.0f us, p90 %.0f us, max %.0f us (%d samples)\n",
           v[int((NR + 1) / 2)], v[int(NR * 0.9)], v[NR], NR }'
}
# The gap from the holder's last instant to the waiter's first, one per line, in us.
gaps() { paste -d' ' "$1" "$2" | awk '{ print ($5 - $3) / 1000 }'; }

machine
echo "# $("$gpusched" --version)"

echo; echo "## 1. Release to start: the holder of GPU $gpu exits, the waiting process starts its job"
echo "# holder: gpusched exec -- stamp 300000 (holds the lease 300 ms, stamps, exits);"
echo "# the waiter starts 100 ms in, finds the GPU leased and waits; its job is stamp."
rm -f "$work"/holder*.log "$work"/waiter*.log
for i in $(seq "$REPEATS"); do
  STAMP_LOG=$work/holder-s.log "$gpusched" exec -q --gpus $gpu -- "$stamp" 300000 &
  sleep 0.1
  echo 0 | STAMP_LOG=$work/waiter-s.log "$gpusched" -q --gpus $gpu --shell "$stamp"
  wait
done
echo "waiting scheduler:      $(gaps "$work/holder-s.log" "$work/waiter-s.log" | stats)"
for i in $(seq "$REPEATS"); do
  STAMP_LOG=$work/holder-e.log "$gpusched" exec -q --gpus $gpu -- "$stamp" 300000 &
  sleep 0.1
  STAMP_LOG=$work/waiter-e.log "$gpusched" exec -q --gpus $gpu -- "$stamp" 0
  wait
done
echo "waiting gpusched exec:  $(gaps "$work/holder-e.log" "$work/waiter-e.log" | stats)"

# As bench/run.sh: the gap between a job's end and the next start on its slot.
handoff_stats() {
  sort -k1,1 -k2,2n "$1" | awk '
    NR > 1 && $1 "" == slot "" { print ($2 - end) / 1000 } { slot = $1; end = $3 }' | stats
}
echo; echo "## 2. Cost per job: $HANDOFFS sequential stamp jobs (2 ms) on one GPU, within one scheduler"
repeat "$HANDOFFS" 2000 > "$work/handoff.txt"
STAMP_LOG=$work/lock.log "$gpusched" -q --gpus $gpu --shell "$stamp" "$work/handoff.txt"
STAMP_LOG=$work/nolock.log "$gpusched" -q --gpus $gpu --no-lock --shell "$stamp" "$work/handoff.txt"
echo "hand-off with leases:    $(handoff_stats "$work/lock.log")"
echo "hand-off with --no-lock: $(handoff_stats "$work/nolock.log")"

echo; echo "## 3. Throughput: $JOBS 'true' jobs over 8 GPU ids (hyperfine, $RUNS runs)"
repeat "$JOBS" true > "$work/true.txt"
hyperfine --runs "$RUNS" --warmup 1 --export-markdown "$work/throughput.md" \
  -n "gpusched (leases)" "$gpusched -q --gpus $eight $work/true.txt" \
  -n "gpusched --no-lock" "$gpusched -q --no-lock --gpus $eight $work/true.txt" \
  >/dev/null
cat "$work/throughput.md"
