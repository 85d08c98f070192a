"""Compressed nets: released gated nets without some of their blocks, registered under
names of their own (``gresnet20_c50``), built by their sources' code.

The family's folder:

* ``architectures.jsonl``: the compressed architectures, one JSON line each (name,
  source, removed blocks, budget, description, parameter count);
* ``architectures.py``: reads and writes it;
* ``compressed.py``: a constructor per line, registered by the declaration;
* ``compressed.json``: the configs of their released weights;
* this file: its declaration (``keras_gated.registry.families.Family``): their papers
  are their sources' (whose citation patterns match their names), their parameter
  counts those recorded when they were released.
"""

from pathlib import Path

from keras_gated.models.compressed.architectures import CompressedArch, read_architectures
from keras_gated.models.compressed.compressed import (  # noqa: F401
    compressed_constructor,
    register_compressed,
    register_released,
    registered,
    unregister_compressed,
)
from keras_gated.registry.families import Family, declare

FAMILY = declare(Family(
    name="compressed",
    registry_family_names=("compressed",),
    register=register_released,  # one constructor per line of architectures.jsonl
    released=Path(__file__).with_name("compressed.json"),
    parameter_counts={arch.name: arch.parameters for arch in read_architectures()
                      if arch.parameters is not None},
))

__all__ = ["CompressedArch", "compressed_constructor", "register_compressed",
           "register_released", "registered", "unregister_compressed", "FAMILY"]
