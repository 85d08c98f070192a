"""Release a compressed net as a zoo entry of its own name.

    python -m training.release_compressed runs/c50 --name gresnet20_c50 --register
    python -m training.release_compressed runs/c50 --name gresnet20_c50 --out DIR  # zoo/ untouched

Takes the folder ``keras-gated compress ... --out DIR`` wrote (its Keras save,
``metrics.json`` and ``compression.json``) and the compressed architecture's name
(``<source>_c<percent of the source's MACs>``). Builds that architecture
(``keras_gated.models.compressed``), checks it is the saved net's (same layers, same
weights layout) and moves the weights into it, writes the release folder (Keras save,
model card, metrics.json, and training_log.csv from the run's per-epoch history), checks
that ``keras-gated evaluate``'s measurement on it equals metrics.json (as
``training.release`` does), and prints the architecture's line and the weights'
``PretrainedCfg``. The folder is ``zoo/<name>.<tag>/`` with ``--register``, which alone
writes the zoo, else a new ``DIR/<name>.<tag>/`` (``--out``); it is written and measured
beside its place and moved in whole, so a release that fails its check leaves what was
there as it was. ``--register`` adds the line to
``keras_gated/models/compressed/architectures.jsonl`` and the config to
``keras_gated/models/compressed/compressed.json``, writes the keras-hub preset of a
convolutional net, and rewrites the zoo tables and the registry snapshot
(``keras_gated/catalog.json``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from training import release as plain_release

ROOT = plain_release.ROOT
RECORD_FILE = "compression.json"


@dataclass(frozen=True)
class CompressOutput:
    """What a ``keras-gated compress`` folder holds, read and checked."""

    folder: Path
    metrics: dict  # its metrics.json
    numbers: dict  # its compression.json
    source: str  # the architecture it was compressed from
    tag: str  # the data tag of its weight id
    removed: tuple[str, ...]

    @property
    def record(self) -> dict:
        return self.numbers["record"]


def read_compress_output(folder: Path) -> CompressOutput:
    """The compress folder ``folder``, refused in one sentence if it is not one."""
    from keras_gated.release.zoo_folder import pretrained_cfg_from_folder

    if not (folder / RECORD_FILE).is_file() or not (folder / "metrics.json").is_file():
        raise ValueError(f"{folder} has no {RECORD_FILE} and metrics.json: give the --out folder "
                         "of a finished keras-gated compress run.")
    metrics = json.loads((folder / "metrics.json").read_text())
    removed = tuple((metrics.get("model_args") or {}).get("removed_blocks") or ())
    if not removed:
        raise ValueError(f"{folder}/metrics.json records no removed blocks: it is not the "
                         "folder of a keras-gated compress run.")
    cfg = pretrained_cfg_from_folder(folder)  # the source's weight id, e.g. gresnet20.cifar10
    return CompressOutput(folder, metrics, json.loads((folder / RECORD_FILE).read_text()),
                          cfg.arch, cfg.tag, removed)


def architecture_of(run: CompressOutput, name: str):
    """The ``CompressedArch`` of ``run`` named ``name``, which must be
    ``<source>_c<percent>`` for the run's budget."""
    from keras_gated.models.compressed.architectures import (
        CompressedArch,
        budget_percent,
        compressed_name,
        describe,
    )

    record = run.record
    fraction = record["macs_after"] / record["macs_before"]
    expected = compressed_name(run.source, budget_percent(record["budget"], fraction))
    if name != expected:
        budget = ", ".join(f"{k}={v}" for k, v in record["budget"].items())
        raise ValueError(f"--name {name}: {run.folder} holds {run.source} compressed at {budget} "
                         f"({fraction:.3f} of its counted MACs), whose name is {expected}.")
    return CompressedArch(name, run.source, run.removed, dict(record["budget"]),
                          describe(run.source, run.removed, fraction, record["method"]))


def compressed_model(run: CompressOutput, arch):
    """The compress run's net built as ``arch`` (registered), its weights moved in after
    checking the two have the same layers and weight shapes."""
    import keras

    from keras_gated import create_model

    saved = keras.saving.load_model(run.folder, compile=False)
    built = create_model(arch.name, classes=saved.num_classes,
                         input_shape=tuple(saved.input_shape[1:]))

    def layout(model):
        return [(layer.name, [tuple(w.shape) for w in layer.weights]) for layer in model.layers]

    if layout(built) != layout(saved):
        raise ValueError(f"{run.folder} is not the architecture {arch.name} ({arch.source} "
                         f"without {', '.join(arch.removed_blocks)}): their layers differ.")
    built.set_weights(saved.get_weights())
    built.class_names = saved.class_names
    return built


def trainable_parameters(name: str) -> int:
    """The trainable parameters of the registered ``name`` with its default head."""
    import numpy as np

    from keras_gated import create_model

    return int(sum(np.prod(w.shape) for w in create_model(name).trainable_weights))


