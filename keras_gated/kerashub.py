"""Deprecated: the keras-hub integration is ``keras_gated.keras_hub``.

``from keras_gated.kerashub import GatedBackbone`` (and the rest) keeps working, with one
``DeprecationWarning`` naming the new place; ``python -m keras_gated.kerashub`` still
writes a preset.
"""

from __future__ import annotations

import warnings

from keras_gated.keras_hub import (  # noqa: F401  (re-exported)
    GatedBackbone,
    GatedImageClassifier,
    main,
    save_classifier_preset,
    save_preset,
)

warnings.warn(
    "keras_gated.kerashub is deprecated: import from keras_gated.keras_hub.",
    DeprecationWarning,
    stacklevel=2,
)

if __name__ == "__main__":
    raise SystemExit(main())
