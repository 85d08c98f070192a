"""keras-gated: a Keras 3 model zoo of gated deep networks.

Highway networks (Srivastava et al. 2015; Greff et al. 2017), Residual Gates (Savarese &
Figueiredo 2017) and pre-activation ResNets (He et al. 2016), as keras.applications-style
constructors, with a timm-style registry.
"""

from keras_gated import layers
from keras_gated.gates import gate_values, gated_blocks, remove_block, set_gate
from keras_gated.gating import gate
from keras_gated.models import (
    GPlainNet,
    GResNet,
    GResNet20,
    GResNet32,
    GResNet44,
    GResNet56,
    GResNet110,
    GResNet164,
    GResNet1001,
    GResNet50,
    GResNetFC,
    GWideResNet,
    HighwayFC,
    HighwayNet,
    HighwayNet50,
    PlainNet,
    PreActResNet,
    PreActResNet20,
    PreActResNet32,
    PreActResNet44,
    PreActResNet56,
    PreActResNet110,
    PreActResNet164,
    PreActResNet1001,
    ResNet50,
    ResNetFC,
    WideResNet,
)
from keras_gated.preprocessing import decode_predictions, preprocess_input
from keras_gated.registry import create_model, get_model_entry, is_model, list_models
from keras_gated.pretrained import PretrainedCfg, get_pretrained_cfg, list_pretrained

from keras_gated.version import __version__

__all__ = [
    "gate",
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
    "PreActResNet",
    "PreActResNet20",
    "PreActResNet32",
    "PreActResNet44",
    "PreActResNet56",
    "PreActResNet110",
    "PreActResNet164",
    "PreActResNet1001",
    "PretrainedCfg",
    "ResNet50",
    "ResNetFC",
    "WideResNet",
    "create_model",
    "decode_predictions",
    "gate_values",
    "gated_blocks",
    "get_model_entry",
    "get_pretrained_cfg",
    "is_model",
    "layers",
    "list_models",
    "list_pretrained",
    "preprocess_input",
    "remove_block",
    "set_gate",
]
