"""keras-hub integration: any convolutional keras-gated model as a keras-hub ``Backbone``.

keras-hub is optional: this module imports it and fails with one sentence without it.

    >>> import keras_hub
    >>> from keras_gated.keras_hub import GatedBackbone
    >>> backbone = GatedBackbone("gresnet20", weights="cifar10")
    >>> classifier = keras_hub.models.ImageClassifier(backbone=backbone, num_classes=5)
    >>> classifier.save_to_preset("my_preset")   # reloads with its head's weights:
    >>> keras_hub.models.ImageClassifier.from_preset("my_preset")
    >>> backbone.pyramid_outputs            # {"P0": ..., "P1": ..., "P2": ...}
    >>> backbone.save_to_preset("gresnet20_preset")
    >>> keras_hub.models.Backbone.from_preset("gresnet20_preset")  # after importing this module

A ``GatedBackbone`` is the registry model built with ``include_top=False`` (raw 0-255
pixels in, the last feature map out; the normalisation stays inside, as the layer
``preprocessing``). Its config names the registry model and its arguments, so a preset
folder (``config.json`` naming ``keras_gated>GatedBackbone``, ``metadata.json``,
``model.weights.h5``) rebuilds it; ``keras_gated.keras_hub`` must be imported before
``Backbone.from_preset`` so that Keras knows the class.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

import keras

try:
    import keras_hub
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "keras_gated.keras_hub needs keras-hub (pip install keras-hub); the rest of "
        "keras_gated works without it."
    ) from error

from keras_gated.features import feature_layers, pyramid_outputs
from keras_gated.models.factory import create_model
from keras_gated.weights.config import split_weight_id
from keras_gated.weights.registered import get_pretrained_cfg

PACKAGE = "keras_gated"


@contextlib.contextmanager
def _global_policy(dtype: Any) -> Iterator[None]:
    """Build layers under ``dtype`` (a policy or its name; None: leave it), then restore
    the global policy: keras-gated's builders read it instead of taking a dtype."""
    if dtype is None:
        yield
        return
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(dtype)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


@keras.saving.register_keras_serializable(package=PACKAGE)
class GatedBackbone(keras_hub.models.Backbone):
    """A keras-gated registry model without its top, as a keras-hub ``Backbone``.

    Args:
        model_name: a registered convolutional model (``keras_gated.list_models()``),
            e.g. ``"gresnet20"``, ``"gwrn_16_2"``, ``"gresnet50"``.
        model_kwargs: its constructor arguments (``{"gate": "sigmoid", "k_init": 0.5}``);
            saved in the config, so they must be JSON values.
        weights: weights to load when building (a tag, a file, ``"hf://..."``); not saved
            in the config: a preset carries the weights themselves.
        image_shape: (height, width, channels); None for the family's default.
        dtype: the dtype policy of the layers (e.g. ``"mixed_bfloat16"``).

    Attributes:
        pyramid_outputs: ``{"P<log2 stride>": feature map}`` of every stage
            (``keras_gated.features.pyramid_outputs``).
        data_format: always ``"channels_last"``.
    """

    def __init__(
        self,
        model_name: str,
        model_kwargs: dict[str, Any] | None = None,
        weights: str | os.PathLike | None = None,
        image_shape: Sequence[int | None] | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        model_kwargs = dict(model_kwargs or {})
        fixed = {"include_top", "pooling", "input_shape", "input_tensor", "weights"} & set(model_kwargs)
        if fixed:
            raise ValueError(
                f"GatedBackbone sets {', '.join(sorted(fixed))} itself: pass weights= and "
                "image_shape= instead, and leave include_top / pooling out of model_kwargs."
            )
        with _global_policy(dtype):
            model = create_model(
                model_name,
                include_top=False,
                pooling=None,
                weights=weights,
                input_shape=None if image_shape is None else tuple(image_shape),
                **model_kwargs,
            )
        try:
            feature_layers(model)
        except ValueError as error:
            raise ValueError(
                f"GatedBackbone needs a convolutional model with feature maps; {error}"
            ) from None
        pyramid = pyramid_outputs(model)
        kwargs.setdefault("name", f"{model_name}_backbone")
        super().__init__(inputs=model.inputs[0], outputs=model.outputs[0], dtype=dtype, **kwargs)
        self.model_name = model_name
        self.model_kwargs = model_kwargs
        self.image_shape = tuple(model.input_shape[1:])
        self.pyramid_outputs = pyramid
        self.data_format = "channels_last"

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "model_name": self.model_name,
            "model_kwargs": dict(self.model_kwargs),
            "image_shape": list(self.image_shape),
        }

    def save_to_preset(self, preset_dir: str | os.PathLike, max_shard_size: float = 10) -> None:
        """Save the backbone to a preset folder (keras-hub's ``Backbone.save_to_preset``).

        When a generic ``keras_hub.models.ImageClassifier`` on this backbone saves itself
        (it saves its backbone last), its ``task.json`` is recorded as the
        ``GatedImageClassifier`` it is equivalent to, so that
        ``ImageClassifier.from_preset(preset_dir)`` rebuilds it with its head's weights
        (keras-hub rebuilds a task of another class from the backbone alone, with a
        fresh head)."""
        super().save_to_preset(os.fspath(preset_dir), max_shard_size=max_shard_size)
        claim_task_config(os.path.join(os.fspath(preset_dir), TASK_CONFIG_FILE))


