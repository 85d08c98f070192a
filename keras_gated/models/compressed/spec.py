"""The compressed nets' declaration (``keras_gated.models.family_spec``): their papers are
their sources' (whose citation patterns match their names), their parameter counts those
recorded when they were released."""

from keras_gated.models.compressed.architectures import read_architectures
from keras_gated.models.family_spec import FamilySpec, register_spec

SPEC = register_spec(FamilySpec(
    name="compressed",
    registry_families=("compressed",),
    parameter_counts={arch.name: arch.parameters for arch in read_architectures()
                      if arch.parameters is not None},
))
