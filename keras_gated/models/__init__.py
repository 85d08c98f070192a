"""Model families, each a folder ``<family>/`` that declares itself once
(``families.Family``: constructors, registry names, released-weight configs, papers,
converters), imported here by one line; the constructors are applications-style (see
``builder.py``).

The public names (``__all__``) are the declared families' constructors, read off the
declarations, so that a family's import line is all this file needs of it.
"""

from keras_gated.registry import families
# One line per family: importing its folder declares it.
from keras_gated.models import fc_nets  # noqa: E402, F401
from keras_gated.models import highway_net  # noqa: E402, F401
from keras_gated.models import postact_resnet  # noqa: E402, F401
from keras_gated.models import preact_resnet  # noqa: E402, F401
from keras_gated.models import resnet  # noqa: E402, F401
from keras_gated.models import wide_resnet  # noqa: E402, F401
from keras_gated.models import compressed  # noqa: E402, F401  (after the nets it compresses)


def __getattr__(name: str) -> object:
    """``__all__`` and every declared constructor (``keras_gated.models.GResNet20``),
    computed from the declarations of the families imported above (PEP 562)."""
    if name == "__all__":
        return sorted(families.public_constructors(), key=str.lower)
    constructor = families.public_constructors().get(name)
    if constructor is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return constructor


def __dir__() -> list[str]:
    return sorted({*globals(), *families.public_constructors()})
