#!/usr/bin/env bash
# Moved: the queues of the paper experiments are experiments/residual_gates/queue.sh and
# experiments/highway/queue.sh. This runs both, one after the other.
echo "training/science_queue.sh moved to experiments/{residual_gates,highway}/queue.sh" >&2
cd "$(dirname "$0")/.." || exit 1
bash experiments/residual_gates/queue.sh
bash experiments/highway/queue.sh
