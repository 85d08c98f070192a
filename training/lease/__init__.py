"""Training a model inside one short GPU lease: one command on a host that has JAX with
CUDA but no Keras, with the data and wheels it needs carried along in ``.lease/``.

``python -m training.lease prepare`` builds the carried folder here;
``python -m training.lease run ...`` trains on the host and writes a bundle that
``python -m training.release BUNDLE`` releases. See docs/training.md.
"""
