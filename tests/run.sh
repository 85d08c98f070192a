#!/usr/bin/env bash
# Run the test suite once per Keras backend (TensorFlow, then JAX); the PyTorch backend
# is smoke-tested from inside the TensorFlow pass when torch is installed.
# KERAS_GATED_TEST_BACKENDS chooses the backends (e.g. `jax` where TensorFlow is not
# installed: .ci/run's second pass). Tests that need TensorFlow skip without it.
# Extra arguments go to pytest, e.g. `bash tests/run.sh -m slow` or `-k gates`.
# The tests run on every core (pytest-xdist, one test module per worker at a time);
# KERAS_GATED_TEST_WORKERS sets the number of workers (0: no workers, in this process).
set -u
cd "$(dirname "$0")/.."
status=0
for backend in ${KERAS_GATED_TEST_BACKENDS:-tensorflow jax}; do
  echo "=== KERAS_BACKEND=$backend"
  KERAS_BACKEND=$backend python -m pytest -n "${KERAS_GATED_TEST_WORKERS:-auto}" --dist loadfile "$@"
  code=$?
  # pytest exits 5 when a selection collects no test: not a failure of the suite.
  if [ $code -ne 0 ] && [ $code -ne 5 ]; then status=$code; fi
done
exit $status
