"""ResNet-50's declaration (``keras_gated.models.family_spec``)."""

from keras_gated.models.family_spec import FamilySpec, register_spec
from keras_gated.models.resnet.convert import TORCHVISION

SPEC = register_spec(FamilySpec(
    name="resnet",
    registry_families=("resnet",),
    twins=(("resnet50", "gresnet50"),),
    citations=(
        ("gresnet50*", ("savarese2017residual", "he2016deep")),
        ("resnet50*", ("he2016deep",)),
    ),
    stem_feature="stem_relu",  # reduction 2, as timm's resnet50 exposes it
    converters=(TORCHVISION,),
))
