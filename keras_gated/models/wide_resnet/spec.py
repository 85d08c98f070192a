"""The Wide ResNets' declaration (``keras_gated.models.family_spec``)."""

from keras_gated.models.family_spec import FamilySpec, register_spec
from keras_gated.models.wide_resnet.convert import WRN

SPEC = register_spec(FamilySpec(
    name="wide_resnet",
    registry_families=("wide_resnet", "gwide_resnet"),
    twins=(("wrn_", "gwrn_"),),
    citations=(
        ("gwrn_*", ("savarese2017residual", "zagoruyko2016wide")),
        ("wrn_*", ("zagoruyko2016wide",)),
    ),
    final_feature="final_relu",  # the only normalised output of a pre-activation net
    converters=(WRN,),
))
