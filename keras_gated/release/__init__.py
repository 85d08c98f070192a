"""Writing a release: the zoo folder and model card of trained weights, the markdown
tables of the zoo, the papers a card cites, and publishing a folder to the Hub.

* ``zoo_folder``: the folder and model card a release is published as;
* ``listing``: the markdown tables of the zoo (``docs/zoo.md``, the README);
* ``citations``: the BibTeX of the papers a card cites;
* ``hub``: publishing a zoo folder to the Hugging Face Hub.

Release commands (``python -m training.release``, ``keras-gated publish``) use it; loading
weights (``keras_gated.weights``) never imports it. Names are loaded on first use (PEP 562).
"""

from __future__ import annotations

from keras_gated._api import lazy_names

_WHERE = {
    "save_zoo_folder": "keras_gated.release.zoo_folder",
    "load_folder_model": "keras_gated.release.zoo_folder",
    "pretrained_cfg_from_folder": "keras_gated.release.zoo_folder",
    "publish": "keras_gated.release.hub",
}

# Submodules reachable as attributes (``keras_gated.release.listing``) before any import
# of them.
_SUBMODULES = ("citations", "hub", "listing", "zoo_folder")


__getattr__, __dir__ = lazy_names(__name__, _WHERE, _SUBMODULES, globals())

__all__ = sorted(_WHERE)
