#!/bin/sh
# Names the ten slowest tests of the last ctest run, from the log it wrote: ctest runs this
# after its tests (CTEST_CUSTOM_POST_TEST, in the CTestCustom.cmake the build writes), with
# its Testing/Temporary directory. The log being written is the newest LastTest file there
# (LastTest.log.tmp while ctest runs, LastTest_TAG.log under -T); LastTestsDisabled.log,
# written when a test is skipped, is not one.
directory=$1
log=$(ls -t "$directory"/LastTest.log* "$directory"/LastTest_*.log* 2>/dev/null | head -1)
[ -n "$log" ] && [ -r "$log" ] || exit 0
awk '
  / Test: / { name = $3 }
  /^Test time = / && name != "" { printf "%8.2f s  %s\n", $4, name; name = "" }
' "$log" | sort -rn | head -10 | awk 'NR == 1 { print "The ten slowest tests:" } { print }'