def write_training_log(record: dict, path: Path) -> Path:
    """The run's per-epoch metrics, phase by phase (pressure, then fine-tuning), as CSV."""
    rows = [{"phase": phase, "epoch": epoch, **values}
            for phase in ("pressure", "finetune")
            for epoch, values in enumerate(record["history"].get(phase, []))]
    columns = ["phase", "epoch", *sorted({key for row in rows for key in row} - {"phase", "epoch"})]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def source_net(run: CompressOutput):
    """The net the run compressed, with its weights (``source_weights`` of its metrics.json:
    ``<arch> (weights <tag, folder or file>)``)."""
    import re

    from keras_gated import create_model

    found = re.fullmatch(r"(\S+) \(weights (.+)\)", str(run.metrics.get("source_weights", "")))
    if found is None:
        raise ValueError(f"{run.folder}/metrics.json does not say which weights were compressed "
                         "(source_weights): give the --out folder of a keras-gated compress run.")
    return create_model(found[1], weights=found[2])


def time_against_source(run: CompressOutput, model, *, dataset: str | None = None,
                        images: int = 256, rounds: int = 7) -> dict:
    """The source net and ``model`` timed again here, in this process, by interleaved
    rounds of ``predict_on_batch`` on ``images`` test images, with a second copy of
    ``model`` as a control: a machine busy with other work times the two copies apart,
    and then nothing is released (the run's own timings may have been taken under load).
    Returns the card's points (accuracy and MACs as the run measured them)."""
    from keras_gated.analysis.report import load_examples, seconds_per_image, timed_alike, timing_copy

    x, _ = load_examples(dataset or run.tag, images, split="test")
    nets = [timing_copy(source_net(run)), timing_copy(model), timing_copy(model)]
    source_s, compressed_s, control_s = seconds_per_image(nets, x, rounds)
    if not timed_alike(control_s, compressed_s):
        raise ValueError(
            f"Two copies of {model.name} timed {compressed_s * 1e3:.3f} and "
            f"{control_s * 1e3:.3f} ms per image: the machine was busy, so its latency cannot "
            "go on the card. Release again on an idle machine (nothing was released).")
    measured = run.numbers["measured"]
    return {name: {**measured[key], "seconds_per_image": seconds, "images_per_second": 1 / seconds}
            for name, key, seconds in (("source", "source", source_s),
                                       ("compressed", "compressed", compressed_s))}


def portable_command(command: str, weight_id: str) -> str:
    """The compress run's command as a user runs it: into a folder named ``weight_id``,
    without the run's own backup folder."""
    import shlex

    words, kept, skip = shlex.split(command), [], False
    for word, following in zip(words, [*words[1:], None]):
        if skip:
            skip = False
            continue
        if word == "--backup-dir":
            skip = True
            continue
        if word == "--out" and following is not None:
            kept += ["--out", weight_id]
            skip = True
            continue
        kept.append(word)
    return shlex.join(kept)


def zoo_metrics(run: CompressOutput) -> dict:
    """metrics.json of the release: the run's, with what listings show (recipe, epochs,
    backend); ``save_zoo_folder`` adds the data note and the command."""
    record = run.record
    return {**{k: v for k, v in run.metrics.items() if k not in ("dataset", "command")},
            "recipe": "compress", "epochs": record["pressure"]["epochs"] + record["finetune_epochs"],
            "backend": run.numbers.get("backend", "?")}


