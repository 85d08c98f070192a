#!/usr/bin/env bash
# The Fashion-MNIST science runs behind docs/science.md, one after the other, each resumable.
#
#   nohup bash training/science_queue.sh > /dev/null 2>&1 &
#
# from the root of a source checkout. Every run is `python -m training.train` (JAX, one
# thread, nice 19) into $SCIENCE_RUNS/<name>/ with its output in $LOG_DIR/<name>.log
# (appended: a resumed run keeps the earlier lines); $LOG_DIR/queue.log says what started
# and ended. A run with metrics.json is finished and skipped, an unfinished one resumes
# from its backup: after a crash, a kill or a new session, start the same command again.
# A run whose loss went NaN is marked ($LOG_DIR/<name>.nan) and not retried (delete the
# marker to retry it). A run that fails otherwise (e.g. the library does not import while
# someone edits it) is retried after 2, 5 and 10 minutes, and the whole list is walked a
# second time at the end. At most one queue runs at a time ($LOG_DIR/queue.lock).
#
# Order:
#   a. gplainnet50, rg_mnist_fc, 100 epochs, k started at 0.5 -> gplainnet50.fashion_mnist
#      (the folder name is the weight id that training/release.py publishes);
#   b. highwayfc50, highway_mnist_fc (b_T = -2, He init): search over the activation of H
#      (relu, tanh) and lr with the last 10 % of the training split held out (10 epochs
#      each), then the recipe's 100 epochs with the best pair by final validation accuracy
#      on the full training split -> highwayfc50.fashion_mnist;
#   c. Residual Gates Tables 1-2 analogue at 20 epochs (rg_mnist_fc): d = 2, 10, 20, 50, 100
#      x plainnet / resnetfc / gplainnet / gresnetfc, then k_init 0.75 and 0.5 at d = 50
#      and 100 for gplainnet and gresnetfc -> rgtable.<model>[.k<k_init>].e20;
#   d. Highway Networks Fig. 1 analogue at $FIG1_EPOCHS epochs (highway_mnist_fc, He init,
#      tanh): d = 10, 20, 50, 100 x plain (71 units, no BN) / highway (50 units, b_T = -2),
#      each at the lrs of $FIG1_LRS -> hwfig1.<plainnet|highwayfc><d>.lr<lr>.e<epochs>;
#   e. Residual Gates Table 7 analogue on CIFAR-10 at $TABLE7_EPOCHS epochs (wrn_cifar):
#      WRN-16-2 and G-WRN-16-2 without batch norm, on TensorFlow ->
#      table7.<wrn|gwrn>_16_2_nobn.e<epochs>, then the follow-ups named in section e.
set -u
cd "$(dirname "$0")/.." || exit 1

SCIENCE_RUNS=${SCIENCE_RUNS:-training/runs/science}
LOG_DIR=${LOG_DIR:-training/runs/science/logs}
PYTHON=${PYTHON:-python}
LR_SEARCH=${LR_SEARCH:-"0.001 0.003 0.01 0.03"}
HIGHWAY_ACTIVATIONS=${HIGHWAY_ACTIVATIONS:-"relu tanh"}
TABLE_EPOCHS=${TABLE_EPOCHS:-20}
FIG1_EPOCHS=${FIG1_EPOCHS:-10}
FIG1_LRS=${FIG1_LRS:-"0.01 0.03"}
TABLE7_EPOCHS=${TABLE7_EPOCHS:-5}
RETRY_WAITS=${RETRY_WAITS:-"120 300 600"}  # seconds before each retry of a failed run
export KERAS_BACKEND=jax
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
export TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1
mkdir -p "$SCIENCE_RUNS" "$LOG_DIR"
if ! "$PYTHON" -c "import keras" 2> /dev/null; then
  echo "science_queue: $PYTHON cannot import keras: activate the" \
    "project's environment (or set PYTHON) and start again" >&2
  exit 2
fi

exec 9> "$LOG_DIR/queue.lock"
if ! flock -n 9; then
  echo "science_queue: another queue holds $LOG_DIR/queue.lock; not starting a second one" >&2
  exit 1
