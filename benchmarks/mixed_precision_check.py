"""What ``mixed_bfloat16`` / ``mixed_float16`` do on this machine: whether keras-gated sees an
accelerator, whether it warns that the policy would be emulated, which dtypes the layers
compute and keep their variables in, and which optimizer Keras wraps (loss scaling for
float16), after two training steps of GResNet20.

    KERAS_BACKEND=jax python -m benchmarks.mixed_precision_check
"""
import warnings

import numpy as np

import keras_gated as kg  # isort: skip  (keras-gated first: it sets the CPU defaults)
import keras

from keras_gated.precision import has_accelerator, slow_mixed_precision

print("backend:", keras.backend.backend(), "accelerator:", has_accelerator(),
      "slow-mixed-precision message:", slow_mixed_precision("mixed_bfloat16"))
for policy in ("mixed_bfloat16", "mixed_float16"):
    keras.mixed_precision.set_global_policy(policy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = kg.GResNet20()
        model.compile(keras.optimizers.SGD(0.01), "sparse_categorical_crossentropy")
        x = np.random.default_rng(0).uniform(0, 255, (256, 32, 32, 3)).astype("float32")
        y = np.arange(256) % 10
        history = model.fit(x, y, batch_size=128, epochs=1, verbose=0)
    conv = next(l for l in model.layers if isinstance(l, keras.layers.Conv2D))
    print(policy, "conv compute dtype:", conv.compute_dtype, "variable dtype:", conv.kernel.dtype,
          "loss:", history.history["loss"][-1], "optimizer:", type(model.optimizer).__name__,
          "warnings:", [str(w.message)[:80] for w in caught if "mixed" in str(w.message).lower()])
keras.mixed_precision.set_global_policy("float32")
