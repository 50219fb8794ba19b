#!/usr/bin/env bash
# Time and peak RSS of `gpusched hypersearch` on a 10^6-combination grid in both grid modes,
# and for 10 samples of a 10^12-combination grid. Run by hand from the repository root
# (needs Debian's hyperfine and time): bench/hypersearch.sh
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/common.sh
values=$(seq 100 | xargs)
grid="$gpusched hypersearch 'python3 train.py --a {a} --b {b} --c {c}' -p a $values -p b $values -p c $values"
huge="$gpusched hypersearch 'python3 train.py --a {a} --b {b}' -p a range:0:1000000 -p b range:0:1000000 --n-samples 10"

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "## time (hyperfine, output into a pipe read by wc -l)"
hyperfine --runs 5 --warmup 1 --export-markdown /tmp/hypersearch.md \
  -n "10^6 grid, grid" "$grid --sampling-mode grid | wc -l" \
  -n "10^6 grid, shuffled_grid" "$grid --sampling-mode shuffled_grid --seed 1 | wc -l" \
  -n "10 samples of 10^12" "$huge --seed 1 | wc -l" >/dev/null
cat /tmp/hypersearch.md

echo "## peak RSS"
for mode in grid shuffled_grid; do
  /usr/bin/time -f "%M" -o /tmp/hypersearch.rss bash -c "$grid --sampling-mode $mode > /dev/null"
  echo "10^6 grid, $mode: $(cat /tmp/hypersearch.rss) KiB"
done
/usr/bin/time -f "%M" -o /tmp/hypersearch.rss bash -c "$huge > /dev/null"
echo "10 samples of 10^12: $(cat /tmp/hypersearch.rss) KiB"
rm -f /tmp/hypersearch.rss /tmp/hypersearch.md