fi

note() { echo "$(date -u '+%Y-%m-%d %H:%M:%S') $*" >> "$LOG_DIR/queue.log"; }

# run NAME ARGS...: python -m training.train ARGS --dataset $DATASET (fashion_mnist unless
# set for the call) into NAME.
run() {
  local name=$1 dataset=${DATASET:-fashion_mnist}; shift
  local out="$SCIENCE_RUNS/$name" log="$LOG_DIR/$name.log"
  if [ -f "$out/metrics.json" ]; then
    return 0
  fi
  if [ -f "$LOG_DIR/$name.nan" ]; then
    note "skip $name: its loss went NaN ($LOG_DIR/$name.nan)"
    return 0
  fi
  local rc wait
  for wait in $RETRY_WAITS stop; do
    note "start $name: $*"
    nice -n 19 "$PYTHON" -m training.train "$@" --dataset "$dataset" --out "$out" \
      --verbose 2 >> "$log" 2>&1
    rc=$?
    note "end $name: exit $rc"
    if [ "$rc" -eq 0 ]; then
      return 0
    fi
    if [ "$rc" -eq 1 ] && tail -n 5 "$log" | grep -q "loss became NaN"; then
      date -u > "$LOG_DIR/$name.nan"
      return 0
    fi
    if [ "$wait" = stop ]; then
      note "give up on $name for this pass (see $log)"
      return 0
    fi
    sleep "$wait"
  done
}

