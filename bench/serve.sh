#!/usr/bin/env bash
# Benchmarks `gpusched serve` on this machine. Run by hand from the repository root
# (apt-get install -y hyperfine curl): bench/serve.sh
#  1. with 100,000 jobs queued: the page, the queue's first page (served from the last look)
#     and a page from deep in the queue (read from SQLite), against `gpusched queue --json`
#     and `gpusched status --json` in the same run (what one types without the server);
#  2. from a `gpusched submit` to the `queue` event that shows the job, on an open event
#     stream (SAMPLES times);
#  3. the server's CPU over IDLE seconds with 24 event streams open (a lab's open pages) and
#     nothing changing.
set -euo pipefail
cd "$(dirname "$0")/.."

SAMPLES=${SAMPLES:-20}
IDLE=${IDLE:-60}

source bench/common.sh
start_work
export XDG_STATE_HOME=$work/state
"$gpusched" submit --no-start < <(repeat 100000 "true") > /dev/null
"$gpusched" serve --gpus 0,1 --listen 127.0.0.1:0 > "$work/url" 2> "$work/serve.log" &
server=$!
background+=("$server")
until [ -s "$work/url" ]; do sleep 0.05; done
base=$(sed 's|/[#?]token=.*||' "$work/url")

machine
echo "# $("$gpusched" --version)"

echo; echo "## 1. Reading a queue of 100,000 jobs"
hyperfine -N --warmup 3 --runs 30 \
  -n "page (/)" "curl -s -o /dev/null $base/" \
  -n "/api/queue (first 50)" "curl -s -o /dev/null $base/api/queue" \
  -n "/api/queue?from=99950" "curl -s -o /dev/null '$base/api/queue?from=99950&count=50'" \
  -n "/api/status" "curl -s -o /dev/null $base/api/status" \
  -n "gpusched queue --json" "$gpusched queue --json" \
  -n "gpusched status --json --gpus 0,1" "$gpusched status --json --gpus 0,1"

echo; echo "## 2. From submit to the open page's event, $SAMPLES samples"
python3 - "$base" "$gpusched" "$SAMPLES" <<'PY'
import http.client, json, statistics, subprocess, sys, time, urllib.parse
base, gpusched, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = urllib.parse.urlparse(base)
connection = http.client.HTTPConnection(url.hostname, url.port)
connection.request("GET", "/api/events")
stream = connection.getresponse()

def next_queued():
    event, data = None, []
    while True:
        line = stream.fp.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and event:
            if event == "queue":
                return json.loads("\n".join(data))["queued"]
            event, data = None, []

last = next_queued()
delays = []
for _ in range(samples):
    began = time.monotonic()
    subprocess.run([gpusched, "submit", "--no-start", "--", "true"], check=True, capture_output=True)
    while next_queued() == last:
        pass
    delays.append((time.monotonic() - began) * 1000)
    last += 1
print(f"median {statistics.median(delays):.0f} ms, max {max(delays):.0f} ms (submit itself included)")
PY

echo; echo "## 3. The server's CPU with 24 open event streams, nothing changing, ${IDLE} s"
for _ in $(seq 24); do
  curl -s -N "$base/api/events" > /dev/null &
  background+=("$!")
done
sleep 2
ticks() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
before=$(ticks)
sleep "$IDLE"
after=$(ticks)
hz=$(getconf CLK_TCK)
echo "$(( (after - before) * 1000 / hz )) ms of CPU in ${IDLE} s ($(awk -v t=$(( after - before )) -v hz="$hz" -v s="$IDLE" 'BEGIN { printf "%.2f", 100 * t / hz / s }') % of one core)"
