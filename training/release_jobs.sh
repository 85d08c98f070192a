#!/usr/bin/env bash
# The training runs behind the released checkpoints (issue 5), one after the other.
# Each run keeps its resume state in training/runs/<weight id>/ (committed while a run is
# unfinished, so that a new machine resumes it); starting this script again resumes the
# unfinished run and skips the finished ones. Logs go to $LOG_DIR (outside the repo).
#
#   nohup bash training/release_jobs.sh > /dev/null 2>&1 &
set -u
cd "$(dirname "$0")/.."
LOG_DIR=${LOG_DIR:-../logs}
mkdir -p "$LOG_DIR"
run() {  # run BACKEND MODEL DATASET EPOCHS
  local backend=$1 model=$2 dataset=$3 epochs=$4
  local id="$model.$dataset"
  echo "$(date -u +%FT%TZ) start $id" >> "$LOG_DIR/jobs.log"
  KERAS_BACKEND=$backend python -m training.train --model "$model" --dataset "$dataset" \
    --epochs "$epochs" --out "training/runs/$id" --verbose 2 >> "$LOG_DIR/$id.log" 2>&1
  echo "$(date -u +%FT%TZ) exit $? $id" >> "$LOG_DIR/jobs.log"
}
run tensorflow gresnet20 cifar10 40
run tensorflow preactresnet20 cifar10 40
run tensorflow gwrn_16_2 cifar10 30
for depth in 10 50; do
  for model in plainnet gplainnet resnetfc gresnetfc highwayfc; do
    run jax "$model$depth" fashion_mnist 100
  done
done
