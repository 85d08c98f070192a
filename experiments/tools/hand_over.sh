#!/usr/bin/env bash
# Hand the experiment runs over to the next checkout: stop this checkout's queues and runs
# (experiments/tools/stop_queues.sh), redraw the figures drawn from the kept records (their
# committed JSON must be what the records give: tests/experiments/test_figures.py), and
# stage the runs in flight, the records and the figures. Commit them afterwards:
#
#   bash experiments/tools/hand_over.sh && git commit -m "runs in flight"
#
# Start the same queue commands in the next checkout: each unfinished run resumes.
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PYTHON=${PYTHON:-python}
bash experiments/tools/stop_queues.sh
for figure in experiments.residual_gates.fig3_train_loss experiments.residual_gates.table7_fig \
              experiments.residual_gates.table1_fig \
              experiments.highway.highway_fig1 experiments.compression.tradeoff; do
  "$PYTHON" -m "$figure" > /dev/null
done
"$PYTHON" -m experiments.residual_gates.fig5_seeds --out docs/figures > /dev/null
git add experiments/in_flight experiments/*/results docs/figures
git status --short -- experiments/in_flight experiments docs/figures | sed -n '1,40p'
