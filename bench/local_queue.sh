#!/usr/bin/env bash
# Benchmarks the local (SQLite) queue on this machine, in a database of its own. Run by hand
# from the repository root (needs hyperfine and sqlite3, from Debian): bench/local_queue.sh
#  1. submit: `gpusched submit FILE` of BIG commands into a fresh database (hyperfine; the
#     database is removed before each run). Target: under 2 s.
#  2. start rate: JOBS trivial jobs (`true`) over 8 GPU ids, a worker against a plain run
#     (`gpusched FILE`), alternated ROUNDS times in the same minutes. The plain run is timed
#     from its start to its exit. For the worker the jobs are submitted first; it is timed
#     from its start to the moment the last result is recorded (the latest `ended` of the
#     jobs, written by the worker as it records each result). The script notices the end by
#     polling the database every 5 s (a poll, a shell with sqlite3 and sleep, takes about
#     20 ms of CPU that the worker's jobs would have had: 1 % of a 2-core machine at one
#     poll a second), but the poll's period does not enter the figure, and the worker's exit
#     is not counted (it does not exit on its own). Ratio: plain time over
#     worker time, in each round; the figure is the median of the rounds' ratios. Target:
#     at least 0.9. The worker does more for each job: it writes the job's stdout and stderr
#     to files of their own (for `gpusched logs`; the plain run's jobs write to its stdout)
#     and records the job's take and result in the database.
#  3. listing: `gpusched queue` with BIG jobs queued (hyperfine), beside `gpusched --version`
#     in the same run, the cost of starting the binary at all. Target: under 100 ms.
#  4. round trip: `gpusched submit --wait` of WAIT_JOBS trivial jobs to a worker already
#     running over 8 GPU ids, from the submit's start to its exit, against a plain run of the
#     same file, alternated ROUNDS times. Ratio: submit --wait time over plain time (the
#     median). Target: at most 1.05. Also printed: how long after the last job's end (as the
#     worker recorded it) the submit returned.
#  5. first submit: the same, where no worker serves the queue, so that the submit starts one
#     (over GPUSCHED_GPUS=0-7) before it waits; the worker is stopped after each round.
#     Target: at most 1.15.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-5000}            # trivial jobs for the start rate
BIG=${BIG:-100000}            # commands submitted, then listed
ROUNDS=${ROUNDS:-3}           # plain run and worker, alternated
RUNS=${RUNS:-5}               # hyperfine runs of submit
LISTINGS=${LISTINGS:-20}      # hyperfine runs of the listing
WAIT_JOBS=${WAIT_JOBS:-2000}  # trivial jobs for the round trip

source bench/common.sh
start_work
unset GPUSCHED_DB GPUSCHED_REDIS GPUSCHED_QUEUE
# Where submit starts a worker by itself when none serves the queue, this script starts its own.
no_start=()
if "$gpusched" submit --help | grep -q -- --no-start; then
  no_start=(--no-start)
fi
submit() { "$gpusched" submit -q "${no_start[@]}" "$@" > /dev/null; } # its ids: not wanted here
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

machine
echo "# $("$gpusched" --version | head -1), SQLite $(sqlite3 --version | cut -d' ' -f1)"

echo; echo "## 1. Submit: $BIG 'true' commands into a fresh database (hyperfine, $RUNS runs)"
repeat "$BIG" true > "$work/big.txt"
big_db=$work/big.db
hyperfine --runs "$RUNS" --warmup 1 --prepare "rm -f $big_db $big_db-wal $big_db-shm" \
  --export-markdown "$work/submit.md" \
  -n "gpusched submit" "$gpusched submit -q ${no_start[*]} --db $big_db $work/big.txt" >/dev/null
cat "$work/submit.md"

