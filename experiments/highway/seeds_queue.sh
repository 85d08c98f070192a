#!/usr/bin/env bash
# Highway Networks Fig. 1 made fair and seeded (docs/science.md, claims table rows 25-28).
# Resumable: start it in the background, from the root of a source checkout, with the
# project's environment active:
#
#   nohup bash experiments/highway/seeds_queue.sh > /dev/null 2>&1 &
#
# Same run queue as queue.sh (experiments/tools/queue.sh): one thread per run at nice 19,
# each run resumable, a run with results/<name>/status.json skipped, so starting it again
# carries on; it shares queue.sh's lock (never beside the paper's main queue). Order:
#   a. the plain 50-layer net (71 units, no BN, He init) searched as the highway net was
#      (highwayfc50.he.<act>.lr<lr>.val10): activation of H (relu, tanh) x lr, 10 epochs on
#      the training split less a random tenth -> hwfig1s.plainnet50.<act>.lr<lr>.val10;
#      pick: the highest final val_accuracy (ties: the smaller lr), written to
#      results/hwfig1s.plainnet50.search.json;
#   b. 3 seeds of each family's pick at d = 50, 10 epochs on the full training split: the
#      highway net with its own pick (results/highwayfc50.search.json: tanh, lr 0.03,
#      b_T = -2) and the plain net with the pick of a -> hwfig1s.<family>50.s<seed>.e10;
#      compare the best training loss (log.csv) and test accuracy (metrics.json) as
#      mean +- std over seeds. Sections a and b: about 1 CPU-hour in all.
#   a100. the plain 100-layer net searched as in a (hwfig1s.plainnet100.<act>.lr<lr>.val10,
#      its pick in results/hwfig1s.plainnet100.search.json): row 25 at d = 100, where the
#      tanh runs at lr 0.01 and 0.03 stayed at chance. About 20 CPU-minutes (2 per run).
#   c. "about 1 order of magnitude better" (row 27): highwayfc10 (b_T = -2, lr 0.03) and
#      highwayfc100 (b_T = -4, lr 0.01) for 100 epochs, seed 0 -> hwfig1s.highwayfc<d>.e100.
#      highwayfc100 is the long one: 3 to 10 CPU-hours (its 10-epoch runs took 940 to
#      3 640 s).
PAPER=highway
# shellcheck source=../tools/queue.sh
. "$(dirname "$0")/../tools/queue.sh"
SEEDS=${SEEDS:-"0 1 2"}
ACTIVATIONS=${ACTIVATIONS:-"relu tanh"}
LRS=${LRS:-"0.001 0.003 0.01 0.03"}
PLAIN="--model-arg units=71 --model-arg batch_norm=False --model-arg kernel_initializer=he_normal"

note "highway seeds queue: one thread per run (XLA_FLAGS=$XLA_FLAGS), nice 19, seeds $SEEDS"

# plain_pick DEPTH: "act lr" of the best plain-DEPTH search run (written to
# results/hwfig1s.plainnet<DEPTH>.search.json), or nothing while one is unfinished.
plain_pick() {
  "$PYTHON" - "$RESULTS" "$1" "$ACTIVATIONS" $LRS <<'EOF'
import json, sys
from pathlib import Path
results, depth, acts, lrs = Path(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4:]
runs = {}
for act in acts:
    for lr in lrs:
        folder = results / f"hwfig1s.plainnet{depth}.{act}.lr{lr}.val10"
        status = folder / "status.json"
        if not status.is_file():
            sys.exit(0)  # unfinished
        metrics = folder / "metrics.json"
        runs[f"{act} {lr}"] = (json.loads(metrics.read_text())["val_accuracy"]
                               if metrics.is_file() else None)
finite = {k: v for k, v in runs.items() if v is not None}
if not finite:
    sys.exit(0)
best = max(finite, key=lambda k: (finite[k], -float(k.split()[1])))
(results / f"hwfig1s.plainnet{depth}.search.json").write_text(json.dumps(
    {"best": {"activation": best.split()[0], "lr": float(best.split()[1])},
     "by": "final-epoch val_accuracy", "runs": runs}, indent=2) + "\n")
print(best)
EOF
}

# search_plain DEPTH: the plain DEPTH-layer net's own search (activation x lr, 10 epochs,
# a random tenth of the training split held out).
search_plain() {
  local depth=$1 act lr
  for act in $ACTIVATIONS; do
    for lr in $LRS; do
      # shellcheck disable=SC2086
      run "hwfig1s.plainnet$depth.$act.lr$lr.val10" --model "plainnet$depth" \
        --recipe highway_mnist_fc --epochs 10 $PLAIN --model-arg "activation=$act" \
        --validation-split 0.1 --lr "$lr"
    done
  done
}

seeds_pass() {
  # a. The plain net's own search.
  search_plain 50
  # b. 3 seeds of each family's pick.
  local pick act lr
  pick=$(plain_pick 50)
  for seed in $SEEDS; do
    run "hwfig1s.highwayfc50.s$seed.e10" --model highwayfc50 --recipe highway_mnist_fc \
      --epochs 10 --lr 0.03 --model-arg transform_bias=-2 \
      --model-arg kernel_initializer=he_normal --model-arg activation=tanh --seed "$seed"
    if [ -n "$pick" ]; then
      read -r act lr <<< "$pick"
      # shellcheck disable=SC2086
      run "hwfig1s.plainnet50.s$seed.e10" --model plainnet50 --recipe highway_mnist_fc \
        --epochs 10 --lr "$lr" $PLAIN --model-arg "activation=$act" --seed "$seed"
    else
      note "skip hwfig1s.plainnet50.s$seed.e10: the plain search is unfinished"
    fi
  done
  # a100. The plain 100-layer net's own search; its pick is written for the claims table.
  search_plain 100
  plain_pick 100 > /dev/null
  # c. The 10- and 100-layer highway nets at 100 epochs.
  run hwfig1s.highwayfc10.e100 --model highwayfc10 --recipe highway_mnist_fc --epochs 100 \
    --lr 0.03 --model-arg transform_bias=-2 --model-arg kernel_initializer=he_normal \
    --model-arg activation=tanh
  run hwfig1s.highwayfc100.e100 --model highwayfc100 --recipe highway_mnist_fc --epochs 100 \
    --lr 0.01 --model-arg transform_bias=-4 --model-arg kernel_initializer=he_normal \
    --model-arg activation=tanh
}

seeds_pass
seeds_pass  # a failed run gets another chance; section b starts once the search is done
note "highway seeds queue done"
