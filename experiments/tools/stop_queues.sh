#!/usr/bin/env bash
# Stop this checkout's experiment queues and the runs they started, and wait until every
# one has exited, so that each run's last backup is complete on disk (backups are written
# to a new file, then pointed at) before it is committed:
#
#   bash experiments/tools/stop_queues.sh && git add experiments/in_flight experiments/*/results
#
# A queue runs from the checkout's root (it cds there) and so do the runs it starts: only
# processes whose working directory is this checkout are stopped, never another
# checkout's. Start the same queue commands again to resume every run.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
QUEUES='experiments/[a-z_]+/([a-z]+_)?queue\.sh'
RUNS='-m training\.train|keras_gated\.cli import main'

ours() {  # ours PATTERN: the pids matching PATTERN that run in this checkout
  local pid
  for pid in $(pgrep -f -- "$1"); do
    [ "$pid" = "$$" ] && continue
    [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$root" ] && echo "$pid"
  done
}

queues=$(ours "$QUEUES")
[ -n "$queues" ] && kill $queues 2>/dev/null  # the queues first: they start no new run
runs=$(ours "$RUNS")
[ -n "$runs" ] && kill $runs 2>/dev/null
for _ in $(seq 120); do
  [ -z "$(ours "$QUEUES")$(ours "$RUNS")" ] && { echo "stopped: ${queues:-no queue} ${runs:-no run}" | tr '\n' ' '; echo; exit 0; }
  sleep 1
done
echo "stop_queues: still running after 120 s: $(ours "$QUEUES") $(ours "$RUNS")" >&2
exit 1
