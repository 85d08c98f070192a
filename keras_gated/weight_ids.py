"""Weight ids: ``name.tag`` (``"gresnet20.cifar10"``), the registry name plus a data tag.

A weight id names a ``zoo/`` folder, a Hub repo and a planned checkpoint alike. This
module is keras-free so that configs and planned checkpoints import it cheaply.
"""

from __future__ import annotations


def split_weight_id(name: str) -> tuple[str, str | None]:
    """``"gresnet20.cifar10"`` -> ``("gresnet20", "cifar10")``; a bare name -> tag None."""
    arch, _, tag = name.partition(".")
    return arch, (tag or None)


class WeightIdParts:
    """Mixin for objects with a ``weight_id``: its ``arch`` and ``tag`` halves."""

    weight_id: str

    @property
    def arch(self) -> str:
        """The registry name: ``"gresnet20"``."""
        return split_weight_id(self.weight_id)[0]

    @property
    def tag(self) -> str:
        """The data tag: ``"cifar10"``."""
        return split_weight_id(self.weight_id)[1] or ""
