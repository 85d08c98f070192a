"""keras-gated's classes registered with Keras in every interpreter of the environment.

``keras.saving.load_model`` of a keras-gated save needs keras-gated's layers and models
registered with Keras; without ``import keras_gated`` Keras cannot find them. The wheel
installs this module and ``keras_gated.pth`` at the top of ``site-packages`` (an
editable install too, finding the package where its own ``.pth`` points); at
interpreter start the ``.pth`` line calls ``install``, which puts keras-gated's
post-import hook (``keras_gated/_keras_hook.py``, the one ``import keras_gated`` uses) on
``sys.meta_path``. Once Keras is imported, by anything, the hook imports ``keras_gated``,
which registers its classes.

At start it imports neither Keras nor the ``keras_gated`` package (whose import sets
``TF_ENABLE_ONEDNN_OPTS``): the hook module is loaded from its file. Nothing here raises:
without keras_gated beside this file nothing is installed, and a keras_gated that fails to import gives
one warning when Keras is imported. ``KERAS_GATED_AUTOREGISTER=0`` switches it off.
"""

import os
import sys

ModuleType = type(sys)  # types.ModuleType, without importing types

PACKAGE = "keras_gated"
HOOK_FILE = "_keras_hook.py"
SWITCH = "KERAS_GATED_AUTOREGISTER"


def _package_folder() -> str | None:
    """The folder of the keras_gated package: beside this file (a wheel install), else
    where the import system finds it without importing it (an editable install, whose own
    ``.pth`` has run before this one); None where there is none."""
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), PACKAGE)
    if os.path.isfile(os.path.join(beside, HOOK_FILE)):
        return beside
    from importlib.util import find_spec

    spec = find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return locations[0] if locations else None


def _hook_module() -> ModuleType | None:
    """keras_gated's ``_keras_hook`` module, loaded from the package's folder without
    importing the package; None when that package is not there."""
    from importlib.machinery import SourceFileLoader

    folder = _package_folder()
    path = os.path.join(folder, HOOK_FILE) if folder is not None else ""
    if not os.path.isfile(path):
        return None
    loader = SourceFileLoader(f"_{PACKAGE}_startup_hook", path)
    module = ModuleType(loader.name)
    module.__file__, module.__loader__ = path, loader
    loader.exec_module(module)
    return module


def _register() -> None:
    """Import keras_gated, which registers its classes now that Keras is imported."""
    try:
        __import__(PACKAGE)
    except Exception as error:  # a broken install must not break `import keras`
        import warnings

        warnings.warn(f"keras-gated is installed but fails to import ({type(error).__name__}: "
                      f"{error}), so Keras cannot load its saved models: reinstall it "
                      "(pip install --force-reinstall keras-gated) or uninstall it.",
                      stacklevel=2)


def install() -> None:
    """Register keras-gated's classes with Keras once Keras is imported (see the module's
    docstring); does nothing when switched off or when Keras is already imported."""
    if os.environ.get(SWITCH, "1") == "0" or "keras" in sys.modules:
        return
    try:
        hook = _hook_module()
    except Exception:  # an unreadable keras_gated: leave the interpreter as it is
        return
    if hook is not None:
        hook.install(_register)
