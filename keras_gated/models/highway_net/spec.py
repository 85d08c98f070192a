"""The convolutional Highway nets' declaration (``keras_gated.models.family_spec``)."""

from keras_gated.models.family_spec import FamilySpec, register_spec

SPEC = register_spec(FamilySpec(
    name="highway_net",
    registry_families=("highway_net",),
    citations=(
        ("highwaynet50*", ("greff2017highway", "srivastava2015highway", "he2016deep")),
        ("highwaynet*", ("srivastava2015highway",)),
    ),
    stem_feature="stem_relu",  # HighwayNet50's stem, reduction 2 (as ResNet-50's)
))
