#!/bin/sh
# record_job.sh DIR SECONDS TAG: a job that sleeps SECONDS and appends one line to DIR/runs.log:
# TAG JOB_ID GPU START END (epoch seconds; JOB_ID is 0 outside a scheduler, as under
# `gpusched exec`). One short append is atomic, so lines never mix.
start=$(date +%s.%N)
sleep "$2"
end=$(date +%s.%N)
echo "$3 ${GPUSCHED_JOB_ID:-0} $CUDA_VISIBLE_DEVICES $start $end" >> "$1/runs.log"
