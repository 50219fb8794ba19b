# Sourced by the benchmark scripts, from the repository root: builds the release binary and
# the benchmark helpers in build-bench, and names them.
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_BENCH=ON \
      -DBUILD_TESTING=OFF >/dev/null
cmake --build build-bench >/dev/null
gpusched=$PWD/build-bench/src/gpusched
stamp=$PWD/build-bench/bench/stamp
floor=$PWD/build-bench/bench/spawn_floor

# start_work: a directory of the benchmark's own ($work), with leases of its own in it, so
# that a benchmark never waits for (or blocks) real work on this machine; at exit, the
# processes listed in `background` are killed and the directory removed.
background=()
start_work() {
  work=$(mktemp -d /tmp/gpusched-bench.XXXXXX)
  trap 'kill "${background[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
  export GPUSCHED_LOCK_DIR=$work/leases
}

now() { date +%s.%N; }

# The first line of each benchmark's report.
machine() {
  echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r)"
}

# repeat N LINE: LINE N times (yes | head would die of SIGPIPE under pipefail).
repeat() { awk -v n="$1" -v line="$2" 'BEGIN { for (i = 0; i < n; i++) print line }'; }
