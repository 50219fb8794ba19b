#!/usr/bin/env bash
# GPU memory packing: a synthetic sweep of JOBS jobs whose peaks are spread between 4 and
# 60 GiB, on 8 fake 80 GiB GPUs (the tests' fake driver: no GPU needed), run four ways:
#   1. one job per GPU (gpusched without --mem);
#   2. each job's declared memory (`submit --mem`, one local worker on the 8 GPUs; the
#      makespan from the worker's start, the queue filled before it);
#   3. learned memory (`--mem auto`, a plain run): nothing declared, each job estimated from
#      the peaks of the sweep's jobs that ended (MemoryEstimates: a job's size is a number of
#      its command, as a batch size is, so its peak is estimated from that number once four
#      values were seen); its output kept (--output-dir), where gpusched reads that a job ran
#      out of memory;
#   4. a free-memory threshold, as task-spooler's: a job starts on the first GPU whose free
#      memory, read now, is at least its peak (a shell loop: one start per look, 0.1 s apart).
# A job sets up for SETUP seconds, then "allocates" its peak (a `process` line of its own in
# the fake machine), and runs out of memory (exit 1, counted) if the GPU then holds more than
# it has, saying so as PyTorch does; else it runs for its duration (1 to 3 s, scaled from
# hours). Reported: makespan, how many times a job ran out of memory, how many jobs did not
# end well (gpusched runs a job again that ran out of memory beside others), the mean of the
# memory in use over the run (sampled every 0.1 s).
# Run by hand from the repository root, after building the tests (build/, for the fake
# driver):  bench/memory_packing.sh
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-200}
SETUP=${SETUP:-0.3}
FAKE_DRIVER=${FAKE_DRIVER:-$PWD/build/tests/fake-driver}
[ -e "$FAKE_DRIVER/libnvidia-ml.so.1" ] || { echo "build the tests first (no $FAKE_DRIVER)" >&2; exit 1; }

source bench/common.sh
start_work
machine

export LD_LIBRARY_PATH=$FAKE_DRIVER GPUSCHED_FAKE_GPUS=$work/machine GPUSCHED_DB=$work/queue.db
export CUDA_DEVICE_ORDER=PCI_BUS_ID
total_mib=81920
base() {
  for g in 0 1 2 3 4 5 6 7; do
    printf 'gpu GPU-%08d-0000-0000-0000-000000000000 00000000:%02X:00.0 %d 0 Fake 80GB\n' "$g" $((16 + g)) "$total_mib"
  done
}

# The sweep: "PEAK_MIB DURATION" per job, the same every run.
awk -v n="$JOBS" 'BEGIN { srand(42); for (i = 0; i < n; i++)
  printf "%d %.2f\n", (4 + rand() * 56) * 1024, 1 + rand() * 2 }' > "$work/sweep"

