"""Model families, each a folder ``<family>/`` (constructors, released-weight configs,
converter, declared spec: ``family_spec.py``) imported here by one line; the
constructors are applications-style (see ``builder.py``)."""

from keras_gated.models.fc_nets import (
    GPlainNet,
    GResNetFC,
    HighwayFC,
    PlainNet,
    ResNetFC,
)
from keras_gated.models.highway_net import HighwayNet, HighwayNet50
from keras_gated.models.postact_resnet import PostActResNet, PostActResNet110
from keras_gated.models.preact_resnet import (
    GResNet,
    GResNet20,
    GResNet32,
    GResNet44,
    GResNet56,
    GResNet110,
    GResNet164,
    GResNet1001,
    PreActResNet,
    PreActResNet20,
    PreActResNet32,
    PreActResNet44,
    PreActResNet56,
    PreActResNet110,
    PreActResNet164,
    PreActResNet1001,
)
from keras_gated.models.resnet import GResNet50, ResNet50
from keras_gated.models.wide_resnet import GWideResNet, WideResNet
from keras_gated.models import compressed  # noqa: E402, F401  (after the nets it compresses)

__all__ = [
    "GPlainNet",
    "GResNet",
    "GResNet20",
    "GResNet32",
    "GResNet44",
    "GResNet56",
    "GResNet110",
    "GResNet164",
    "GResNet1001",
    "GResNet50",
    "GResNetFC",
    "GWideResNet",
    "HighwayFC",
    "HighwayNet",
    "HighwayNet50",
    "PlainNet",
    "PostActResNet",
    "PostActResNet110",
    "PreActResNet",
    "PreActResNet20",
    "PreActResNet32",
    "PreActResNet44",
    "PreActResNet56",
    "PreActResNet110",
    "PreActResNet164",
    "PreActResNet1001",
    "ResNet50",
    "ResNetFC",
    "WideResNet",
]
