#!/usr/bin/env bash
# Run the test suite once per Keras backend (TensorFlow, then JAX); the PyTorch backend
# is smoke-tested from inside the TensorFlow pass when torch is installed, and
# `KERAS_GATED_TEST_BACKENDS=torch` runs the backend-dependent tests on it (.ci/run does).
# KERAS_GATED_TEST_BACKENDS chooses the backends (e.g. `jax` where TensorFlow is not
# installed: .ci/run's second pass). Tests that need TensorFlow skip without it.
# Extra arguments go to pytest, e.g. `bash tests/run.sh -m slow` or `-k gates`.
# The tests run on every core (pytest-xdist, one test module per worker at a time);
# KERAS_GATED_TEST_WORKERS sets the number of workers (0: no workers, in this process).
set -u
cd "$(dirname "$0")/.."
status=0
# One JAX compilation cache for both passes: the JAX pass then reads
# what the TensorFlow pass's JAX processes compiled, and a caller that sets
# JAX_COMPILATION_CACHE_DIR (.ci/run, for its two runs of this script) shares it further.
# On JAX, building a model compiles a random kernel per weight shape, and an eager call an
# op per shape: most of the JAX pass's time. Removed at the end when made here.
if [ -z "${JAX_COMPILATION_CACHE_DIR:-}" ]; then
  JAX_COMPILATION_CACHE_DIR="$(mktemp -d -t keras-gated-tests-jax-cache-XXXXXX)"
  trap 'rm -rf "$JAX_COMPILATION_CACHE_DIR"' EXIT
fi
export JAX_COMPILATION_CACHE_DIR  # tests/conftest.py sets how it keeps entries
# The tests' nets are small and see a few images: compiling them takes most of the JAX
# pass, running them little. XLA's code generator at optimisation level 0 compiles about a
# third faster (models/test_families.py, test_mixed_precision.py and
# layers/test_preact_unit.py on JAX, cold cache: 62 s -> 41 s); every tolerance of the suite
# holds at either level. A level the caller sets in XLA_FLAGS is kept.
if [[ "${XLA_FLAGS:-}" != *xla_backend_optimization_level* ]]; then
  export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_backend_optimization_level=0"
fi
for backend in ${KERAS_GATED_TEST_BACKENDS:-tensorflow jax}; do
  echo "=== KERAS_BACKEND=$backend"
  KERAS_BACKEND=$backend python -m pytest -n "${KERAS_GATED_TEST_WORKERS:-auto}" --dist loadfile "$@"
  code=$?
  # pytest exits 5 when a selection collects no test: not a failure of the suite.
  if [ $code -ne 0 ] && [ $code -ne 5 ]; then status=$code; fi
done
exit $status