queue_pass() {

# a. G-PlainNet-50 with k started at 0.5.
run gplainnet50.fashion_mnist --model gplainnet50 --recipe rg_mnist_fc --epochs 100 \
  --model-arg k_init=0.5

# b. Highway FC-50 with the Highway paper's init (He) and its search dimensions: activation
# of H (relu, tanh) x lr, 10 epochs each on the training split less its last tenth (held
# out), then the recipe's 100 epochs on the full training split with the best pair by final
# validation accuracy. (The first search, with Glorot init and relu, is kept as
# highwayfc50.lr<lr>.val10; both of its full runs collapsed.)
for act in $HIGHWAY_ACTIVATIONS; do
  for lr in $LR_SEARCH; do
    run "highwayfc50.he.$act.lr$lr.val10" --model highwayfc50 --recipe highway_mnist_fc \
      --epochs 10 --model-arg transform_bias=-2 --model-arg kernel_initializer=he_normal \
      --model-arg "activation=$act" --validation-split 0.1 --lr "$lr"
  done
done
# A full run that diverges (NaN) or ends at chance (test accuracy < 20 %) is set aside as
# highwayfc50.<act>.lr<lr>.full.collapsed, the pair is marked
# ($LOG_DIR/highwayfc50.full.<act>.lr<lr>.failed) and the next best pair is trained.
# While $LOG_DIR/highwayfc50.full.hold exists (it says why), the full run is skipped.
pick_pair() {
  "$PYTHON" - "$SCIENCE_RUNS" "$LOG_DIR" "$HIGHWAY_ACTIVATIONS" $LR_SEARCH <<'EOF'
"""The searched (activation, lr) with the highest final validation accuracy (ties: the
smaller lr; a run whose loss went NaN counts as diverged; a pair whose full run failed is
skipped), printed as "act lr"; nothing while a search run is unfinished. Writes
highwayfc50.search.json."""
import json
import sys
from pathlib import Path

root, log_dir, acts, lrs = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
results = {}
for act in acts:
    for lr in lrs:
        name = f"highwayfc50.he.{act}.lr{lr}.val10"
        key = f"{act} {lr}"
        if (root / name / "metrics.json").is_file():
            metrics = json.loads((root / name / "metrics.json").read_text())
            results[key] = {"val_accuracy": metrics["val_accuracy"],
                            "val_split": metrics["val_split"], "command": metrics["command"]}
        elif (log_dir / f"{name}.nan").is_file():
            results[key] = None  # diverged
failed = [key for key in results
          if (log_dir / "highwayfc50.full.{}.lr{}.failed".format(*key.split())).is_file()]
finite = {k: r for k, r in results.items() if r is not None and k not in failed}
if len(results) == len(acts) * len(lrs) and finite:
    best = max(finite, key=lambda k: (finite[k]["val_accuracy"], -float(k.split()[1])))
    (root / "highwayfc50.search.json").write_text(json.dumps(
        {"best": {"activation": best.split()[0], "lr": float(best.split()[1])},
         "init": "he_normal", "transform_bias": -2, "by": "final-epoch val_accuracy",
         "failed_full_runs": failed, "runs": results}, indent=2) + "\n")
    print(best)
EOF
}

full_run_failed() {  # the full run diverged or ended at chance
  local out="$SCIENCE_RUNS/highwayfc50.fashion_mnist"
  [ -f "$LOG_DIR/highwayfc50.fashion_mnist.nan" ] && return 0
  [ -f "$out/metrics.json" ] && "$PYTHON" -c \
    "import json, sys; sys.exit(json.load(open(sys.argv[1]))['test_accuracy'] >= 0.2)" \
    "$out/metrics.json"
}

while :; do
  if [ -f "$LOG_DIR/highwayfc50.full.hold" ]; then
    note "skip highwayfc50.fashion_mnist: held ($LOG_DIR/highwayfc50.full.hold says why)"
    break
  fi
  best=$(pick_pair)
  if [ -z "$best" ]; then
    note "skip highwayfc50.fashion_mnist: the search is unfinished (or every pair failed)"
    break
  fi
  read -r best_act best_lr <<< "$best"
  run highwayfc50.fashion_mnist --model highwayfc50 --recipe highway_mnist_fc --epochs 100 \
    --model-arg transform_bias=-2 --model-arg kernel_initializer=he_normal \
    --model-arg "activation=$best_act" --lr "$best_lr"
  if ! full_run_failed; then
    break
  fi
  note "highwayfc50.fashion_mnist with $best_act, lr $best_lr diverged or ended at chance: set aside"
  mv "$SCIENCE_RUNS/highwayfc50.fashion_mnist" \
    "$SCIENCE_RUNS/highwayfc50.$best_act.lr$best_lr.full.collapsed"
  mv "$LOG_DIR/highwayfc50.fashion_mnist.log" \
    "$LOG_DIR/highwayfc50.$best_act.lr$best_lr.full.collapsed.log"
  rm -f "$LOG_DIR/highwayfc50.fashion_mnist.nan"
  date -u > "$LOG_DIR/highwayfc50.full.$best_act.lr$best_lr.failed"
done

# c. Residual Gates Tables 1-2 analogue, then the k_init ablation.
for depth in 2 10 20 50 100; do
  for family in plainnet resnetfc gplainnet gresnetfc; do
    run "rgtable.$family$depth.e$TABLE_EPOCHS" --model "$family$depth" --recipe rg_mnist_fc \
      --epochs "$TABLE_EPOCHS"
  done
done
for k in 0.75 0.5; do
  for depth in 50 100; do
    for family in gplainnet gresnetfc; do
      run "rgtable.$family$depth.k$k.e$TABLE_EPOCHS" --model "$family$depth" --recipe rg_mnist_fc \
        --epochs "$TABLE_EPOCHS" --model-arg "k_init=$k"
    done
  done
done

# d. Highway Networks Fig. 1: plain vs highway FC nets of the same parameter count.
for depth in 10 20 50 100; do
  for lr in $FIG1_LRS; do
    run "hwfig1.highwayfc$depth.lr$lr.e$FIG1_EPOCHS" --model "highwayfc$depth" \
      --recipe highway_mnist_fc --epochs "$FIG1_EPOCHS" --lr "$lr" \
      --model-arg transform_bias=-2 --model-arg kernel_initializer=he_normal \
      --model-arg activation=tanh
    run "hwfig1.plainnet$depth.lr$lr.e$FIG1_EPOCHS" --model "plainnet$depth" \
      --recipe highway_mnist_fc --epochs "$FIG1_EPOCHS" --lr "$lr" \
      --model-arg units=71 --model-arg batch_norm=False \
      --model-arg kernel_initializer=he_normal --model-arg activation=tanh
  done
done
# At d = 100 both highway runs stay at chance from the first epoch: with b_T = -2 the
# gradient reaching the first layers at initialisation is about 1e-4 of its size with
# b_T = -4 (the paper searched b_T in [-10, -1]). One run with b_T = -4.
run "hwfig1b.highwayfc100.bT-4.lr0.01.e$FIG1_EPOCHS" --model highwayfc100 \
  --recipe highway_mnist_fc --epochs "$FIG1_EPOCHS" --lr 0.01 \
  --model-arg transform_bias=-4 --model-arg kernel_initializer=he_normal \
  --model-arg activation=tanh

# e. Residual Gates Table 7: Wide ResNets without batch norm, gated and not. Convolutional
# nets train about 3x faster on TensorFlow's CPU kernels than on JAX's: these two use it.
for family in gwrn wrn; do
  KERAS_BACKEND=tensorflow DATASET=cifar10 run "table7.${family}_16_2_nobn.e$TABLE7_EPOCHS" --model "${family}_16_2" \
    --recipe wrn_cifar --epochs "$TABLE7_EPOCHS" --model-arg batch_norm=False
done
# At the paper's lr 0.1 both diverge within the first batches (k = 1 makes the gated net the
# ungated one at the start). Then: the gated net started with k = 0.5 at lr 0.1, and both at
# lr 0.01.
KERAS_BACKEND=tensorflow DATASET=cifar10 run "table7.gwrn_16_2_nobn.k0.5.e$TABLE7_EPOCHS" --model gwrn_16_2 \
  --recipe wrn_cifar --epochs "$TABLE7_EPOCHS" --model-arg batch_norm=False --model-arg k_init=0.5
for family in wrn gwrn; do
  KERAS_BACKEND=tensorflow DATASET=cifar10 run "table7.${family}_16_2_nobn.lr0.01.e$TABLE7_EPOCHS" \
    --model "${family}_16_2" --recipe wrn_cifar --epochs "$TABLE7_EPOCHS" --lr 0.01 --model-arg batch_norm=False
done
# All of these diverge within 8 batches: at initialisation the no-BN net's loss is 324 with a
# gradient norm of 2 260 (k = 1), 7.2 and 26 with k started at 0.1 (python -m
# training.init_signal). So: k = 0.1, at both rates.
for lr in 0.1 0.01; do
  KERAS_BACKEND=tensorflow DATASET=cifar10 run "table7.gwrn_16_2_nobn.k0.1.lr$lr.e$TABLE7_EPOCHS" \
    --model gwrn_16_2 --recipe wrn_cifar --epochs "$TABLE7_EPOCHS" --lr "$lr" \
    --model-arg batch_norm=False --model-arg k_init=0.1
done
# k = 0.1 at lr 0.01 trains only by closing every gate (all k < 0). Clipping the gradient to
# a global norm of 1 keeps both nets finite through their first batches at the paper's lr 0.1
# and k = 1 (the paper does not say how its no-BN nets were started): both, same clipping.
for family in wrn gwrn; do
  KERAS_BACKEND=tensorflow DATASET=cifar10 run "table7.${family}_16_2_nobn.clip1.e$TABLE7_EPOCHS" \
    --model "${family}_16_2" --recipe wrn_cifar --epochs "$TABLE7_EPOCHS" --clip-norm 1 \
    --model-arg batch_norm=False
done
# Clipped, both train and end within a point of each other: a second seed of each.
for family in wrn gwrn; do
  KERAS_BACKEND=tensorflow DATASET=cifar10 run "table7.${family}_16_2_nobn.clip1.seed1.e$TABLE7_EPOCHS" \
    --model "${family}_16_2" --recipe wrn_cifar --epochs "$TABLE7_EPOCHS" --clip-norm 1 \
    --model-arg batch_norm=False --seed 1
done
}

queue_pass
queue_pass  # runs that failed in the first pass get another chance; finished ones are skipped
note "queue done"
