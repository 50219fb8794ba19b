#!/usr/bin/env bash
# Benchmarks the fair sharing of GPUs on this machine. Run by hand from the repository root
# (needs hyperfine and python3, from Debian): bench/fair_share.sh
#  1. a waiter's wait against the holder's job length: a run holds one GPU with jobs of L
#     seconds; `gpusched exec` arrives at a random moment and waits for the GPU, which the run
#     hands over at its next job boundary. The wait, over L, is at most 1 when it works.
#  2. the cost per job boundary: JOBS trivial jobs on one GPU, each a boundary, alone and with
#     a waiter that is never owed the GPU (it says it has used far more GPU time), so that the
#     run looks at it at every boundary and keeps the GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

LENGTHS=${LENGTHS:-"0.5 1 2"} # the holder's job lengths, in seconds
REPEATS=${REPEATS:-5}         # waiters for each length
JOBS=${JOBS:-2000}            # trivial jobs for the cost per boundary
RUNS=${RUNS:-5}

source bench/common.sh
start_work
# A UUID prefix, not an index: no CUDA probe, so only the lease machinery is measured.
gpu=GPU-fa1e
stats() {
  sort -g | awk '{ v[NR] = $1 } END {
    printf "median %.2f, max %.2f (%d waiters)\n", v[int((NR + 1) / 2)], v[NR], NR }'
}

machine
echo "# $("$gpusched" --version | head -1)"

echo; echo "## 1. A waiter's wait, over the holder's job length L"
for length in $LENGTHS; do
  rm -f "$work/waits.txt"
  for i in $(seq "$REPEATS"); do
    repeat 1000 "sleep $length" > "$work/holder.txt"
    "$gpusched" -q --gpus $gpu "$work/holder.txt" &
    holder=$!
    # A random moment within a job of the holder's, after its first has started.
    sleep "$(awk -v l="$length" -v s="$RANDOM" 'BEGIN { printf "%.3f", 0.2 + l * (s % 1000) / 1000 }')"
    arrived=$(now)
    "$gpusched" exec -q --gpus $gpu -- sh -c "date +%s.%N > $work/started"
    awk -v a="$arrived" -v s="$(cat "$work/started")" -v l="$length" \
      'BEGIN { printf "%.3f\n", (s - a) / l }' >> "$work/waits.txt"
    kill -TERM "$holder"; wait "$holder" || true
  done
  echo "L = $length s: wait / L $(stats < "$work/waits.txt")"
done

echo; echo "## 2. Cost per job boundary: $JOBS 'true' jobs on one GPU, alone and with a waiter that is not owed it"
repeat "$JOBS" true > "$work/true.txt"
# Finds the lease's name while a holder has it, then keeps a connection to whoever holds it,
# saying it has used 10^12 GPU-seconds: never owed the GPU, looked at at every boundary.
"$gpusched" exec -q --gpus $gpu -- sleep 1 &
sleep 0.5
name=$(awk -v g="$gpu" '$8 ~ "^@gpusched-lease/.*/" g "$" { print substr($8, 2); exit }' /proc/net/unix)
wait
[ -n "$name" ] || { echo "the lease's name was not found" >&2; exit 1; }
cat > "$work/waiter.py" <<'PY'
import socket, sys, time
name = sys.argv[1]
while True:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("\0" + name)
        s.sendall(f"gpusched-waiter 1 {name} {time.time():.3f} 1000000000000 1 1\n".encode())
        s.recv(1)  # until the holder lets go
        s.close()
    except OSError:
        time.sleep(0.001)
PY
hyperfine --runs "$RUNS" --warmup 1 --export-markdown "$work/alone.md" \
  -n "alone" "$gpusched -q --gpus $gpu $work/true.txt" >/dev/null
python3 "$work/waiter.py" "$name" &
background+=($!)
hyperfine --runs "$RUNS" --warmup 1 --export-markdown "$work/waited.md" \
  -n "with a waiter" "$gpusched -q --gpus $gpu $work/true.txt" >/dev/null
cat "$work/alone.md"; tail -1 "$work/waited.md"
alone=$(awk -F'|' 'NR == 3 { print $3 }' "$work/alone.md" | awk '{ print $1 }')
waited=$(awk -F'|' 'NR == 3 { print $3 }' "$work/waited.md" | awk '{ print $1 }')
awk -v a="$alone" -v w="$waited" -v n="$JOBS" \
  'BEGIN { printf "a waiter at every job boundary: %+.0f us per boundary (%+.3f s over %d), time ratio %.3f\n", (w - a) * 1e6 / n, w - a, n, w / a }'
