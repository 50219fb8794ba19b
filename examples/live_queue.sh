#!/bin/sh
# A named pipe as a live queue: gpusched keeps reading it while writers come and go,
# until it is told to drain (SIGUSR1: what was written still runs) or stop (SIGTERM: what did
# not start is named in the log and saved to a file that can be given back to gpusched).
set -eu
gpusched=${GPUSCHED:-build/src/gpusched}
queue=$(mktemp -u /tmp/gpusched-queue.XXXXXX)

"$gpusched" --gpus 0,1 --fifo "$queue" &
scheduler=$!
while [ ! -p "$queue" ]; do sleep 0.05; done

echo "examples/fake_train.sh first 1" > "$queue"     # one writer
{                                                    # a later one, with two commands
  echo "examples/fake_train.sh second 1"
  echo "examples/fake_train.sh third 1"
} > "$queue"

sleep 1.5                 # long enough for all three to have started
kill -USR1 "$scheduler"   # drain: read no more, run what was written, then exit
wait "$scheduler"
rm -f "$queue"
