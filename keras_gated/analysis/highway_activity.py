"""Transform-gate activity of Highway layers over data (Srivastava et al. 2015, Fig. 2):
per layer, the mean of T(x), the fraction of units that are effectively closed
(T < ``closed_below`` on every example) and the per-sample variability of T;
``highway_trace`` gives each layer's input, T(x) and output per example, from which the
figure's single-example columns are drawn."""

from __future__ import annotations

import keras
import numpy as np

from keras_gated.layers.highway import Highway


def _gated_highway_layers(model: keras.Model) -> list[Highway]:
    layers = [layer for layer in model.layers if isinstance(layer, Highway) and layer.transform_gate is not None]
    if not layers:
        raise ValueError(f"{model.name} has no Highway layers with a transform gate.")
    return layers


def highway_trace(model: keras.Model, x, *, batch_size: int = 256) -> dict[str, dict]:
    """Highway layer (model order) -> {"input", "t", "output"}: numpy arrays of the
    layer's input x, its transform gate T(x) and its output y, one row per example."""
    layers = _gated_highway_layers(model)
    probe = keras.Model(model.inputs, [tensor for layer in layers for tensor in (layer.input, layer.output)])
    recorded = probe.predict(x, batch_size=batch_size, verbose=0)
    results = {}
    for index, layer in enumerate(layers):
        layer_input, layer_output = recorded[2 * index], recorded[2 * index + 1]
        t = np.concatenate([keras.ops.convert_to_numpy(layer.gates(layer_input[start:start + batch_size])["t"])
                            for start in range(0, len(layer_input), batch_size)])
        results[layer.name] = {"input": np.asarray(layer_input), "t": t, "output": np.asarray(layer_output)}
    return results


def highway_activity(model: keras.Model, x, *, closed_below: float = 0.1,
                     batch_size: int = 256) -> dict[str, dict]:
    """Highway layer -> {"mean_t", "closed_fraction", "sample_std", "mean_t_per_unit"}."""
    layers = _gated_highway_layers(model)
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
