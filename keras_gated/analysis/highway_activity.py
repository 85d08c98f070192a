"""Transform-gate activity of Highway layers over data (Srivastava et al. 2015, Fig. 2):
per layer, the mean of T(x), the fraction of units that are effectively closed
(T < ``closed_below`` on every example) and the per-sample variability of T."""

from __future__ import annotations

import keras
import numpy as np

from keras_gated.layers.highway import Highway


def highway_activity(model: keras.Model, x, *, closed_below: float = 0.1,
                     batch_size: int = 256) -> dict[str, dict]:
    """Highway layer -> {"mean_t", "closed_fraction", "sample_std", "mean_t_per_unit"}."""
    layers = [layer for layer in model.layers if isinstance(layer, Highway) and layer.transform_gate is not None]
    if not layers:
        raise ValueError(f"{model.name} has no Highway layers with a transform gate.")
    probe = keras.Model(model.inputs, [layer.input for layer in layers])
    inputs = probe.predict(x, batch_size=batch_size, verbose=0)
    if len(layers) == 1:
        inputs = [inputs]
    results = {}
    for layer, layer_input in zip(layers, inputs):
        t = keras.ops.convert_to_numpy(layer.gates(layer_input)["t"])
        per_sample_unit = t.reshape(t.shape[0], -1, t.shape[-1]).mean(axis=1)  # (N, units)
        results[layer.name] = {
            "mean_t": float(t.mean()),
            "closed_fraction": float(np.mean(np.all(per_sample_unit < closed_below, axis=0))),
            "sample_std": float(per_sample_unit.std(axis=0).mean()),
            "mean_t_per_unit": per_sample_unit.mean(axis=0).tolist(),
        }
    return results
