"""keras-gated: a Keras 3 model zoo of gated deep networks.

Highway networks (Srivastava et al. 2015; Greff et al. 2017), Residual Gates (Savarese &
Figueiredo 2017) and pre-activation ResNets (He et al. 2016), as keras.applications-style
constructors, with a timm-style registry.

Importing the package is light: it imports no backend. Each public name
(``keras_gated.GResNet20``, ``keras_gated.create_model``, ...; see ``_api.PUBLIC``) is
imported on first use; where Keras's default backend is not installed, the installed one
is chosen (``keras_gated.backends``). Whenever Keras is imported, before or after this
package, the
package's layers and models are registered with Keras, so that ``keras.saving.load_model``
reads saved keras-gated models.
"""

from __future__ import annotations

from keras_gated import _api, _keras_hook, _moved, backends
from keras_gated.tensorflow_cpu import enable_onednn_by_default
from keras_gated.version import __version__  # noqa: F401

# Before anything imports TensorFlow: it reads the setting once, when imported.
enable_onednn_by_default()
# Before Keras is imported: where Keras's default backend is not installed, the one that is.
backends.select_backend()

__all__ = _api.public_names()


def __getattr__(name: str) -> object:
    """``keras_gated.<public name>``, imported from its module on first use (PEP 562)."""
    value = _api.resolve(name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_api.public_names()})


def _on_keras_import() -> None:
    """Once Keras is imported: say which backend was chosen for it, register the package."""
    backends.announce_choice()
    _api.import_all()


_keras_hook.install(_on_keras_import)
_moved.install()  # the old import paths, with a DeprecationWarning each
