"""Progress bars of the commands that run for more than a few seconds.

The bar is Keras's own (``keras.utils.Progbar``, the one ``fit`` draws), written to
standard error so that standard output keeps only a command's results. It is shown when
standard error is a terminal, or as ``set_enabled`` says (``keras-gated --progress`` or
``--no-progress``); the same setting turns the Hugging Face Hub's download bars on or off.
``track`` wraps a loop::

    for start in track(range(0, len(images), 256), "evaluating 10000 images", unit="batch"):
        ...
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_enabled: bool | None = None  # None: shown where standard error is a terminal


def set_enabled(value: bool | None) -> None:
    """Show progress bars always (True), never (False), or where standard error is a
    terminal (None, the default); the Hub's download bars follow."""
    global _enabled
    _enabled = value
    try:
        from huggingface_hub.utils import disable_progress_bars, enable_progress_bars
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return
    if value is False:
        disable_progress_bars()
    elif value is True:
        enable_progress_bars()


def enabled() -> bool:
    """Whether progress bars are shown now (see ``set_enabled``)."""
    if _enabled is not None:
        return _enabled
    return hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


def keras_verbose() -> int:
    """The ``verbose`` to give Keras's ``fit``, ``evaluate`` and ``predict``: 1 (its
    progress bar) where bars are shown, else 0. Use it inside ``on_stderr()``."""
    return 1 if enabled() else 0


@contextlib.contextmanager
def on_stderr() -> Iterator[None]:
    """Keras writes its progress bars to standard output: send them to standard error."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


class Bar:
    """A bar of ``total`` steps headed by ``title``, or nothing where bars are not shown.
    ``advance()`` counts a step; ``close()`` completes the bar."""

    def __init__(self, total: int, title: str, unit: str = "step") -> None:
        self.total, self.done = int(total), 0
        self._bar = None
        if enabled() and self.total > 0:
            import keras

            print(title, file=sys.stderr, flush=True)
            self._bar = keras.utils.Progbar(self.total, unit_name=unit)
            with on_stderr():
                self._bar.update(0)

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done."""
        self.done = min(self.total, self.done + steps)
        if self._bar is not None:
            with on_stderr():
                self._bar.update(self.done)

    def close(self) -> None:
        """Complete the bar (once all steps are done it is already complete)."""
        if self._bar is not None and self.done < self.total:
            self.advance(self.total - self.done)

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc_info) -> None:
        if exc_info[0] is None:
            self.close()
        elif self._bar is not None:
            print(file=sys.stderr, flush=True)  # the error's line starts on a line of its own


def track(items: Iterable[T], title: str, *, total: int | None = None, unit: str = "step") -> Iterator[T]:
    """``items``, one at a time, with a ``Bar`` counting them (``total``: their number,
    where ``len(items)`` does not say it)."""
    total = len(items) if total is None else total  # type: ignore[arg-type]
    with Bar(total, title, unit) as bar:
        for item in items:
            yield item
            bar.advance()
