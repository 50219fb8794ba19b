#!/usr/bin/env bash
# Benchmarks the Redis queue on this machine, against a redis-server on a loopback port.
# Run by hand from the repository root (needs Debian's redis-server): bench/queue.sh
#  1. throughput: JOBS trivial jobs (`true`) through the queue to two workers, from the
#     moment submit starts until `submit --wait` has seen every result;
#  2. latency: the time from a job's arrival in Redis (its server-side `submitted` time) to
#     its start on an idle worker (the job is bench/stamp, which notes when it starts).
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-5000}
SAMPLES=${SAMPLES:-50}

source bench/common.sh
start_work
port=$(( 20000 + RANDOM % 20000 ))
url=redis://127.0.0.1:$port
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --daemonize no > "$work/redis.log" 2>&1 &
redis=$!
workers=()
cleanup() { kill "${workers[@]}" 2>/dev/null || true; kill "$redis"; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done

machine
echo "# $("$gpusched" --version), $(redis-server --version | cut -d' ' -f1-3)"

echo; echo "## 1. Throughput: $JOBS 'true' jobs, two workers with 4 GPU ids each"
for w in a b; do
  "$gpusched" worker -q --redis "$url" --queue throughput \
    --gpus "GPU-${w}0,GPU-${w}1,GPU-${w}2,GPU-${w}3" &
  workers+=($!)
done
repeat "$JOBS" true > "$work/true.txt"
start=$(date +%s.%N)
"$gpusched" submit -q --redis "$url" --queue throughput --wait "$work/true.txt"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$JOBS" \
  'BEGIN { printf "%d jobs in %.2f s: %.0f jobs/s\n", n, e - s, n / (e - s) }'
kill -USR1 "${workers[@]}"; wait "${workers[@]}"; workers=()

echo; echo "## 2. Latency: arrival in Redis to start on an idle worker ($SAMPLES jobs, one at a time)"
STAMP_LOG=$work/stamps.log "$gpusched" worker -q --redis "$url" --queue latency --gpus GPU-10 \
  --shell "$stamp" &
workers+=($!)
sleep 0.5
for i in $(seq "$SAMPLES"); do
  echo 0 | "$gpusched" submit -q --redis "$url" --queue latency --wait
done
kill -USR1 "${workers[@]}"; wait "${workers[@]}"; workers=()
for id in $(seq "$SAMPLES"); do
  redis-cli -p "$port" HGET "gpusched:{latency}:job:$id" submitted
done > "$work/submitted.txt"
paste -d' ' "$work/submitted.txt" "$work/stamps.log" |
  awk '{ printf "%.0f\n", ($3 / 1e9 - $1) * 1e6 }' | sort -n |
  awk '{ v[NR] = $1 } END { printf "median %d us, p90 %d us, max %d us (%d jobs)\n",
                            v[int((NR + 1) / 2)], v[int(NR * 0.9)], v[NR], NR }'
