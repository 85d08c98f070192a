"""Build script: the project's metadata and dependencies are in pyproject.toml; this file
says which files go into the wheel.

* The library ``keras_gated`` and its package data (``py.typed``, the demo images).
* The released checkpoints of ``zoo/`` that are small enough, as the package
  ``keras_gated._zoo``: each ``zoo/<weight id>/`` folder of at most ``BUNDLE_CAP_BYTES``
  is copied whole (same file names), so a wheel install loads them offline; larger ones
  come from the Hub. ``keras_gated.weights`` checks every bundled file against its
  registered sha256, as it does for every other source.
* ``startup/keras_gated.pth.in`` (installed as ``keras_gated.pth``) and the module it imports, ``startup/_keras_gated_startup.py``,
  at the top of the wheel (so in ``site-packages``): at interpreter start they make Keras
  register keras-gated's classes whenever it is imported, so ``keras.saving.load_model``
  of a keras-gated save works without ``import keras_gated``. Editable installs
  (``pip install -e .``) carry them too, at the top of the editable wheel.
* Nothing else: ``training/``, ``tests/``, ``benchmarks/`` and ``examples/`` run from a
  source checkout only.

``tests/package/test_packaging.py`` builds the wheel and checks its contents against the caps
below.
"""

import os
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

ZOO = Path(__file__).resolve().parent / "zoo"
STARTUP = Path(__file__).resolve().parent / "startup"
# Installed at the top of site-packages, beside the package: source name -> installed name
# (the .pth is kept as .pth.in in the tree, where a .pth would read as a torch checkpoint).
STARTUP_FILES = {"keras_gated.pth.in": "keras_gated.pth", "_keras_gated_startup.py": "_keras_gated_startup.py"}
# A zoo/<weight id>/ folder ships in the wheel when its files total at most this size.
BUNDLE_CAP_BYTES = 5_000_000
# The whole wheel must stay under this size (PyPI accepts up to 100 MB by default).
WHEEL_CAP_BYTES = 25_000_000


def folder_size(folder: Path) -> int:
    """Total size in bytes of the files directly inside ``folder``."""
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())


def bundled_checkpoints(zoo: Path = ZOO) -> list[str]:
    """The weight ids whose ``zoo/`` folder (with a ``model.weights.h5``) is within the cap."""
    if not zoo.is_dir():
        return []
    return sorted(
        folder.name
        for folder in zoo.iterdir()
        if any((folder / name).is_file() for name in ("model.weights.h5", "model.weights.json"))
        and folder_size(folder) <= BUNDLE_CAP_BYTES
    )


class BuildPyWithStartup(build_py):
    """``build_py``, plus ``STARTUP_FILES`` at the top of the build (so of the wheel)."""

    def run(self) -> None:
        super().run()
        for source, installed in STARTUP_FILES.items():
            self.copy_file(str(STARTUP / source), os.path.join(self.build_lib, installed))


class _WithStartup:
    """An editable-install strategy of setuptools that also writes ``STARTUP_FILES`` at
    the top of the editable wheel."""

    def __init__(self, strategy) -> None:
        self.strategy = strategy

    def __call__(self, wheel, files, mapping) -> None:
        self.strategy(wheel, files, mapping)
        for source, installed in STARTUP_FILES.items():
            wheel.writestr(installed, (STARTUP / source).read_bytes())

    def __enter__(self):
        self.strategy.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self.strategy.__exit__(*exc_info)


class EditableWheelWithStartup(editable_wheel):
    """``editable_wheel`` (``pip install -e .``), plus ``STARTUP_FILES`` at the top of the
    editable wheel, as in the wheel."""

    def _select_strategy(self, name, tag, build_lib):
        return _WithStartup(super()._select_strategy(name, tag, build_lib))


if __name__ == "__main__":  # also under pip's build backend, which runs this file as main
    setup(
        cmdclass={"build_py": BuildPyWithStartup, "editable_wheel": EditableWheelWithStartup},
        packages=[
            *find_namespace_packages(include=["keras_gated", "keras_gated.*"]),
            "keras_gated._zoo",
        ],
        package_dir={"keras_gated._zoo": "zoo"},
        package_data={
            "keras_gated": ["py.typed", "catalog.json", "assets/**/*"],
            # the released-weight configs, one per family, and the compressed architectures
            "keras_gated.models": ["*/*.json", "compressed/architectures.jsonl"],
            "keras_gated._zoo": [f"{weight_id}/*" for weight_id in bundled_checkpoints()],
        },
    )