def release_compressed(folder: Path, name: str, *, notes: str = "", zoo: Path = ROOT / "zoo",
                       dataset: str | None = None, register_in: Path | None = None,
                       architectures: Path | None = None, readme: Path | None = None,
                       catalog: Path | None = None, out: Path | None = None) -> Path:
    """Write ``zoo/<name>.<tag>/`` from the compress folder ``folder`` and, with
    ``register_in`` (the families' data folder), register it: the architecture's line into
    ``architectures``, the weights' config into ``register_in``, the keras-hub preset, and,
    when given, the zoo tables of ``readme`` and the registry snapshot ``catalog``.
    Without ``register_in`` the release goes to a new ``out/<name>.<tag>/`` and the zoo is
    not touched (``training.release.release_target``).
    ``dataset``: what ``keras-gated evaluate`` measures the folder on (default the tag)."""
    import keras

    import keras_gated  # noqa: F401  (registers the layers)
    from keras_gated.analysis.compress_report import compression_notes, compression_recipe
    from keras_gated.analysis.report import TIMING_AGREEMENT
    from keras_gated.evaluation import evaluate
    from keras_gated.models.compressed import registered
    from keras_gated.release.zoo_folder import pretrained_cfg_from_folder, save_zoo_folder

    run = read_compress_output(folder)
    arch = architecture_of(run, name)
    weight_id = f"{name}.{run.tag}"
    target = plain_release.release_target(weight_id, zoo, out, register_in)
    with registered(arch):
        arch = type(arch)(**{**arch.to_dict(), "parameters": trainable_parameters(name)})
        model = compressed_model(run, arch)
        if register_in is not None:
            plain_release.check_preset_possible(model)
        points = time_against_source(run, model, dataset=dataset)
        note = compression_notes(run.record, points,
                                 run.metrics.get("source_weights", run.source),
                                 timing_images=256, backend=keras.backend.backend(),
                                 where="the machine that released it, in one process, "
                                 "a second copy of the compressed net agreeing within "
                                 f"{TIMING_AGREEMENT:.0%}")
        before = run.numbers["measured"]["removed, not fine-tuned"]["accuracy"]
        note += (f"\n\nRight after the removal, before fine-tuning, the net scored "
                 f"{before:.4f}.")
        expected = run.metrics["test_accuracy"]
        with tempfile.TemporaryDirectory() as scratch:
            log = write_training_log(run.record, Path(scratch) / "log.csv")

            def write(folder: Path) -> Path:
                return save_zoo_folder(
                    model, folder, weight_id=weight_id, metrics=zoo_metrics(run),
                    recipe=compression_recipe(run.record),
                    command=portable_command(run.metrics["command"], weight_id),
                    dataset_note=run.metrics["dataset"], training_log=log,
                    notes=f"{notes.strip()}\n\n{note}" if notes.strip() else note,
                    class_names=list(model.class_names or ()) or None)

            # The number published is the one `keras-gated evaluate` reproduces.
            with plain_release.measured_release(
                    target, write,
                    lambda folder: evaluate(name, str(folder), dataset or run.tag)["test_accuracy"],
                    expected) as measured:
                print(f"wrote {target}: test accuracy {expected:.4f} (keras-gated evaluate: "
                      f"{measured:.4f})")
                cfg = pretrained_cfg_from_folder(target)
                if register_in is None:
                    print("rerun with --register to add the architecture and the weights:")
                    print(json.dumps(arch.to_dict()))
                    print(json.dumps({weight_id: cfg.to_dict()}, indent=2))
                    return target
                register(arch, cfg, target, register_in, architectures, readme, catalog)
    return target


def register(arch, cfg, out: Path, register_in: Path, architectures: Path | None,
             readme: Path | None, catalog: Path | None) -> None:
    """Write the architecture, the config, the keras-hub preset, the tables and the
    snapshot (``arch`` registered in this process)."""
    from keras_gated.models.generate import write_catalog
    from keras_gated.models.compressed.architectures import ARCHITECTURES_FILE, write_architecture
    from keras_gated.weights.registered import pretrained_cfgs_overlay

    print(f"registered {arch.name} in {write_architecture(arch, architectures or ARCHITECTURES_FILE)}")
    print(f"registered {cfg.weight_id} in {plain_release.register(cfg, register_in)}")
    with pretrained_cfgs_overlay(cfg):  # the preset loads the weights by their id
        plain_release.write_keras_hub_preset(cfg.weight_id, out)
    if readme is not None:
        written = plain_release.update_readme_tables(readme, register_in)
        print(f"updated the zoo tables of {', '.join(map(str, written))}")
    if catalog is not None:
        print(f"wrote the registry snapshot {write_catalog(catalog)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.release_compressed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="the --out folder of a keras-gated compress run")
    parser.add_argument("--name", required=True,
                        help="the compressed architecture's name, <source>_c<percent> "
                        "(gresnet20_c50 for gresnet20 at --macs 0.5)")
    parser.add_argument("--notes", default="", help="markdown for the card's Notes section")
    parser.add_argument("--dataset", help="the data keras-gated evaluate measures the release "
                        "on (default: the weight id's tag)")
    parser.add_argument("--register", action="store_true",
                        help="add the architecture and the weights to the compressed family's "
                        "data files, write the keras-hub preset, the zoo tables and "
                        "keras_gated/catalog.json")
    parser.add_argument("--out", type=Path, default=None,
                        help="without --register: the folder to write the release into, as "
                        "a new OUT/<name>.<tag>/ (zoo/ is written only with --register)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)
    if args.register and args.out is not None:
        parser.error("--register releases into zoo/; --out is for a release outside it: "
                     "give one of them")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from keras_gated.catalog import CATALOG_FILE
    from keras_gated.errors import run_command

    def run() -> int:
        release_compressed(
            args.folder, args.name, notes=args.notes, dataset=args.dataset,
            register_in=plain_release.CFGS_DIR if args.register else None,
            readme=plain_release.README if args.register else None,
            catalog=CATALOG_FILE if args.register else None, out=args.out)
        return 0

    return run_command("training.release_compressed", run, debug=args.debug)


if __name__ == "__main__":
    raise SystemExit(main())
