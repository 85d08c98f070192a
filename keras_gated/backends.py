"""Which Keras backend to start, decided before Keras is imported.

``pip install keras-gated`` installs Keras without a backend, and Keras starts the one
that ``KERAS_BACKEND`` or its ``keras.json`` names, TensorFlow by default, failing with
``No module named 'tensorflow'`` where that is not installed. So, before Keras is
imported (by ``import keras_gated`` or a ``keras-gated`` command):

* with ``KERAS_BACKEND`` unset and Keras's choice not installed, the installed backend
  (the first of ``BACKENDS`` that is) is chosen by setting ``KERAS_BACKEND``, and once
  Keras is imported one line on stderr says so (once per process);
* where no backend can be started, ``missing_backend_message`` is the one sentence that
  says what to install (``keras-gated`` commands print it instead of Keras's error).

Nothing here imports a backend or Keras: installed modules are found with
``importlib.util.find_spec``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

BACKENDS = ("tensorflow", "jax", "torch")  # in the order one is chosen
KERAS_DEFAULT = "tensorflow"
BACKEND_ENV = "KERAS_BACKEND"
INSTALL = {
    "jax": 'pip install "keras-gated[jax]"',
    "tensorflow": 'pip install "keras-gated[tensorflow]"',
    "torch": 'pip install "keras-gated[torch]" (or torch alone)',
}
_chosen: str | None = None  # the backend select_backend set in this process
_skipped: list[str] = []  # the backend Keras would have started instead
_announced = False


class BackendNotInstalledError(ModuleNotFoundError, ValueError):
    """No Keras backend can be started here; the message says what to install. (A
    ValueError too, so the command line reports it as one sentence.)"""


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported here; imports nothing."""
    if module in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False


def installed_backends() -> list[str]:
    """The backends of ``BACKENDS`` installed here, in that order."""
    return [name for name in BACKENDS if is_installed(name)]


def configured_backend() -> str:
    """The backend Keras would start: ``$KERAS_BACKEND``, else its ``keras.json``'s
    (in ``$KERAS_HOME`` or ``~/.keras``), else TensorFlow."""
    if os.environ.get(BACKEND_ENV):
        return os.environ[BACKEND_ENV]
    home = Path(os.environ.get("KERAS_HOME") or Path("~/.keras").expanduser())
    try:
        backend = json.loads((home / "keras.json").read_text()).get("backend")
    except (OSError, ValueError, AttributeError):
        backend = None
    return backend if isinstance(backend, str) and backend else KERAS_DEFAULT


def _keras_imported() -> bool:
    return "keras" in sys.modules


def select_backend() -> str | None:
    """Set ``KERAS_BACKEND`` to an installed backend where it is unset and Keras's own
    choice is not installed; return the backend this set (in this call or an earlier
    one), or None where Keras's choice stands (Keras already imported, ``KERAS_BACKEND``
    set by the user, Keras's choice installed, or no backend installed at all).
    ``announce_choice`` says so, once Keras is imported."""
    global _chosen
    if _keras_imported() or os.environ.get(BACKEND_ENV):
        return _chosen
    configured = configured_backend()
    installed = installed_backends()
    if is_installed(configured) or not installed:
        return None
    _chosen = installed[0]
    _skipped.append(configured)
    os.environ[BACKEND_ENV] = _chosen
    return _chosen


def announce_choice() -> None:
    """Say on stderr, once per process, which backend ``select_backend`` chose and why."""
    global _announced
    if _chosen is None or _announced:
        return
    _announced = True
    print(f"keras-gated: using the Keras backend {_chosen}, as {_skipped[0]} (Keras's "
          f"choice) is not installed; set {BACKEND_ENV} to choose another.", file=sys.stderr)


def missing_backend_message() -> str | None:
    """One sentence saying what to install where the backend Keras will start is not
    installed; None where it is."""
    backend = configured_backend()
    if is_installed(backend):
        return None
    installed = installed_backends()
    if os.environ.get(BACKEND_ENV):
        how = INSTALL.get(backend, f"install {backend}")
        other = f", or set {BACKEND_ENV} to {' or '.join(installed)}" if installed else ""
        return (f"{BACKEND_ENV}={backend} names a Keras backend that is not installed: "
                f"{how}{other}.")
    return ("No Keras backend is installed: install one with "
            f"{INSTALL['jax']} (the smallest), {INSTALL['tensorflow']} or "
            f"{INSTALL['torch']}.")


def require_backend() -> None:
    """Before Keras is imported: choose the installed backend where needed
    (``select_backend``), or raise ``BackendNotInstalledError`` where none can start."""
    if "keras" in sys.modules:
        return
    select_backend()
    message = missing_backend_message()
    if message is not None:
        raise BackendNotInstalledError(message, name=configured_backend())
