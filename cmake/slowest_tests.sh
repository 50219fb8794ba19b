#!/bin/sh
# Names the ten slowest tests of the last ctest run, from the log it wrote: ctest runs this
# after its tests (CTEST_CUSTOM_POST_TEST, in the CTestCustom.cmake the build writes).
# While ctest runs, its log is still LastTest.log.tmp.
log=$1
[ -r "$log.tmp" ] && log=$log.tmp
[ -r "$log" ] || exit 0
awk '
  / Test: / { name = $3 }
  /^Test time = / && name != "" { printf "%8.2f s  %s\n", $4, name; name = "" }
' "$log" | sort -rn | head -10 | {
  echo "The ten slowest tests:"
  cat
}
