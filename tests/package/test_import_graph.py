"""The package's import graph has no cycle, counting imports inside functions too: every
module can be read (and imported) after the modules it uses."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "keras_gated"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} of every module of the package."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports anywhere in its file (``from a import b``
    counts as importing ``a.b`` when that is a module, else ``a``)."""
    found = set()
    for base, names in imports_of(name, path):
        targets = [f"{base}.{n}" if f"{base}.{n}" in modules else base for n in names] or [base]
        found.update(t for t in targets if t in modules and t != name)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as a path that ends where it starts, or [] if it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_find_cycle_finds_one_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_package_has_no_import_cycle():
    modules = module_files()
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert sum(map(len, graph.values())) > 50  # the graph was really read
    assert find_cycle(graph) == [], "import cycle: " + " -> ".join(find_cycle(graph))


# What the weights package may import of keras_gated: itself and the leaf modules that import
# nothing of the package; the models, the registry and the command line call it instead.
WEIGHTS_MAY_IMPORT = ("keras_gated.weights", "keras_gated.layers", "keras_gated.errors",
                      "keras_gated.flops", "keras_gated._api")


def unit_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """The import graph between the package's units (each subpackage, and each top-level
    module, as one node): what a drawing of the package by folders shows."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {unit(t) for t in imported_modules(name, path, modules)} - {unit(name)}
        graph.setdefault(unit(name), set()).update(targets)
    return graph


def test_the_packages_units_import_one_way():
    """No subpackage or top-level module imports, through any chain, one that imports it:
    the units stack in floors, each importing only the floors below it."""
    graph = unit_graph(module_files())
    assert {"keras_gated.models", "keras_gated.registry", "keras_gated.weights"} <= set(graph)
    assert "keras_gated.registry" in graph["keras_gated.models"]  # the graph was really read
    cycle = find_cycle(graph)
    assert cycle == [], "units importing each other: " + " -> ".join(cycle)


def test_a_cycle_between_units_is_found(tmp_path):
    package = tmp_path / "keras_gated"
    for folder, text in {"a": "from keras_gated.b.y import f\n", "b": "def f(): from keras_gated.a.x import g\n"}.items():
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
        (package / folder / ("x.py" if folder == "a" else "y.py")).write_text(text)
    cycle = find_cycle(unit_graph(module_files(package)))
    assert set(cycle) == {"keras_gated.a", "keras_gated.b"}


def test_the_weights_package_imports_nothing_above_it():
    modules = module_files()
    found = {f"{name} -> {target}"
             for name, path in modules.items() if name.startswith("keras_gated.weights")
             for target in imported_modules(name, path, modules)
             if not target.startswith(WEIGHTS_MAY_IMPORT)}
    assert found == set()
    for leaf in WEIGHTS_MAY_IMPORT[2:]:  # the leaves import nothing of the package
        assert imported_modules(leaf, modules[leaf], modules) == set(), leaf


def test_loading_released_weights_imports_no_release_module():
    import os
    import subprocess
    import sys

    code = ("import sys, keras_gated as kg; kg.GResNet20(weights='cifar10'); "
            "kg.create_model('gresnet20.cifar10'); "
            "print(sorted(m for m in sys.modules if m.startswith('keras_gated.release')))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KERAS_BACKEND": os.environ.get("KERAS_BACKEND", "jax")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"



# The top-level packages of the checkout: the library, its training, the paper experiments
# and the benchmarks. Their modules, as {dotted name: file}.
ROOT = PACKAGE.parent
TOP_LEVEL = ("keras_gated", "training", "experiments", "benchmarks")
# The former homes of moved experiment modules: each warns (DeprecationWarning) and
# re-exports its new module, the only imports from experiments/ that training/ may hold.


def all_modules() -> dict[str, Path]:
    modules = {}
    for top in TOP_LEVEL:
        if (ROOT / top).is_dir():
            modules.update(module_files(ROOT / top))
    return modules


def imports_of(name: str, path: Path) -> list[tuple[str, list[str]]]:
    """``(imported module, [imported names])`` of every import in ``name``'s file, relative
    imports resolved (``import a.b`` gives ``("a.b", [])``)."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - node.level + 1]
                base = ".".join(here + ([base] if base else []))
            found.append((base, [alias.name for alias in node.names]))
    return found


def unit(module: str) -> str:
    """What owns a module for the private-name rule: its top-level package, and inside
    keras_gated its subpackage (``keras_gated.analysis``); the package's own top-level
    modules (``keras_gated.gating``) are each their own unit."""
    parts = module.split(".")
    if parts[0] != "keras_gated" or len(parts) == 1:
        return parts[0]
    return ".".join(parts[:2])


def private_imports_across_units(modules: dict[str, Path]) -> list[str]:
    """``"importer: module._name"`` for every private name imported from another unit."""
    found = []
    for name, path in modules.items():
        for module, names in imports_of(name, path):
            if module.split(".")[0] not in TOP_LEVEL or unit(module) == unit(name):
                continue
            found += [f"{name}: {module}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    return found


def importers_of(package: str, modules: dict[str, Path], among: str) -> set[str]:
    """The modules of ``among`` that import anything from ``package``."""
    return {name for name, path in modules.items() if name.split(".")[0] == among
            and any(module.split(".")[0] == package for module, _ in imports_of(name, path))}


def test_the_rules_are_read_from_real_imports():
    modules = all_modules()
    assert {"training.train", "keras_gated.training.build", "experiments.tools.records",
            "keras_gated.gating"} <= set(modules)
    assert unit("keras_gated.analysis.removal") == unit("keras_gated.analysis.lesion")
    assert unit("keras_gated.gating") != unit("keras_gated.analysis.removal")
    assert importers_of("training", modules, "experiments")  # the experiments use training


def test_the_library_imports_neither_training_nor_experiments():
    modules = all_modules()
    assert importers_of("training", modules, "keras_gated") == set()
    assert importers_of("experiments", modules, "keras_gated") == set()


def test_training_imports_nothing_from_experiments():
    assert importers_of("experiments", all_modules(), "training") == set()


# No private name crosses a package boundary, the library's own included.
LIBRARY_PRIVATE_IMPORTS: set[str] = set()


def test_no_module_imports_a_private_name_of_another_package():
    found = set(private_imports_across_units(all_modules()))
    assert found - LIBRARY_PRIVATE_IMPORTS == set()
    # training, experiments and benchmarks take no private name from anywhere else.
    assert not any(line.split(".")[0] in ("training", "experiments", "benchmarks") for line in found)


def test_a_private_import_across_packages_is_found(tmp_path):
    module = tmp_path / "tool.py"
    module.write_text("from training.train import _model_kwargs, fingerprint\n"
                      "from .records import _own\n")
    found = private_imports_across_units({"experiments.tools.tool": module})
    assert found == ["experiments.tools.tool: training.train._model_kwargs"]
