#!/usr/bin/env bash
# The Highway Networks runs behind docs/science.md, one after the other, each resumable
# (experiments/tools/queue.sh says how):
#
#   nohup bash experiments/highway/queue.sh > /dev/null 2>&1 &
#
# from the root of a source checkout. Order:
#   b. highwayfc50, highway_mnist_fc (b_T = -2, He init): search over the activation of H
#      (relu, tanh) and lr with the last 10 % of the training split held out (10 epochs
#      each), then the recipe's 100 epochs with the best pair by final validation accuracy
#      on the full training split -> highwayfc50.fashion_mnist;
#   d. Fig. 1 analogue at $FIG1_EPOCHS epochs (highway_mnist_fc, He init, tanh):
#      d = 10, 20, 50, 100 x plain (71 units, no BN) / highway (50 units, b_T = -2), each
#      at the lrs of $FIG1_LRS -> hwfig1.<plainnet|highwayfc><d>.lr<lr>.e<epochs>.
# (Sections a, c and e, the Residual Gates runs, are in experiments/residual_gates/queue.sh.)
PAPER=highway
# shellcheck source=../tools/queue.sh
. "$(dirname "$0")/../tools/queue.sh"
LR_SEARCH=${LR_SEARCH:-"0.001 0.003 0.01 0.03"}
HIGHWAY_ACTIVATIONS=${HIGHWAY_ACTIVATIONS:-"relu tanh"}
FIG1_EPOCHS=${FIG1_EPOCHS:-10}
FIG1_LRS=${FIG1_LRS:-"0.01 0.03"}

queue_pass() {

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
# highwayfc50.<act>.lr<lr>.full.collapsed (its records with status "collapsed") and the
# next best pair is trained. While $RESULTS/highwayfc50.fashion_mnist/status.json says
# "held" (and why), the full run is skipped.
full_run_failed() {  # the full run diverged or ended at chance
  local metrics="$RESULTS/highwayfc50.fashion_mnist/metrics.json"
  [ "$(status_of highwayfc50.fashion_mnist)" = diverged ] && return 0
  [ -f "$metrics" ] && "$PYTHON" -c \
    "import json, sys; sys.exit(json.load(open(sys.argv[1]))['test_accuracy'] >= 0.2)" "$metrics"
}

while :; do
  if [ "$(status_of highwayfc50.fashion_mnist)" = held ]; then
    note "skip highwayfc50.fashion_mnist: held ($RESULTS/highwayfc50.fashion_mnist/status.json says why)"
    break
  fi
  best=$("$PYTHON" experiments/highway/lr_search.py "$RESULTS" "$HIGHWAY_ACTIVATIONS" $LR_SEARCH)
  if [ -z "$best" ]; then
    note "skip highwayfc50.fashion_mnist: the search is unfinished (or every pair failed)"
    break
  fi
  read -r best_act best_lr <<< "$best"
  # the release run: keep() leaves its folder (training.release reads it) and its log
  # (both are set aside below if it fails)
  KEEP_RUN=1 run highwayfc50.fashion_mnist --model highwayfc50 --recipe highway_mnist_fc --epochs 100 \
    --model-arg transform_bias=-2 --model-arg kernel_initializer=he_normal \
    --model-arg "activation=$best_act" --lr "$best_lr"
  if ! full_run_failed; then
    rm -f "$LOG_DIR/highwayfc50.fashion_mnist.log"  # kept in results/ as train.log
    break
  fi
  note "highwayfc50.fashion_mnist with $best_act, lr $best_lr diverged or ended at chance: set aside"
  collapsed="highwayfc50.$best_act.lr$best_lr.full.collapsed"
  mv "$SCIENCE_RUNS/highwayfc50.fashion_mnist" "$SCIENCE_RUNS/$collapsed"
  mv "$LOG_DIR/highwayfc50.fashion_mnist.log" "$LOG_DIR/$collapsed.log"
  rm -rf "${RESULTS:?}/highwayfc50.fashion_mnist"
  keep "$collapsed" collapsed
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
}

queue_pass
queue_pass  # runs that failed in the first pass get another chance; finished ones are skipped
note "queue done"
