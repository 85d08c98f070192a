"""The paper reproductions of keras-gated, apart from the library and its training: one
folder per paper (``residual_gates/``, ``highway/``) with its README, scripts, results
(the text records of its runs) and queue, and shared tools in ``tools/``. They run from a
source checkout (``python -m experiments.residual_gates.table7_fig``) and use only the
public functions of ``keras_gated`` and ``training``."""
