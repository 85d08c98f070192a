# The run queue the paper experiments share; sourced by experiments/<paper>/queue.sh after
# it sets PAPER. Every run is `python -m training.train` (one thread, nice 19) into
# $SCIENCE_RUNS/<name>/ (experiments/in_flight/$PAPER/, ignored by git) with its output in
# $LOG_DIR/<name>.log (appended: a resumed run keeps the earlier lines). A run that ends
# (finished, or stopped by a NaN loss) keeps its text records (log.csv, gates.csv,
# metrics.json, fingerprint.json, run_state.json, the output as train.log) and a
# status.json in $RESULTS/<name>/ (experiments/$PAPER/results/, tracked); a run with a
# status.json there is skipped (delete it to run again), an unfinished one resumes from its
# backup: after a crash, a kill or a new session, start the same command again. A run that
# fails otherwise (e.g. the library does not import while someone edits it) is retried
# after each of $RETRY_WAITS seconds, and the paper's list is walked a second time at the
# end. $RESULTS/queue.log says what started and ended. One queue per paper runs at a time
# ($LOG_DIR/queue.lock), and beside it at most one more that sets ONLY=<glob>: it takes
# only the runs whose name the glob matches (ONLY='release.preactresnet20.*' trains that
# run on the second core while the first queue works through the rest; $LOG_DIR/queue.1.lock).
# A run whose folder another process is training (its run.lock held) is left to it.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1

SCIENCE_RUNS=${SCIENCE_RUNS:-experiments/in_flight/$PAPER}
LOG_DIR=${LOG_DIR:-$SCIENCE_RUNS/logs}
RESULTS=${RESULTS:-experiments/$PAPER/results}
PYTHON=${PYTHON:-python}
RETRY_WAITS=${RETRY_WAITS:-"120 300 600"}  # seconds before each retry of a failed run
export KERAS_BACKEND=jax  # the FC nets; a run may set another for itself
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
export TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1
mkdir -p "$SCIENCE_RUNS" "$LOG_DIR" "$RESULTS"
if ! "$PYTHON" -c "import keras" 2> /dev/null; then
  echo "queue: $PYTHON cannot import keras: activate the" \
    "project's environment (or set PYTHON) and start again" >&2
  exit 2
fi

ONLY=${ONLY:-}
exec 9> "$LOG_DIR/queue.lock"
if ! flock -n 9; then
  exec 9>&-
  if [ -z "$ONLY" ]; then
    echo "queue: another $PAPER queue holds $LOG_DIR/queue.lock; not starting a second one" \
      "(a second one must name its runs: ONLY=<glob>)" >&2
    exit 1
  fi
  exec 9> "$LOG_DIR/queue.1.lock"
  if ! flock -n 9; then
    echo "queue: two $PAPER queues already run here; not starting a third" >&2
    exit 1
  fi
fi

note() { echo "$(date -u '+%Y-%m-%d %H:%M:%S') $*" >> "$RESULTS/queue.log"; }

# status_of NAME: the status recorded in $RESULTS/NAME/status.json, or nothing.
status_of() {
  local file="$RESULTS/$1/status.json"
  [ -f "$file" ] && sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p' "$file" | head -n 1
}

# keep NAME STATUS: copy the text records of $SCIENCE_RUNS/NAME to $RESULTS/NAME, with a
# status.json that says STATUS (never the weights), then empty the run's state in flight:
# its folder and its log go, so that nothing of it is committed again and a later run of
# the same name starts afresh (a folder with metrics.json but no fingerprint.json would
# pass for finished). Two exceptions, set for the call:
#   KEEP_RUN=1     a release run, which training.release reads: only its backup/ goes;
#   KEEP_BACKUP=1  a later step reads the run's weights, then removes the folder itself.
keep() {
  local name=$1 state=$2 out="$SCIENCE_RUNS/$1" dest="$RESULTS/$1" file
  mkdir -p "$dest"
  for file in log.csv gates.csv metrics.json fingerprint.json run_state.json; do
    if [ -f "$out/$file" ]; then cp "$out/$file" "$dest/$file"; fi
  done
  if [ -f "$LOG_DIR/$name.log" ]; then cp "$LOG_DIR/$name.log" "$dest/train.log"; fi
  printf '{"status": "%s", "marked": "%s"}\n' "$state" "$(date -u)" > "$dest/status.json"
  if [ "${KEEP_BACKUP:-0}" = 1 ]; then
    return 0
  elif [ "${KEEP_RUN:-0}" = 1 ]; then
    rm -rf "${out:?}/backup"
  else
    rm -rf "${out:?}"
    rm -f "$LOG_DIR/$name.log"
  fi
}

# run NAME ARGS...: python -m training.train ARGS --dataset $DATASET (fashion_mnist unless
# set for the call) into NAME.
run() {
  local name=$1 dataset=${DATASET:-fashion_mnist}; shift
  local out="$SCIENCE_RUNS/$name" log="$LOG_DIR/$name.log" state
  # shellcheck disable=SC2053  # ONLY is a glob
  [ -z "$ONLY" ] || [[ $name == $ONLY ]] || return 0
  if [ -f "$out/run.lock" ] && ! flock -n "$out/run.lock" true; then
    note "skip $name: another process is training it ($out/run.lock)"
    return 0
  fi
  state=$(status_of "$name")
  case "$state" in
    "") ;;
    diverged) note "skip $name: its loss went NaN ($RESULTS/$name/status.json)"; return 0;;
    held) note "skip $name: held ($RESULTS/$name/status.json says why)"; return 0;;
    *) return 0;;
  esac
  local rc wait
  for wait in $RETRY_WAITS stop; do
    note "start $name: $*"
    # The paper runs train on the whole training split (a run's own --validation-split,
    # given later, wins): training.train's default would hold a tenth out.
    nice -n 19 "$PYTHON" -m training.train --validation-split 0 "$@" --dataset "$dataset" --out "$out" \
      --verbose 2 >> "$log" 2>&1
    rc=$?
    note "end $name: exit $rc"
    if [ "$rc" -eq 0 ]; then
      keep "$name" finished
      return 0
    fi
    if [ "$rc" -eq 1 ] && tail -n 5 "$log" | grep -q "loss became NaN"; then
      keep "$name" diverged
      return 0
    fi
    if [ "$wait" = stop ]; then
      note "give up on $name for this pass (see $log)"
      return 0
    fi
    sleep "$wait"
  done
}
