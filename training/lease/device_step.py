"""A compiled JAX training step over Keras's stateless API, with the data on the device.

One training step on a batch of indices into the device-resident uint8 training set:

    x = flip(crop(pad(X[idx])))                     (the run's ``Transforms``, on the device)
    L = CE_ε(f(x; θ), y) + Σ_{w ∈ decayed} (λ/2)·‖w‖²   (label smoothing ε; Torch's λ)
    θ, s ← optimizer(θ, s, ∇_θ L)                     (``optimizer.stateless_apply``)

``model.stateless_call`` returns the new non-trainable state (BatchNorm moving averages
and the dropout seed generators), so the step is a pure function of
(trainable, non-trainable, optimizer variables, metrics, indices, key): ``jax.jit``
compiles it once for the fixed batch shape, with its state buffers donated. The loss
sum, correct count and a "non-finite loss seen" flag accumulate on the device; the host
reads them only when it reports, so no step waits on the host.

The (λ/2)·‖w‖² term is what ``keras_gated.training.optimizers.apply_weight_decay`` attaches to the same
variables as Keras regularisers, so the step computes the loss ``fit`` minimises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import keras

from keras_gated.training.transforms import Transforms


def augment(images: jax.Array, key: jax.Array, transforms: Transforms) -> jax.Array:
    """Steps 5 and 6 of ``transforms`` (``keras_gated.training.transforms``: pad, random
    crop back to the input size, random horizontal flip) on a batch of images
    (B, H, W, C), each image its own crop and flip, drawn from ``key``."""
    batch, height, width, channels = images.shape
    crop_key, flip_key = jax.random.split(key)
    if transforms.pad:
        pad = transforms.pad
        widths = ((0, 0), (pad, pad), (pad, pad), (0, 0))
        if transforms.pad_mode == "reflect":
            padded = jnp.pad(images, widths, mode="reflect")
        elif transforms.pad_mode == "mean":
            fill = jnp.asarray(transforms.fill, images.dtype)
            padded = jnp.pad(images - fill, widths) + fill
        else:
            padded = jnp.pad(images, widths)
        offsets = jax.random.randint(crop_key, (batch, 2), 0, 2 * pad + 1)

        def crop(image, offset):
            return jax.lax.dynamic_slice(
                image, (offset[0], offset[1], 0), (height, width, channels)
            )

        images = jax.vmap(crop)(padded, offsets)
    if transforms.flip:
        flips = jax.random.bernoulli(flip_key, 0.5, (batch, 1, 1, 1))
        images = jnp.where(flips, images[:, :, ::-1, :], images)
    return images


def smoothed_cross_entropy(probs: jax.Array, labels: jax.Array, smoothing: float) -> jax.Array:
    """Per-example CE of softmax outputs against one-hot labels smoothed by ε:
    −Σ_c ((1 − ε)·1[c = y] + ε / C) · log p_c (Keras's ``label_smoothing``)."""
    classes = probs.shape[-1]
    log_probs = jnp.log(jnp.clip(probs.astype(jnp.float32), keras.config.epsilon(), 1.0))
    target = jax.nn.one_hot(labels, classes) * (1.0 - smoothing) + smoothing / classes
    return -jnp.sum(target * log_probs, axis=-1)


@dataclass
class TrainState:
    """Everything a step reads and writes, as JAX arrays (a pytree of lists)."""

    trainable: list
    non_trainable: list
    optimizer: list
    metrics: jax.Array  # [loss sum, correct, seen, non-finite flag]


jax.tree_util.register_pytree_node(
    TrainState,
    lambda s: ((s.trainable, s.non_trainable, s.optimizer, s.metrics), None),
    lambda _, children: TrainState(*children),
)


def initial_state(model: keras.Model, optimizer: keras.optimizers.Optimizer) -> TrainState:
    """The model's and optimizer's current values as a ``TrainState`` (builds the optimizer)."""
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    return TrainState(
        trainable=[v.value for v in model.trainable_variables],
        non_trainable=[v.value for v in model.non_trainable_variables],
        optimizer=[v.value for v in optimizer.variables],
        metrics=jnp.zeros((4,), jnp.float32),
    )


def write_back(state: TrainState, model: keras.Model, optimizer: keras.optimizers.Optimizer) -> None:
    """Assign a state's values to the model's and optimizer's variables."""
    for variable, value in zip(model.trainable_variables, state.trainable):
        variable.assign(value)
    for variable, value in zip(model.non_trainable_variables, state.non_trainable):
        variable.assign(value)
    for variable, value in zip(optimizer.variables, state.optimizer):
        variable.assign(value)


def make_train_step(
    model: keras.Model,
    optimizer: keras.optimizers.Optimizer,
    *,
    decayed: list,
    weight_decay: float,
    label_smoothing: float = 0.0,
    transforms: Transforms | None = None,
    learning_rate: Callable[[jax.Array, jax.Array], jax.Array] | None = None,
) -> Callable[..., TrainState]:
    """``step(state, images_u8, labels, batch_indices, key, total_steps) -> state``
    (``key`` is folded with the step number t inside, so one key serves every step),
    jit-compiled with the state donated. ``decayed`` are the model variables that carry
    L2(λ/2); ``transforms``: the augmentation of every batch (None: none).
    ``learning_rate(t, total_steps)``, when given, sets the optimizer's learning
    rate for step t (its ``iterations``) before the update, so the schedule's length is an
    argument of the compiled step rather than a constant of it; without it the
    optimizer's own learning rate or schedule applies."""
    lr_index = None
    if learning_rate is not None:
        lr_index = _variable_index(optimizer, optimizer._learning_rate, "learning rate")
    iterations_index = _variable_index(optimizer, optimizer.iterations, "iterations")
    decayed_ids = {id(v) for v in decayed}
    decayed_index = [i for i, v in enumerate(model.trainable_variables) if id(v) in decayed_ids]
    transforms = transforms or Transforms(batch_size=1)

    def loss_fn(trainable, non_trainable, x, y):
        probs, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        per_example = smoothed_cross_entropy(probs, y, label_smoothing)
        loss = jnp.mean(per_example)
        if weight_decay:
            l2 = sum(jnp.sum(jnp.square(trainable[i].astype(jnp.float32))) for i in decayed_index)
            loss = loss + 0.5 * weight_decay * l2
        correct = jnp.sum(jnp.argmax(probs, axis=-1) == y)
        return loss, (non_trainable, jnp.sum(per_example), correct)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def step(state: TrainState, images, labels, indices, key, total_steps=0) -> TrainState:
        # The augmentation of step t draws from key folded with t: a fresh draw every step.
        key = jax.random.fold_in(key, state.optimizer[iterations_index])
        x = augment(images[indices].astype(jnp.float32), key, transforms)
        y = labels[indices]
        (loss, (non_trainable, ce_sum, correct)), grads = grad_fn(
            state.trainable, state.non_trainable, x, y
        )
        opt_vars = list(state.optimizer)
        if learning_rate is not None:
            lr = learning_rate(opt_vars[iterations_index], total_steps)
            opt_vars[lr_index] = jnp.asarray(lr, opt_vars[lr_index].dtype)
        trainable, opt_vars = optimizer.stateless_apply(opt_vars, grads, state.trainable)
        bad = jnp.logical_not(jnp.isfinite(loss)).astype(jnp.float32)
        metrics = state.metrics + jnp.stack(
            [ce_sum, correct.astype(jnp.float32), jnp.float32(indices.shape[0]), bad]
        )
        return TrainState(trainable, non_trainable, opt_vars, metrics)

    return jax.jit(step, donate_argnums=(0,))


def _variable_index(optimizer: keras.optimizers.Optimizer, variable: Any, what: str) -> int:
    for i, v in enumerate(optimizer.variables):
        if v is variable:
            return i
    raise ValueError(
        f"The optimizer's {what} is not one of its variables: give it a float learning "
        "rate (not a schedule) when the step sets the learning rate itself."
    )


def make_eval_step(model: keras.Model) -> Callable[..., jax.Array]:
    """``eval(trainable, non_trainable, images_u8) -> probabilities`` (inference mode)."""

    def predict(trainable, non_trainable, images):
        probs, _ = model.stateless_call(
            trainable, non_trainable, images.astype(jnp.float32), training=False
        )
        return probs.astype(jnp.float32)

    return jax.jit(predict)


def epoch_order(key: jax.Array, n: int, batch_size: int) -> jax.Array:
    """A fresh permutation of the n examples cut into whole batches (steps, batch_size);
    the last incomplete batch is left out, so every step has the same shape."""
    steps = n // batch_size
    return jax.random.permutation(key, n)[: steps * batch_size].reshape(steps, batch_size)


def evaluate(
    predict: Callable[..., jax.Array],
    state: TrainState,
    images: jax.Array,
    labels: jax.Array,
    batch_size: int,
) -> dict[str, Any]:
    """Accuracy and mean CE over every example, in fixed-shape batches (the last one
    padded with repeats of the first images and masked out)."""
    n = images.shape[0]
    correct = 0
    ce = 0.0
    finite = True
    for start in range(0, n, batch_size):
        idx = jnp.arange(start, start + batch_size) % n
        probs = predict(state.trainable, state.non_trainable, images[idx])
        take = min(batch_size, n - start)
        p = probs[:take]
        y = labels[start : start + take]
        finite = finite and bool(jnp.all(jnp.isfinite(p)))
        correct += int(jnp.sum(jnp.argmax(p, -1) == y))
        ce += float(jnp.sum(smoothed_cross_entropy(p, y, 0.0)))
    return {"accuracy": correct / n, "loss": ce / n, "finite": finite}
