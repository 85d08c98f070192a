#!/usr/bin/env bash
# Seeded re-runs of the Residual Gates comparisons that docs/science.md's claims table
# cannot settle with one run (run-to-run spread of the Table 1 commands: about +-0.8
# points). Resumable: start it in the background, from the root of a source checkout,
# with the project's environment active:
#
#   nohup bash experiments/residual_gates/seeds_queue.sh > /dev/null 2>&1 &
#
# It uses the same run queue as queue.sh (experiments/tools/queue.sh): every training is
# `python -m training.train` at nice 19 on ONE thread (XLA_FLAGS and TF_NUM_*_THREADS set
# there), each run resumes from its backup after a crash or a kill, and a run whose
# results/<name>/status.json exists is skipped, so starting the same command again
# carries on where it stopped. It shares queue.sh's lock: it will not start while the
# paper's main queue runs (one core for both). Order:
#   a. Tables 1-2 (claims table rows 2-9): the 20 cells (d = 2, 10, 20, 50, 100 x
#      plainnet / resnetfc / gplainnet / gresnetfc), rg_mnist_fc at 20 epochs, seeds 0, 1
#      and 2, one thread -> rgtable.<model><d>.e20.t1.s<seed> (the page's seed-0 runs
#      had two threads, so seed 0 is trained again). About 6 CPU-hours per seed.
#   b. Fig. 4 and Fig. 5 at d = 100 and the paper's 100 epochs (rows 5, 10-14):
#      gresnetfc100 and resnetfc100, seeds 0, 1, 2 -> fig5.<model>.e100.s<seed>, then
#      `keras-gated analyze` of each pair (2,000 random test images, 3 random removal
#      orders) -> results/fig5.d100.e100.s<seed>/analysis.json. About 2 CPU-hours per pair.
#   c. §3.1's pre-activation FC ResNets (claims table row 41): resnetfc<d> with
#      preactivation=True at the five depths, a's recipe and epochs, seeds 0, 1 and 2 ->
#      rgtable.resnetfc<d>.preact.e20.t1.s<seed>, set against a's resnetfc cells by
#      `python -m experiments.residual_gates.seed_table --pair resnetfc_preact resnetfc`.
#      About 1 CPU-hour (30 s to 15 min a run).
# Mean +- std over the 3 seeds of each cell: python -m experiments.tools.science_report
# <run> --root experiments/in_flight/residual_gates for each run, or the runs'
# metrics.json (test_accuracy) and gates.csv (last epoch's k).
PAPER=residual_gates
# shellcheck source=../tools/queue.sh
. "$(dirname "$0")/../tools/queue.sh"
SEEDS=${SEEDS:-"0 1 2"}
TABLE_EPOCHS=${TABLE_EPOCHS:-20}
FIG5_EPOCHS=${FIG5_EPOCHS:-100}

note "seeds queue: one thread per run (XLA_FLAGS=$XLA_FLAGS TF_NUM_INTRAOP_THREADS=$TF_NUM_INTRAOP_THREADS TF_NUM_INTEROP_THREADS=$TF_NUM_INTEROP_THREADS), nice 19, seeds $SEEDS"

