#!/usr/bin/env bash
# The training runs behind the released checkpoints, one after the other, each followed by
# its release (zoo/<weight id>/, registered in its family's keras_gated/models/*.json).
#
# Each run keeps its resume state in training/runs/<weight id>/ (ignored by git: copy the
# folder to resume on a new machine); starting this script again resumes the unfinished
# run and skips finished ones. Once released, a run's backup/ is removed.
# Logs go to $LOG_DIR (outside the repo).
#
#   nohup bash training/release_jobs.sh > /dev/null 2>&1 &
#
# An optional argument picks the runs of one data set, so that two queues can share the
# machine (the CIFAR runs use TensorFlow's thread pool, the small FC nets leave cores idle):
#
#   nohup bash training/release_jobs.sh cifar10 > /dev/null 2>&1 &
#   nohup bash training/release_jobs.sh fashion_mnist > /dev/null 2>&1 &
#
# Model names after the data set restrict a queue to those models. The depth-50 FC nets are
# too small to use two cores (and a second job on the same cores slows both 6-20x), so on a
# 2-core machine they train fastest as two single-core queues:
#
#   export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
#   nohup taskset -c 0 bash training/release_jobs.sh fashion_mnist plainnet50 highwayfc50 &
#   nohup taskset -c 1 bash training/release_jobs.sh fashion_mnist gplainnet50 resnetfc50 gresnetfc50 &
set -u
cd "$(dirname "$0")/.."
LOG_DIR=${LOG_DIR:-../logs}
ONLY_DATASET=${1:-}
case $ONLY_DATASET in
  ""|cifar10|fashion_mnist) ;;
  *) echo "usage: $0 [cifar10|fashion_mnist [MODEL ...]] (got '$ONLY_DATASET')" >&2; exit 2 ;;
esac
shift $(( $# > 0 ? 1 : 0 ))
ONLY_MODELS=" $* "
mkdir -p "$LOG_DIR"

RESNET20_NOTE="He et al. 2016 (*Deep Residual Learning*, CIFAR-10) report **91.25 %** test \
accuracy for ResNet-20 after 164 epochs on the original, lossless CIFAR-10. This checkpoint \
had a fixed budget of 40 epochs (the recipe's schedule compressed 4.1x) and the JPEG q75 \
copy of the data, both of which cost accuracy; compare it with its twin, trained with the \
same recipe, budget, seed and data: gresnet20.cifar10 (gated) vs preactresnet20.cifar10 \
(ungated)."

log() { echo "$(date -u +%FT%TZ) $*" >> "$LOG_DIR/jobs.log"; }

MODE=plan   # the first pass over the runs below only lists them, to check the arguments
PLANNED=" "
run() {  # run BACKEND MODEL DATASET EPOCHS [NOTES [TWIN_WEIGHT_ID]]
  local backend=$1 model=$2 dataset=$3 epochs=$4 notes=${5:-} twin=${6:-}
  local id="$model.$dataset"
  if [ -n "$ONLY_DATASET" ] && [ "$dataset" != "$ONLY_DATASET" ]; then
    return 0
  fi
  if [ $MODE = plan ]; then
    PLANNED+="$model "
    return 0
  fi
  if [ "$ONLY_MODELS" != "  " ] && [[ "$ONLY_MODELS" != *" $model "* ]]; then
    return 0
  fi
  if python -m training.release --is-released "$id"; then
    return 0  # released already
  fi
  log "start $id"
  # A release trains on the whole training split, as its recipe's paper, and is the last
  # epoch's model (nothing is selected on the validation data): --validation-split 0.
  KERAS_BACKEND=$backend python -m training.train --model "$model" --dataset "$dataset" \
    --epochs "$epochs" --validation-split 0 --out "training/runs/$id" --verbose 2 \
    >> "$LOG_DIR/$id.log" 2>&1
  local code=$?
  log "exit $code $id"
  [ $code -eq 0 ] || return $code
  # Two queues may finish at once: serialise the edits of the data files,
  # and look for the released twin inside the lock (whichever twin is released second
  # writes the comparison table into both cards).
  (
    flock 9
    twin_args=()
    if [ -n "$twin" ] && python -m training.release --is-released "$twin"; then
      twin_args=(--twin "$twin")
    fi
    KERAS_BACKEND=$backend python -m training.release "training/runs/$id" --register \
      --notes "$notes" ${twin_args[@]+"${twin_args[@]}"} >> "$LOG_DIR/$id.log" 2>&1 \
      && rm -rf "training/runs/$id/backup"
  ) 9> "$LOG_DIR/release.lock"
  log "release $? $id"
}

all_runs() {
  run tensorflow gresnet20 cifar10 40 "$RESNET20_NOTE" preactresnet20.cifar10
  run tensorflow preactresnet20 cifar10 40 "$RESNET20_NOTE" gresnet20.cifar10
  run tensorflow gwrn_16_2 cifar10 30 "The first released GWideResNet: GWideResNet(2, 2), \
the Wide ResNet recipe compressed to 30 epochs (the paper trains 200). Residual Gates Table 4 \
reports 4.66 % error for G-WRN (2,4) at full length; no (2,2) number is published."
  for depth in 10 50; do
    for model in plainnet gplainnet resnetfc gresnetfc highwayfc; do
      twin=""  # gated vs ungated pairs: whichever is released second writes the comparison
      case $model in plainnet) twin="gplainnet$depth.fashion_mnist" ;;
                     gplainnet) twin="plainnet$depth.fashion_mnist" ;;
                     resnetfc) twin="gresnetfc$depth.fashion_mnist" ;;
                     gresnetfc) twin="resnetfc$depth.fashion_mnist" ;; esac
      run jax "$model$depth" fashion_mnist 100 "Residual Gates Table 1 trains these nets on \
MNIST (gated nets beat their ungated twins, most at depth 50 and 100); this release uses \
Fashion-MNIST, a harder drop-in replacement, with the same recipe." "$twin"
    done
  done
}

all_runs
for model in $ONLY_MODELS; do
  if [[ "$PLANNED" != *" $model "* ]]; then
    echo "$0: no release run of '$model' for '$ONLY_DATASET'; runs:$PLANNED" >&2
    exit 2
  fi
done
MODE=run
all_runs
