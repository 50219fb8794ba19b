#!/bin/sh
# A stand-in for a training script: reports the GPU it was given and works for a moment.
# Usage: fake_train.sh NAME SECONDS
echo "$1: training on GPU $CUDA_VISIBLE_DEVICES (job $GPUSCHED_JOB_ID)"
sleep "$2"
echo "$1: done"