# A job: set up, allocate, fail if the GPU is then over its memory, else run; what it
# allocated is freed as it exits. The machine file changes under a lock, and is renamed in
# whole, so that NVML's reader never sees half of it.
export BENCH_MACHINE=$work/machine BENCH_SETUP=$SETUP BENCH_TOTAL=$total_mib BENCH_OOMS=$work/ooms
export BENCH_DONE=$work/done
cat > "$work/job.sh" <<'JOB'
#!/bin/sh
peak=$1 seconds=$2 gpu=$CUDA_VISIBLE_DEVICES pid=$$ m=$BENCH_MACHINE
sleep "$BENCH_SETUP"
free() {
  flock "$m.lock" sh -c 'grep -v "^process [0-9]* $1 " "$2" > "$2.$1"; mv "$2.$1" "$2"' free "$pid" "$m"
}
trap free EXIT
used=$(flock "$m.lock" sh -c 'echo "process $1 $2 $3" >> "$4"
  awk -v g="$1" '\''$1 == "process" && $2 == g { s += $4 } END { print s + 0 }'\'' "$4"' \
  allocate "$gpu" "$pid" "$peak" "$m")
if [ "$used" -gt "$BENCH_TOTAL" ]; then
  echo oom >> "$BENCH_OOMS"
  echo 'RuntimeError: CUDA error: out of memory' >&2 # as PyTorch says it
  exit 1
fi
sleep "$seconds"
echo done >> "$BENCH_DONE"
JOB
chmod +x "$work/job.sh"

# The mean memory in use over all GPUs while the sweep runs, as a share of their total.
sample_memory() {
  while :; do
    awk '$1 == "process" { s += $4 } END { print s + 0 }' "$work/machine"
    sleep 0.1
  done > "$work/memory"
}

report() {
  local name=$1 began=$2 ended=$3
  local ooms=0 done=0
  [ -e "$work/ooms" ] && ooms=$(wc -l < "$work/ooms")
  [ -e "$work/done" ] && done=$(wc -l < "$work/done")
  local used
  used=$(awk -v t=$((8 * total_mib)) '{ s += $1 } END { printf "%.0f", NR ? 100 * s / NR / t : 0 }' "$work/memory")
  printf '| %s | %.1f s | %d | %d | %s %% |\n' "$name" "$(echo "$ended - $began" | bc)" "$ooms" \
    $((JOBS - done)) "$used"
}

# run_way NAME RUN [FILL]: FILL, where given, fills the queue before the makespan begins (a
# queue is filled before its worker runs it; how long that took is said apart).
run_way() {
  local name=$1 run=$2 fill=${3:-}
  base > "$work/machine"; rm -rf "$work/ooms" "$work/done" "$work/queue.db"*
  if [ -n "$fill" ]; then
    local filled=$(now)
    "$fill"
    filled_in=$(echo "$(now) - $filled" | bc)
  fi
  sample_memory & local sampler=$!
  local began ended
  began=$(now)
  "$run"
  ended=$(now)
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  report "$name" "$began" "$ended"
}

one_per_gpu() {
  awk -v job="$work/job.sh" '{ print job, $1, $2 }' "$work/sweep" |
    "$gpusched" -q --no-lock --gpus 0-7 || true
}

submit_declared() {
  while read -r peak seconds; do
    "$gpusched" submit -q --no-start --name sweep --mem "${peak}M" -- "$work/job.sh" "$peak" "$seconds" > /dev/null
  done < "$work/sweep"
}

declared() {
  "$gpusched" worker -q --no-lock --gpus 0-7 2> /dev/null & local worker=$!
  "$gpusched" wait sweep > /dev/null || true
  "$gpusched" worker --stop > /dev/null; wait "$worker" || true
}

learned() {
  awk -v job="$work/job.sh" '{ print job, $1, $2 }' "$work/sweep" |
    "$gpusched" -q --no-lock --gpus 0-7 --mem auto --output-dir "$work/out" || true
}

threshold() {
  local pending=() line
  while read -r line; do pending+=("$line"); done < "$work/sweep"
  local next=0 started=()
  while [ "$next" -lt "${#pending[@]}" ]; do
    read -r peak seconds <<< "${pending[$next]}"
    local gpu
    gpu=$(awk -v need="$peak" -v t=$total_mib '$1 == "process" { u[$2] += $4 }
      END { for (g = 0; g < 8; g++) if (t - u[g] >= need) { print g; exit } }' "$work/machine")
    if [ -n "$gpu" ]; then
      CUDA_VISIBLE_DEVICES=$gpu "$work/job.sh" "$peak" "$seconds" &
      started+=($!) next=$((next + 1))
    fi
    sleep 0.1 # one start per look, as task-spooler's
  done
  wait "${started[@]}" || true
}

echo "# $JOBS jobs, peaks 4-60 GiB, 1-3 s each after ${SETUP} s of set-up, 8 GPUs of 80 GiB"
echo "| way | makespan | out of memory | jobs failed | memory in use (mean) |"
echo "| --- | --- | --- | --- | --- |"
run_way "one job per GPU" one_per_gpu
run_way "gpusched submit --mem (declared)" declared submit_declared
run_way "gpusched --mem auto (learned)" learned
run_way "free-memory threshold (task-spooler)" threshold
echo "(the declared way's $JOBS submissions, one \`gpusched submit\` each, took $filled_in s before its worker started)"
# What the order of starts allows at best on this sweep, with no overhead at all.
python3 bench/memory_packing_model.py "$work/sweep" 8 "$total_mib" "$SETUP"
