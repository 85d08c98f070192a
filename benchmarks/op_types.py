"""The op types a training step's time is grouped by, and which a TensorFlow op is of."""

from __future__ import annotations

import re

CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER = "conv forward", "conv backward-input", "conv backward-filter"
BN_FWD, BN_BWD = "batch-norm forward", "batch-norm backward"
ELEMENTWISE, OPTIMIZER = "elementwise/relu", "optimizer update"
LAYOUT, OTHER, OUTSIDE = "layout copies/transposes", "other ops", "outside ops"
CATEGORIES = (CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER, BN_FWD, BN_BWD, ELEMENTWISE,
              OPTIMIZER, LAYOUT, OTHER, OUTSIDE)
CONV_CATEGORIES = (CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER)

ELEMENTWISE_TYPES = frozenset(
    "Relu ReluGrad Relu6 Relu6Grad Elu EluGrad Selu SeluGrad LeakyRelu LeakyReluGrad Sigmoid "
    "SigmoidGrad Tanh TanhGrad Softplus AddV2 Add AddN Sub Mul RealDiv Div DivNoNan Maximum "
    "Minimum Neg Square Sqrt Rsqrt RsqrtGrad Exp Log Cast Select SelectV2 BiasAdd BiasAddGrad "
    "SquaredDifference ZerosLike OnesLike Pow Abs Sign Floor GreaterEqual Greater Less "
    "LessEqual Equal".split())


def classify(op_type: str, op_name: str, bn_layers: frozenset[str], optimizer: str) -> str:
    """The category of one TensorFlow op (``op_type``, full ``op_name``) of a training step
    of a model whose BatchNormalization layers are named ``bn_layers`` and whose optimizer's
    name scope is ``optimizer``."""
    if "BackpropFilter" in op_type:
        return CONV_BWD_FILTER
    if "BackpropInput" in op_type:
        return CONV_BWD_INPUT
    if "Conv" in op_type:
        return CONV_FWD
    scopes = [re.sub(r"_\d+$", "", part) for part in op_name.split("/")[:-1]]
    if scopes and scopes[0] == "StatefulPartitionedCall":
        scopes = scopes[1:]
    if op_type.startswith("ResourceApply") or (scopes and scopes[0].lower() == optimizer.lower()):
        return OPTIMIZER
    if bn_layers.intersection(scopes):
        return BN_BWD if "gradient_tape" in scopes else BN_FWD
    if op_type in ELEMENTWISE_TYPES or op_type.startswith("_Fused"):
        return ELEMENTWISE
    return OTHER