TASK_CONFIG_FILE = "task.json"
_GENERIC_CLASSIFIER = "keras_hub>ImageClassifier"


def claim_task_config(task_file: str | os.PathLike) -> bool:
    """Record a saved generic ``ImageClassifier`` whose backbone is a ``GatedBackbone``
    as a ``GatedImageClassifier`` (same arguments, same weights: a subclass adding
    nothing). Returns whether ``task_file`` was rewritten; any other file is left alone."""
    import json

    if not os.path.isfile(task_file):
        return False
    with open(task_file) as f:
        config = json.load(f)
    backbone = (config.get("config") or {}).get("backbone") or {}
    if (config.get("registered_name") != _GENERIC_CLASSIFIER
            or backbone.get("registered_name") != f"{PACKAGE}>GatedBackbone"):
        return False
    config.update(module=__name__, class_name="GatedImageClassifier",
                  registered_name=f"{PACKAGE}>GatedImageClassifier")
    with open(task_file, "w") as f:
        json.dump(config, f, indent=4)
    return True


def save_preset(
    model_name: str,
    preset_dir: str | os.PathLike,
    *,
    weights: str | os.PathLike | None = None,
    image_shape: Sequence[int | None] | None = None,
    **model_kwargs: Any,
) -> GatedBackbone:
    """Write a keras-hub preset folder of a registry model (e.g. released weights:
    ``save_preset("gresnet20", "gresnet20_cifar10", weights="cifar10")``) and return the
    backbone. ``keras_hub.models.Backbone.from_preset(preset_dir)`` loads it back."""
    backbone = GatedBackbone(model_name, model_kwargs, weights=weights, image_shape=image_shape)
    backbone.save_to_preset(os.fspath(preset_dir))
    return backbone


@keras.saving.register_keras_serializable(package=PACKAGE)
class GatedImageClassifier(keras_hub.models.ImageClassifier):
    """keras-hub's ``ImageClassifier`` on a ``GatedBackbone`` (average pooling, dropout,
    a ``Dense`` head): the task ``ImageClassifier.from_preset`` builds for a preset whose
    backbone is a ``GatedBackbone``."""

    backbone_cls = GatedBackbone


def save_classifier_preset(weight_id: str, preset_dir: str | os.PathLike) -> Any:
    """Write released weights as a keras-hub ``ImageClassifier`` preset and return the
    classifier: the ``GatedBackbone`` with the released weights, and keras-hub's head
    (average pooling, then a ``Dense``) holding the released head's weights.

        >>> save_classifier_preset("gresnet20.cifar10", "gresnet20_cifar10")
        >>> keras_hub.models.ImageClassifier.from_preset("gresnet20_cifar10")  # logits
        >>> keras_hub.models.Backbone.from_preset("gresnet20_cifar10")  # the backbone only

    As every keras-hub ``ImageClassifier``, it outputs logits (no activation): their
    softmax is the keras-gated model's output. It takes raw 0-255 pixels (the
    normalisation is inside the backbone) and has no keras-hub preprocessor.
    """
    arch, tag = split_weight_id(weight_id)
    if not tag:
        raise ValueError(f"{weight_id!r} is not a weight id: give name.tag, e.g. gresnet20.cifar10.")
    cfg = get_pretrained_cfg(weight_id)
    released = create_model(arch, weights=tag, classes=cfg.classes)  # the weights' own head
    head = released.get_layer("predictions")
    if not isinstance(released.get_layer("avg_pool"), keras.layers.GlobalAveragePooling2D):
        raise ValueError(f"{weight_id}: a keras-hub ImageClassifier preset needs a "
                         "convolutional model (average pooling, then the head).")
    backbone = GatedBackbone(arch, weights=tag)
    classifier = GatedImageClassifier(
        backbone=backbone, num_classes=cfg.classes, activation=None, pooling="avg"
    )
    classifier.output_dense.set_weights(head.get_weights())
    classifier.save_to_preset(os.fspath(preset_dir))
    return classifier


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m keras_gated.keras_hub WEIGHT_ID OUT_DIR``: write the keras-hub preset."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m keras_gated.keras_hub",
                                     description="Write released weights as a keras-hub preset.")
    parser.add_argument("weight_id", help="released weights, e.g. gresnet20.cifar10")
    parser.add_argument("out", help="the preset folder to write")
    args = parser.parse_args(argv)
    save_classifier_preset(args.weight_id, args.out)
    print(f"wrote {args.out}: keras_hub.models.ImageClassifier.from_preset({args.out!r}) "
          "after `import keras_gated.keras_hub`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
