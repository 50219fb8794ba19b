# Sourced by the benchmark scripts, from the repository root: builds the release binary and
# the benchmark helpers in build-bench, and names them.
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_BENCH=ON \
      -DBUILD_TESTING=OFF >/dev/null
cmake --build build-bench >/dev/null
gpusched=$PWD/build-bench/src/gpusched
stamp=$PWD/build-bench/bench/stamp
floor=$PWD/build-bench/bench/spawn_floor

# repeat N LINE: LINE N times (yes | head would die of SIGPIPE under pipefail).
repeat() { awk -v n="$1" -v line="$2" 'BEGIN { for (i = 0; i < n; i++) print line }'; }
