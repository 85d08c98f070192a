"""Compressed nets: released gated nets without some of their blocks, registered under
names of their own (``gresnet20_c50``), built by their sources' code.

The family's folder:

* ``architectures.jsonl``: the compressed architectures, one JSON line each (name,
  source, removed blocks, budget, description, parameter count);
* ``architectures.py``: reads and writes it;
* ``compressed.py``: a constructor per line, which registers its name;
* ``compressed.json``: the configs of their released weights;
* ``spec.py``: its declaration (``keras_gated.models.family_spec.FamilySpec``).
"""

from keras_gated.models.compressed.architectures import CompressedArch  # noqa: F401
from keras_gated.models.compressed.compressed import (  # noqa: F401
    compressed_constructor,
    register_compressed,
    registered,
    unregister_compressed,
)
from keras_gated.models.compressed.spec import SPEC  # noqa: F401