# analyze_pair SEED: the Fig. 5 removal curves and Fig. 4 k of the SEED pair, once both
# runs have finished; kept in $RESULTS/fig5.d100.e$FIG5_EPOCHS.s<seed>/analysis.json (with
# the analysis's output as analyze.log). Then the pair's runs are emptied (their folders
# and logs: keep() left them for this step). A pair of which a run ended without its last
# epoch's weights (it diverged) is not analysed, and emptied too.
analyze_pair() {
  local seed=$1 epoch gated ungated dest out log pair name
  epoch=$(printf '%04d' "$FIG5_EPOCHS")
  pair="fig5.gresnetfc100.e$FIG5_EPOCHS.s$seed fig5.resnetfc100.e$FIG5_EPOCHS.s$seed"
  gated="$SCIENCE_RUNS/fig5.gresnetfc100.e$FIG5_EPOCHS.s$seed/backup/epoch-$epoch.weights.h5"
  ungated="$SCIENCE_RUNS/fig5.resnetfc100.e$FIG5_EPOCHS.s$seed/backup/epoch-$epoch.weights.h5"
  dest="$RESULTS/fig5.d100.e$FIG5_EPOCHS.s$seed"
  out="$SCIENCE_RUNS/analyze.fig5.d100.e$FIG5_EPOCHS.s$seed"
  log="$LOG_DIR/analyze.fig5.d100.e$FIG5_EPOCHS.s$seed.log"
  [ -f "$dest/analysis.json" ] && return 0
  for name in $pair; do
    if [ -n "$(status_of "$name")" ] && [ ! -f "$SCIENCE_RUNS/$name/backup/epoch-$epoch.weights.h5" ]; then
      note "no analysis of seed $seed: $name ended ($(status_of "$name")) without its epoch-$epoch weights"
      empty_pair "$pair"
      return 0
    fi
  done
  if [ ! -f "$gated" ] || [ ! -f "$ungated" ]; then
    note "skip analysis of seed $seed: its runs have not finished"
    return 0
  fi
  note "start analyze fig5.d100.e$FIG5_EPOCHS.s$seed"
  # keras-gated analyze, through $PYTHON (the queue's interpreter, as for the trainings)
  if KERAS_BACKEND=jax nice -n 19 "$PYTHON" -c \
      'import sys; from keras_gated.cli import main; sys.exit(main())' \
      analyze gresnetfc100 --weights "$gated" \
      --dataset fashion_mnist --twin resnetfc100 --twin-weights "$ungated" --no-prune \
      --out "$out" >> "$log" 2>&1; then
    mkdir -p "$dest"
    cp "$out/analysis.json" "$dest/analysis.json"
    cp "$log" "$dest/analyze.log"
    rm -rf "${out:?}" "$log"
    empty_pair "$pair"
    note "end analyze fig5.d100.e$FIG5_EPOCHS.s$seed: kept $dest/analysis.json"
  else
    note "analyze fig5.d100.e$FIG5_EPOCHS.s$seed failed (see its log); tried again next pass"
  fi
}

# empty_pair "RUN RUN": the runs' folders and logs in flight (their records are in $RESULTS).
empty_pair() {
  local name
  for name in $1; do
    rm -rf "${SCIENCE_RUNS:?}/$name"
    rm -f "$LOG_DIR/$name.log"
  done
}

seeds_pass() {
  # a. Tables 1-2, 20 cells x seeds.
  for seed in $SEEDS; do
    for depth in 2 10 20 50 100; do
      for family in plainnet resnetfc gplainnet gresnetfc; do
        run "rgtable.$family$depth.e$TABLE_EPOCHS.t1.s$seed" --model "$family$depth" \
          --recipe rg_mnist_fc --epochs "$TABLE_EPOCHS" --seed "$seed"
      done
    done
  done
  # b. Fig. 4 / Fig. 5 at d = 100, the paper's budget, then the removal analysis.
  for seed in $SEEDS; do
    for model in gresnetfc100 resnetfc100; do
      # KEEP_BACKUP: analyze_pair reads the finished runs' last backup, then removes it.
      KEEP_BACKUP=1 run "fig5.$model.e$FIG5_EPOCHS.s$seed" --model "$model" --recipe rg_mnist_fc \
        --epochs "$FIG5_EPOCHS" --seed "$seed"
    done
    analyze_pair "$seed"
  done
  # c. Pre-activation residual FC nets, as a's cells.
  for seed in $SEEDS; do
    for depth in 2 10 20 50 100; do
      run "rgtable.resnetfc$depth.preact.e$TABLE_EPOCHS.t1.s$seed" --model "resnetfc$depth" \
        --model-arg preactivation=True --recipe rg_mnist_fc --epochs "$TABLE_EPOCHS" --seed "$seed"
    done
  done
}

seeds_pass
seeds_pass  # runs that failed in the first pass get another chance; finished ones are skipped
note "seeds queue done"
