"""The pre-activation ResNets' declaration (``keras_gated.models.family_spec``)."""

from keras_gated.models.family_spec import FamilySpec, register_spec
from keras_gated.models.preact_resnet.convert import FBRESNET

SPEC = register_spec(FamilySpec(
    name="preact_resnet",
    registry_families=("preact_resnet", "gresnet"),
    twins=(("preactresnet", "gresnet"),),
    citations=(
        ("gresnet*", ("savarese2017residual", "he2016identity")),
        ("preactresnet*", ("he2016identity",)),
    ),
    final_feature="final_relu",  # the only normalised output of a pre-activation net
    converters=(FBRESNET,),
))