echo; echo "## 2. Start rate: $JOBS 'true' jobs over 8 GPU ids, plain run against a worker ($ROUNDS rounds)"
repeat "$JOBS" true > "$work/true.txt"
for round in $(seq "$ROUNDS"); do
  start=$(now)
  "$gpusched" -q --gpus 0-7 "$work/true.txt"
  plain=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }')

  # A database of its own each round, its jobs' output files new ones, as a worker's are (its
  # job ids only grow); none is removed before the end: thousands of files just deleted would
  # make the filesystem's search for free inodes slower than a worker's usual life has it.
  db=$work/drain-$round.db
  submit --db "$db" "$work/true.txt"
  start=$(now)
  "$gpusched" worker -q --db "$db" --gpus 0-7 &
  background+=($!)
  until [ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" = 0 ]; do
    sleep 5
  done
  worker=$(sqlite3 "$db" "SELECT printf('%.3f', max(ended) - $start) FROM jobs")
  failed=$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE state != 'succeeded'")
  kill -USR1 "${background[@]}"; wait "${background[@]}"; background=()
  [ "$failed" = 0 ] || { echo "round $round: $failed jobs did not succeed" >&2; exit 1; }

  ratio=$(awk -v p="$plain" -v w="$worker" 'BEGIN { printf "%.2f", p / w }')
  echo "round $round: plain run $plain s, worker $worker s, ratio $ratio"
  echo "$plain" >> "$work/plain.txt"
  echo "$worker" >> "$work/worker.txt"
  echo "$ratio" >> "$work/ratio.txt"
done
awk -v p="$(median < "$work/plain.txt")" -v w="$(median < "$work/worker.txt")" \
    -v r="$(median < "$work/ratio.txt")" -v n="$JOBS" 'BEGIN {
  printf "medians: plain run %.2f s (%.0f jobs/s), worker %.2f s (%.0f jobs/s), ratio %.2f\n",
         p, n / p, w, n / w, r }'

echo; echo "## 3. Listing: \`gpusched queue\` with $BIG jobs queued (hyperfine, $LISTINGS runs)"
hyperfine --runs "$LISTINGS" --warmup 3 -N --export-markdown "$work/queue.md" \
  -n "gpusched queue" "$gpusched queue --db $big_db" \
  -n "gpusched queue --json" "$gpusched queue --json --db $big_db" \
  -n "gpusched --version" "$gpusched --version" >/dev/null
cat "$work/queue.md"

echo; echo "## 4. Round trip: submit --wait of $WAIT_JOBS 'true' jobs to a running worker over 8 GPU ids, against a plain run ($ROUNDS rounds)"
repeat "$WAIT_JOBS" true > "$work/wait.txt"
db=$work/round-trip.db
"$gpusched" worker -q --db "$db" --gpus 0-7 &
background+=($!)
until [ -n "$(sqlite3 "$db" "SELECT id FROM workers" 2>/dev/null)" ]; do sleep 0.1; done
for round in $(seq "$ROUNDS"); do
  start=$(now)
  "$gpusched" -q --gpus 0-7 "$work/wait.txt"
  plain=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }')
  start=$(now)
  "$gpusched" submit -q --wait --db "$db" "$work/wait.txt" > /dev/null
  returned=$(now)
  waited=$(awk -v s="$start" -v e="$returned" 'BEGIN { printf "%.3f", e - s }')
  after=$(sqlite3 "$db" "SELECT printf('%.1f', ($returned - max(ended)) * 1000) FROM jobs")
  ratio=$(awk -v p="$plain" -v w="$waited" 'BEGIN { printf "%.2f", w / p }')
  echo "round $round: plain run $plain s, submit --wait $waited s (returned $after ms after the last end), ratio $ratio"
  echo "$ratio" >> "$work/wait-ratio.txt"
done
kill -USR1 "${background[@]}"; wait "${background[@]}"; background=()
echo "median ratio: $(median < "$work/wait-ratio.txt")"

echo; echo "## 5. First submit: submit --wait of $WAIT_JOBS 'true' jobs that starts the worker over 8 GPU ids, against a plain run ($ROUNDS rounds)"
if [ ${#no_start[@]} = 0 ]; then
  echo "(this gpusched does not start a worker by itself)"
  exit 0
fi
db=$work/first-submit.db
for round in $(seq "$ROUNDS"); do
  start=$(now)
  "$gpusched" -q --gpus 0-7 "$work/wait.txt"
  plain=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }')
  start=$(now)
  GPUSCHED_GPUS=0-7 "$gpusched" submit -q --wait --db "$db" "$work/wait.txt" > /dev/null
  waited=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }')
  "$gpusched" worker -q --stop --db "$db" > /dev/null
  while [ -n "$(sqlite3 -cmd ".timeout 5000" "$db" "SELECT id FROM workers")" ]; do sleep 0.1; done
  ratio=$(awk -v p="$plain" -v w="$waited" 'BEGIN { printf "%.2f", w / p }')
  echo "round $round: plain run $plain s, submit --wait starting the worker $waited s, ratio $ratio"
  echo "$ratio" >> "$work/first-ratio.txt"
done
echo "median ratio: $(median < "$work/first-ratio.txt")"
