"""Register keras-gated's layers and models with Keras whenever Keras is imported.

``import keras_gated`` imports no backend, yet ``keras.saving.load_model`` of a saved
keras-gated model needs the package's classes registered before Keras deserializes it.
``install`` therefore registers them at once if Keras is already imported, and otherwise
puts a finder on ``sys.meta_path`` that runs the registration right after Keras finishes
importing, whichever module imports it.

When Keras is imported from inside a keras-gated module (``import keras_gated.layers``
first), registering at that moment would import modules that are themselves half
imported. The finder also follows the package's own module imports and registers only
once none of them is running, i.e. when the outermost one has finished.

The wheel's ``keras_gated.pth`` loads this module at every interpreter start (see
``startup/_keras_gated_startup.py``), so it imports only what is already imported then:
the finder and the loader follow the import protocols without ``importlib.abc``'s base
classes (which import ``importlib.resources``, tens of milliseconds), and the lock is
``_thread``'s.
"""

from __future__ import annotations

import _thread
import importlib  # for the annotations only: importlib.abc is not imported
import sys
from _collections_abc import Callable, Sequence  # collections.abc, imported at start
from types import ModuleType

PACKAGE = "keras_gated"
WATCHED = "keras"


class _AfterExec:
    """Wraps a module's loader: runs ``after`` once the module has executed, and puts the
    original loader back on the module."""

    def __init__(self, loader: importlib.abc.Loader, hook: RegistrationHook) -> None:
        self.loader = loader
        self.hook = hook

    def __getattr__(self, name: str) -> object:
        # Everything else (get_code for ``python -m``, resource readers, ...) is the
        # original loader's.
        return getattr(self.loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.hook.running += 1
        try:
            module.__loader__ = self.loader
            if module.__spec__ is not None:
                module.__spec__.loader = self.loader
            self.loader.exec_module(module)
        finally:
            self.hook.running -= 1
        self.hook.maybe_register()


class RegistrationHook:
    """A ``sys.meta_path`` finder that calls ``register`` once Keras is imported and no
    keras-gated module is half imported; it removes itself when it has."""

    def __init__(self, register: Callable[[], None]) -> None:
        self.register = register
        self.running = 0  # modules being executed through this finder
        self.done = False
        self._lock = _thread.RLock()
        # Threads in the middle of this finder's search: another such finder on
        # sys.meta_path (the wheel's startup one and the package's) asks this one in turn,
        # which then answers None instead of asking that one again.
        self._searching: set[int] = set()

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        thread = _thread.get_ident()
        if (self.done or thread in self._searching
                or not (fullname == WATCHED or fullname.startswith(PACKAGE + "."))):
            return None
        self._searching.add(thread)
        try:
            spec = self._find_elsewhere(fullname, path, target)
        finally:
            self._searching.discard(thread)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _AfterExec(spec.loader, self)
        return spec

    def _find_elsewhere(self, fullname: str, path: Sequence[str] | None,
                        target: ModuleType | None) -> importlib.machinery.ModuleSpec | None:
        """The spec the other finders of ``sys.meta_path`` give, the first one found."""
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def maybe_register(self) -> None:
        """Register if Keras is imported and nothing of keras-gated is half imported."""
        with self._lock:
            if self.done or self.running or WATCHED not in sys.modules:
                return
            self.done = True
            uninstall(self)
        self.register()


def uninstall(hook: RegistrationHook) -> None:
    """Take ``hook`` off ``sys.meta_path`` (no error if it is not there)."""
    try:
        sys.meta_path.remove(hook)
    except ValueError:
        pass


def install(register: Callable[[], None]) -> RegistrationHook | None:
    """Run ``register`` now if Keras is imported, else right after it is; returns the
    finder that waits for Keras, or None when ``register`` already ran."""
    if WATCHED in sys.modules:
        register()
        return None
    hook = RegistrationHook(register)
    sys.meta_path.insert(0, hook)
    return hook
