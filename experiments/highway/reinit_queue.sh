#!/usr/bin/env bash
# The highway runs of docs/science.md repeated from independent initial weights per layer
# (the earlier runs started H and T of every highway layer from one shared kernel), under
# the same commands and the names of the runs they repeat with "reinit." in front. Same run
# queue as queue.sh (experiments/tools/queue.sh): one thread per run at nice 19, resumable,
# a finished run skipped; it shares queue.sh's lock. Start it in the background from the
# root of a source checkout with the project's environment active:
#
#   nohup bash experiments/highway/reinit_queue.sh > /dev/null 2>&1 &
#
# Order (the plain nets are not repeated: each of their dense layers always made its own
# initializer):
#   s. the three seeds of the d = 50 highway net of the seeded pair (seeds_queue.sh b)
#      -> reinit.hwfig1s.highwayfc50.s<seed>.e10; `python -m experiments.highway.seed_pair
#      --prefix reinit.` sets them against the plain net's seeds. About 15 CPU-minutes each.
#   d. the 100-layer highway runs of the Fig. 1 sweep (queue.sh d, the b_T = -4 follow-up
#      included) -> reinit.hwfig1.highwayfc100.lr<lr>.e10, reinit.hwfig1b.highwayfc100.bT-4.lr0.01.e10.
#      16 to 60 CPU-minutes each.
#   c. the 100-epoch highway nets of seeds_queue.sh c (row 27), seed 0 ->
#      reinit.hwfig1s.highwayfc10.e100 (under an hour) and reinit.hwfig1s.highwayfc100.e100
#      (3 to 10 CPU-hours; resumable, its state kept in experiments/in_flight/ while it runs).
#   h. H = ReLU in the 50-layer highway net (He init), b_T = -2 and -4, lr 0.001, 0.003 and
#      0.01, 10 epochs with a random tenth of the training split held out (seed 0): whether
#      a negative b_T trains it whatever H is (science row 48; the ReLU runs of queue.sh b
#      started H and T from one kernel) -> reinit.hwbt.highwayfc50.relu.bT<b>.lr<lr>.val10.
#      2 to 4 CPU-minutes each.
PAPER=highway
# shellcheck source=../tools/queue.sh
. "$(dirname "$0")/../tools/queue.sh"
SEEDS=${SEEDS:-"0 1 2"}
HIGHWAY="--recipe highway_mnist_fc --epochs 10 --model-arg kernel_initializer=he_normal --model-arg activation=tanh"

note "highway re-init queue: one thread per run, nice 19, seeds $SEEDS"

reinit_pass() {
  local seed lr
  # s. The seeded d = 50 highway net.
  for seed in $SEEDS; do
    # shellcheck disable=SC2086
    run "reinit.hwfig1s.highwayfc50.s$seed.e10" --model highwayfc50 $HIGHWAY --lr 0.03 \
      --model-arg transform_bias=-2 --seed "$seed"
  done
  # d. The 100-layer highway nets of the sweep.
  for lr in 0.01 0.03; do
    # shellcheck disable=SC2086
    run "reinit.hwfig1.highwayfc100.lr$lr.e10" --model highwayfc100 $HIGHWAY --lr "$lr" \
      --model-arg transform_bias=-2
  done
  # shellcheck disable=SC2086
  run "reinit.hwfig1b.highwayfc100.bT-4.lr0.01.e10" --model highwayfc100 $HIGHWAY --lr 0.01 \
    --model-arg transform_bias=-4
  # c. The 10- and 100-layer highway nets at 100 epochs.
  run reinit.hwfig1s.highwayfc10.e100 --model highwayfc10 --recipe highway_mnist_fc --epochs 100 \
    --lr 0.03 --model-arg transform_bias=-2 --model-arg kernel_initializer=he_normal \
    --model-arg activation=tanh
  run reinit.hwfig1s.highwayfc100.e100 --model highwayfc100 --recipe highway_mnist_fc --epochs 100 \
    --lr 0.01 --model-arg transform_bias=-4 --model-arg kernel_initializer=he_normal \
    --model-arg activation=tanh
  # h. ReLU H at two negative b_T.
  local bias
  for bias in -2 -4; do
    for lr in 0.001 0.003 0.01; do
      run "reinit.hwbt.highwayfc50.relu.bT$bias.lr$lr.val10" --model highwayfc50 \
        --recipe highway_mnist_fc --epochs 10 --model-arg kernel_initializer=he_normal \
        --model-arg activation=relu --model-arg "transform_bias=$bias" --lr "$lr" \
        --validation-split 0.1 --seed 0
    done
  done
}

reinit_pass
reinit_pass  # a failed run gets another chance; finished ones are skipped
note "highway re-init queue done"
