#!/usr/bin/env bash
# The CIFAR-10 releases trained on CPU, one run after the other, each resumable (the shared
# run queue, experiments/tools/queue.sh): start it in the background from the root of a
# source checkout with the project's environment active, pinned to one core,
#
#   nohup taskset -c 1 bash experiments/releases/queue.sh > /dev/null 2>&1 &
#
# and, to train the second release beside the first on the other core, a second queue that
# names its run (it leaves the rest to the first, which skips a run the second is training):
#
#   ONLY='release.preactresnet20.*' nohup taskset -c 0 bash experiments/releases/queue.sh > /dev/null 2>&1 &
#
# Start the same commands again after a crash, a kill or a new session: an unfinished
# run resumes from its last epoch's backup (experiments/in_flight/releases/<run>/, committed
# while it is in flight by experiments/tools/hand_over.sh). Every run trains on the
# TensorFlow backend, which trains these nets about 3.5 times as fast as JAX on one core.
#
# First the choice of a recipe for a fixed budget (docs/training.md, "A recipe for a fixed
# budget"): GResNet-20 for BUDGET_EPOCHS epochs with the paper's step schedule and with the
# warm-up + linear-decay recipe, a tenth of the training split held out to compare them
# on, one seed each (an engineering choice, not a paper claim). Then the releases, on
# the whole training split with the chosen recipe (RELEASE_RECIPE) for RELEASE_EPOCHS
# epochs; `python -m training.release
# experiments/in_flight/releases/release.<model>.e<N> --register` releases a finished one.
# Last, the chosen recipe at twice the first budget on the held-out tenth.
PAPER=releases
. "$(dirname "$0")/../tools/queue.sh"
BUDGET_EPOCHS=${BUDGET_EPOCHS:-15}
RELEASE_RECIPE=${RELEASE_RECIPE:-preact_cifar_budget}
RELEASE_EPOCHS=${RELEASE_EPOCHS:-100}
export KERAS_BACKEND=tensorflow DATASET=cifar10

queue_pass() {

for recipe in preact_cifar preact_cifar_budget; do
  run "recipe.gresnet20.$recipe.e$BUDGET_EPOCHS" --model gresnet20 --recipe "$recipe" \
    --epochs "$BUDGET_EPOCHS" --validation-split 0.1 --seed 0
done

for model in gresnet20 preactresnet20; do
  KEEP_RUN=1 run "release.$model.e$RELEASE_EPOCHS" --model "$model" --recipe "$RELEASE_RECIPE" \
    --epochs "$RELEASE_EPOCHS" --seed 0
done

# The chosen recipe at twice the first budget, on the same held-out tenth: after the
# releases, which already show the recipe at a larger budget (their test accuracy).
run "recipe.gresnet20.preact_cifar_budget.e$((2 * BUDGET_EPOCHS))" --model gresnet20 \
  --recipe preact_cifar_budget --epochs "$((2 * BUDGET_EPOCHS))" --validation-split 0.1 --seed 0
}

queue_pass
queue_pass  # runs that failed in the first pass get another chance; finished ones are skipped
note "queue done"
