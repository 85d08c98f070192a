"""Adding a family is one folder and one import line (CONTRIBUTING.md, "Add a family").

A tiny convolutional family, an ungated net and its gated twin, is written into a
temporary copy of the package as ``keras_gated/models/tiny_net/`` (its block and
constructors, its weight configs, and its one declaration in ``__init__.py``) plus one
import line in ``keras_gated/models/__init__.py``; the generator then writes the files
derived from the declarations (``catalog.json``, the docs' family table). The
registry-wide tests then run on it, in a fresh process that imports the copy: it is
listed, built, saved and loaded (.keras), gated (``gate()``), feature-extracted
(``features_only``), pruned, cited and counted, exported (``keras_gated.GTinyNet``), and
the generated files are current, with no other file of the package or of the tests
changed by hand.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import keras

from tests.support.backend_split import EVERY_BACKEND_PATHS, ONCE_BACKEND

ROOT = Path(__file__).resolve().parents[2]
IMPORT_LINE = "from keras_gated.models import tiny_net  # noqa: E402, F401\n"
GENERATE = "keras_gated.models.generate"
NAMES = ("tinynet1", "tinynet2", "gtinynet1", "gtinynet2")

FAMILY = {
    "__init__.py": '''
        """Tiny convolutional nets and their gated twins: the family a test adds."""

        from pathlib import Path

        from keras_gated.registry.families import Family, Models, declare
        from keras_gated.models.tiny_net.tiny_net import GTinyNet, TinyBlock, TinyNet, tiny_name


        def count(depth, gated):
            """Closed form: stem 3·3·3·4 + 4; per block 3·3·4·4 + 4 (+ one k); head 4·10 + 10."""
            return 27 * 4 + 4 + 2 * depth * (9 * 16 + 4 + gated) + 4 * 10 + 10


        FAMILY = declare(Family(
            name="tiny_net",
            constructors=(TinyNet, GTinyNet),
            models=tuple(
                Models(prefix, constructor,
                       arch_name=lambda depth, prefix=prefix: tiny_name(prefix, depth),
                       configs=[{"depth": 1}, {"depth": 2}],
                       description="Tiny net, {depth} blocks per stage")
                for prefix, constructor in (("tinynet", TinyNet), ("gtinynet", GTinyNet))
            ),
            default_recipe="preact_cifar",
            released=Path(__file__).with_name("tiny_net.json"),
            twins=(("tinynet", "gtinynet"),),
            citations=(("gtinynet*", ("tiny2026", "savarese2017residual")),
                       ("tinynet*", ("tiny2026",))),
            papers={"tiny2026": "@misc{tiny2026,\\n  title = {Tiny Nets},\\n  year = {2026}\\n}"},
            parameter_counts={f"{p}{d}": count(d, p == "gtinynet")
                              for p in ("tinynet", "gtinynet") for d in (1, 2)},
        ))
    ''',
    "tiny_net.py": '''
        """Tiny nets: stem conv -> two stages of ``depth`` blocks (a max-pool between) -> head.

        Block: u = g(k)·ReLU(conv3x3(x)) + x (gated), u = ReLU(conv3x3(x)) + x (ungated).
        The block names say nothing of their stage: the blocks record it themselves.
        """

        import keras

        from keras_gated.layers.block import Block
        from keras_gated.layers.residual_gate import ResidualGate
        from keras_gated.models.builder import (
            APPLICATION_ARGUMENTS, CIFAR_INPUT, build_application, public_constructor,
        )

        WIDTH = 4


        @keras.saving.register_keras_serializable(package="keras_gated")
        class TinyBlock(Block):
            gateable = True

            def __init__(self, gate=None, **kwargs):
                super().__init__(**kwargs)
                self.gate = gate

            def build(self, input_shape):
                self.conv = keras.layers.Conv2D(input_shape[-1], 3, padding="same",
                                                activation="relu", name="conv")
                self.conv.build(input_shape)
                self.residual_gate = None
                if self.gate is not None:
                    self.residual_gate = ResidualGate(self.gate, form="residual", name="gate")
                    self.residual_gate.build([input_shape, input_shape])

            def call(self, x):
                r = self.conv(x)
                return r + x if self.residual_gate is None else self.residual_gate([r, x])

            def compute_output_shape(self, input_shape):
                return input_shape

            def get_config(self):
                return {**super().get_config(), "gate": self.gate}


        def tiny_name(prefix, depth):
            return f"{prefix}{depth}"


        def _tiny(prefix, depth, gate, **application):
            def features(x):
                x = keras.layers.Conv2D(WIDTH, 3, padding="same", name="stem")(x)
                for stage in (1, 2):
                    if stage > 1:
                        x = keras.layers.MaxPooling2D(2, name=f"pool{stage}")(x)
                    for i in range(1, depth + 1):
                        x = TinyBlock(gate, stage=stage, name=f"b{stage}{i}")(x)
                return x

            return build_application(features, arch=tiny_name(prefix, depth), spec=CIFAR_INPUT,
                                     **application)


        @public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 10})
        def TinyNet(depth=1, **kwargs):
            """A tiny residual net of ``depth`` blocks per stage."""
            return _tiny("tinynet", depth, None, **kwargs)


        @public_constructor(*APPLICATION_ARGUMENTS, defaults={"classes": 10})
        def GTinyNet(depth=1, gate="relu", **kwargs):
            """TinyNet with one Residual Gate per block."""
            return _tiny("gtinynet", depth, gate, **kwargs)
    ''',
    "tiny_net.json": "{}\n",
}

# The registry-wide tests and what each proves about the new family.
REGISTRY_TESTS = {
    "tests/registry/test_registry.py::test_entry_holds_what_training_and_listing_need": "listed",
    "tests/models/test_families.py::test_registered_model_builds_and_runs": "built",
    "tests/models/test_families.py::test_round_trip": ".keras round trip",
    "tests/models/test_families.py::test_every_registered_model_is_cited": "cited",
    "tests/registry/test_timm_api.py::test_timm_model_api": "timm API and features_only",
    "tests/test_gating.py::test_every_registered_model_gates_to_its_exact_twin_or_says_why_not": "gated",
    "tests/test_gating.py::test_every_registered_model_prunes_its_removable_blocks_exactly": "pruned",
    "tests/models/test_parameter_counts.py::test_registered_parameter_count": "counted",
    "tests/models/test_families.py::test_every_declaration_is_complete": "declared",
    "tests/test_catalog.py::test_the_generated_files_are_current": "generated",
}


def add_family(root: Path) -> Path:
    """A copy of the package, its tests and its docs under ``root`` with the tiny family
    added as CONTRIBUTING.md says: one folder and one import line, then the generated
    files written again by the generator. Returns the copy's package."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("keras_gated", "tests", "docs"):
        shutil.copytree(ROOT / folder, root / folder, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    folder = root / "keras_gated" / "models" / "tiny_net"
    folder.mkdir()
    for name, text in FAMILY.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    with open(root / "keras_gated" / "models" / "__init__.py", "a") as init:
        init.write(IMPORT_LINE)
    subprocess.run([sys.executable, "-m", GENERATE], cwd=root, env=_env(root), check=True,
                   capture_output=True, text=True, timeout=600)
    return root / "keras_gated"


def _env(root: Path) -> dict:
    """The environment of a process that imports the copy under ``root``."""
    return {**os.environ, "PYTHONPATH": str(root), "KERAS_BACKEND": keras.backend.backend()}


def changed_files(original: Path, copy: Path) -> list[str]:
    """Files of ``copy`` that are new or differ from ``original`` (relative paths)."""
    changed = []
    for path in sorted(copy.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(copy)
        twin = original / relative
        if not twin.is_file() or not filecmp.cmp(path, twin, shallow=False):
            changed.append(relative.as_posix())
    return changed


def test_a_new_family_is_one_folder_and_one_import_line(tmp_path):
    package = add_family(tmp_path)
    changed = changed_files(ROOT / "keras_gated", package)
    by_hand = ["models/__init__.py"] + [f"models/tiny_net/{n}" for n in sorted(FAMILY)]
    assert changed == sorted(["catalog.json", *by_hand])  # and the generated snapshot
    assert changed_files(ROOT / "docs", tmp_path / "docs") == ["models.md"]  # its table
    before = (ROOT / "keras_gated" / "models" / "__init__.py").read_text()
    assert (package / "models" / "__init__.py").read_text() == before + IMPORT_LINE
    code = ("import keras_gated as kg; print('GTinyNet' in kg.__all__, "
            "kg.is_model('gtinynet2'), kg.GTinyNet.__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(tmp_path),
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.split() == ["True", "True", "GTinyNet"]


def test_the_registry_wide_tests_run_on_the_new_family(tmp_path):
    add_family(tmp_path)
    env = _env(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
         *sorted({test.split("::")[0] for test in REGISTRY_TESTS}),
         "-k", "tinynet or tiny_net or generated_files_are_current"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    passed = set(re.findall(r"^PASSED (\S+)", result.stdout, flags=re.M))
    assert str(tmp_path / "keras_gated") in _imported_package(tmp_path, env)
    for test, proves in REGISTRY_TESTS.items():
        if keras.backend.backend() != ONCE_BACKEND and not test.startswith(EVERY_BACKEND_PATHS):
            continue  # a backend-independent module: it runs in the TensorFlow pass only
        ran = {p for p in passed if p == test or p.startswith(f"{test}[")}
        assert ran, f"the new family was not {proves}: {test} did not run on it"
    # Every size in the pass that checks sizes (TensorFlow), one per constructor in others.
    built = {p.split("[")[1].rstrip("]") for p in passed
             if p.startswith("tests/models/test_families.py::test_registered_model_builds")}
    assert {"tinynet1", "gtinynet1"} <= built <= set(NAMES)


def _imported_package(root: Path, env: dict) -> str:
    """Where ``import keras_gated`` finds the package in the test's environment."""
    code = "import importlib.util; print(importlib.util.find_spec('keras_gated').origin)"
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, check=True).stdout
