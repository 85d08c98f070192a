"""Weights stored as they were trained: arrays that are exactly bfloat16 numbers are kept
as bfloat16 in Keras's own form (``narrow_to_bfloat16``), half the bytes, loaded exactly
into float32 variables; the finite check reads them too."""

from __future__ import annotations

import h5py
import keras
import ml_dtypes
import numpy as np
import pytest

import keras_gated as kg
from keras_gated.weights.load import WeightsFileError, check_finite
from keras_gated.weights.shards import narrow_to_bfloat16


def bf16_trained(seed: int = 0) -> keras.Model:
    """A GResNet(8) whose trainable weights are bfloat16 numbers and whose BatchNorm
    moving statistics are not (as after training in mixed_bfloat16)."""
    keras.utils.set_random_seed(seed)
    model = kg.GResNet(8)
    rng = np.random.default_rng(seed)
    for v in model.trainable_weights:
        v.assign(np.asarray(v).astype(ml_dtypes.bfloat16).astype(np.float32))
    for v in model.non_trainable_weights:
        if "moving" in v.path:
            v.assign(rng.uniform(0.5, 1.5, v.shape).astype(np.float32))
    return model


def test_exact_bfloat16_arrays_are_narrowed_losslessly_and_the_rest_kept(tmp_path):
    model = bf16_trained()
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    before = path.stat().st_size
    narrowed = narrow_to_bfloat16(path)
    assert narrowed == len(model.trainable_weights)
    assert path.stat().st_size < 0.7 * before  # the space is given back, not only marked
    assert not list(tmp_path.glob("partial-*"))
    with h5py.File(path) as h5:
        kinds = []
        h5.visititems(lambda n, o: kinds.append(o.attrs.get("dtype", str(o.dtype)))
                      if isinstance(o, h5py.Dataset) else None)
    assert kinds.count("bfloat16") == narrowed and "float32" in kinds
    reloaded = kg.GResNet(8)
    reloaded.load_weights(path)
    for a, b in zip(model.weights, reloaded.weights):
        assert b.dtype == "float32" and np.array_equal(np.asarray(a), np.asarray(b)), a.path
    assert narrow_to_bfloat16(path) == 0  # already narrowed: nothing more


def test_a_nan_in_a_bfloat16_array_is_refused_before_loading(tmp_path):
    path = tmp_path / "m.weights.h5"
    bf16_trained().save_weights(path)
    narrow_to_bfloat16(path)
    check_finite(path, origin="weights test")  # clean: accepted
    with h5py.File(path, "a") as h5:
        names = []
        h5.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset)
                      and o.attrs.get("dtype") == "bfloat16" and o.size > 1 else None)
        dataset = h5[names[0]]
        value = np.asarray(dataset[()]).view(ml_dtypes.bfloat16).copy()
        value.flat[0] = np.nan
        dataset[...] = value.view(dataset.dtype)
    with pytest.raises(WeightsFileError, match="NaN or infinite"):
        check_finite(path, origin="weights test")
