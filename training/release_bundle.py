"""Release a lease bundle (``python -m training.lease run``'s output) as a zoo folder.

    python -m training.release BUNDLE --register [--notes "..."] [--caveat "..."]
    python -m training.release BUNDLE --out DIR         # the folder in DIR, zoo/ untouched

The bundle's weights (bfloat16, BatchNorm statistics float32) are loaded into the model
built in float32, written as a zoo folder in a new temporary folder, and evaluated there
once with ``keras_gated.evaluation.evaluate`` — the repository's own measurement, on the
full test split, on this machine. That number goes on the card, the accelerator's beside
it; when they differ by more than ``GPU_TOLERANCE`` the release stops and says why,
touching nothing in ``zoo/``. The weights are stored as they came back: every array that
is exactly bfloat16 as bfloat16 (``keras_gated.weights.shards.narrow_to_bfloat16``), in
shards of at most 45 MB.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

GPU_TOLERANCE = 0.003  # 0.3 percentage point between the accelerator's and this machine's
PAPER_NOTES = {
    "gwrn_28_10": "Residual Gates (Savarese & Figueiredo 2017), Table 3: G-WRN (4,10) + dropout, "
                  "3.65 % test error (96.35 % accuracy) on the original CIFAR-10 after 200 epochs "
                  "of the WRN recipe (SGD, lr 0.1 divided by 5 at epochs 60/120/160, batch 128).",
    "wrn_28_10": "Zagoruyko & Komodakis 2016, Table 6: WRN-28-10 + dropout, 3.89 % test error "
                 "on the original CIFAR-10 after 200 epochs.",
}


def is_bundle(folder: Path) -> bool:
    """True when ``folder`` holds a lease bundle's manifest, or is a packed bundle
    (``DIR/<model>.tar`` of a call that trained several nets)."""
    from training.lease.bundle import FORMAT, MANIFEST, is_packed_bundle

    if Path(folder).is_file():
        return is_packed_bundle(Path(folder))
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return False
    try:
        return json.loads(path.read_text()).get("format") == FORMAT
    except ValueError:
        return False


def bundle_model(bundle: Path):
    """(model in float32 with the bundle's weights, the bundle's metrics)."""
    import keras

    from keras_gated import create_model, get_model_entry
    from keras_gated.training.recipes import get_recipe
    from training.lease.bundle import assign_weights, read_bundle

    values, _, metrics = read_bundle(bundle)
    if metrics.get("status") != "finished":
        raise ValueError(f"{bundle} is a bundle of a run that did not finish "
                         f"({metrics.get('status')!r}): release a finished run's bundle.")
    if metrics.get("model_args"):
        raise ValueError(f"{bundle} trained {metrics['model']} with --model-arg "
                         f"{metrics['model_args']}: another architecture than the registered one, "
                         "an experiment's net, not a release of it.")
    recipe = get_recipe(metrics["recipe"])
    kwargs = {}
    if recipe.dropout is not None and get_model_entry(metrics["model"]).supports_dropout:
        kwargs["dropout"] = recipe.dropout
    keras.config.set_dtype_policy("float32")
    model = create_model(metrics["model"], **kwargs)
    assign_weights(model, values)
    return model, metrics


def recipe_text(metrics: dict) -> str:
    """The recipe's description with the epochs the run had (a budget recipe's own epoch
    count is only its default)."""
    from keras_gated.training.recipes import get_recipe

    default = f"{get_recipe(metrics['recipe']).epochs} epochs"
    return metrics["recipe_description"].replace(
        default, f"{metrics['epochs']} epochs ({metrics['steps']} steps)")


def card_notes(metrics: dict, measured: float, notes: str) -> str:
    """The card's notes: how the lease trained the net, the paper's number, ``notes``."""
    gpu = metrics["test_accuracy"]
    phases = metrics.get("phases", {})
    recipe = recipe_text(metrics)
    lines = [
        f"Trained in one call of a lent {metrics['device']} ({metrics['platform'].upper()}): "
        f"{metrics['steps']} steps of batch {metrics['batch_size']} = {metrics['epochs']} epochs "
        f"in {phases.get('train_s', 0):.0f} s ({metrics['train_img_per_s']:.0f} img/s, "
        f"{metrics['precision']}, JAX {metrics['versions']['jax']}, Keras "
        f"{metrics['versions']['keras']}), the schedule sized to a {metrics['minutes']}-minute "
        "deadline counted from the command's start.",
        "",
        f"Recipe: {recipe}.",
        "",
        f"Test accuracy on CIFAR-10 (JPEG q75 copy): {measured:.4f} measured by "
        f"`keras-gated evaluate` on CPU in float32; the GPU measured {gpu:.4f} on the same "
        "bfloat16 weights.",
    ]
    paper = PAPER_NOTES.get(metrics["model"])
    if paper:
        lines += ["", f"The paper: {paper} This release had "
                  f"{metrics['epochs']} epochs on a JPEG q75 copy of CIFAR-10."]
    if notes.strip():
        lines += ["", notes.strip()]
    return "\n".join(lines)


def release_bundle(bundle: Path, *, notes: str = "", caveat: str = "", zoo: Path,
                   out: Path | None = None, into_zoo: bool = False,
                   record_caveat=None) -> Path:
    """Release ``bundle`` into ``zoo/<weight id>`` (``into_zoo``) or into ``out/<weight
    id>``; returns the folder (registering it is the caller's). Nothing is written there
    unless the CPU's evaluation agrees with the accelerator's. ``record_caveat(folder,
    caveat)`` writes a non-empty ``caveat`` into the folder before it is put in place."""
    bundle = Path(bundle)
    if bundle.is_file():  # a packed bundle: released from a temporary unpacked copy
        from training.lease.bundle import unpacked_bundle

        with unpacked_bundle(bundle) as folder:
            return release_bundle(folder, notes=notes, caveat=caveat, zoo=zoo, out=out,
                                  into_zoo=into_zoo, record_caveat=record_caveat)
    from keras_gated.evaluation import evaluate
    from keras_gated.files import exclusive_lock, replace_folder
    from keras_gated.release.zoo_folder import save_zoo_folder

    model, metrics = bundle_model(bundle)
    weight_id = f"{metrics['model']}.{metrics['dataset']}"
    target_root = zoo if into_zoo else out
    if target_root is None:
        raise ValueError("Give --register (into zoo/) or --out DIR for the released folder.")
    target = Path(target_root) / weight_id
    if not into_zoo and target.exists():
        raise ValueError(f"{target} exists: give another --out.")
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.parent / f".{weight_id}.lock", f"The release folder {target}"):
        measured = _write_measured(bundle, model, metrics, weight_id, target, notes, caveat,
                                   write_folder=save_zoo_folder, evaluate=evaluate,
                                   replace_folder=replace_folder, record_caveat=record_caveat)
    print(f"wrote {target}: test accuracy {measured:.4f} (keras-gated evaluate, CPU), "
          f"{metrics['test_accuracy']:.4f} on the {metrics['device']}")
    return target


def _write_measured(bundle: Path, model, metrics: dict, weight_id: str, target: Path,
                    notes: str, caveat: str, *, write_folder, evaluate, replace_folder,
                    record_caveat) -> float:
    """Write the release folder beside ``target`` (a hidden partial folder), measure it,
    and put it in place only when the measurement agrees with the accelerator's; returns
    the measured accuracy. ``target`` is left as it was otherwise."""
    from keras_gated.weights.shards import SHARD_INDEX, narrow_to_bfloat16, shard_names

    arch, tag = metrics["model"], metrics["dataset"]
    from keras_gated.files import fresh_staging_folder

    staging_root = fresh_staging_folder(target)  # under the caller's lock
    try:
        def write(folder: Path, accuracy: float, measured: float | None) -> list[str]:
            record = {
                "test_accuracy": round(accuracy, 4),
                "split": "test",
                "num_examples": 10000,
                "gpu_test_accuracy": metrics["test_accuracy"],
                "epochs": metrics["epochs"],
                "steps": metrics["steps"],
                "batch_size": metrics["batch_size"],
                "backend": "jax",
                "hardware": f"{metrics['device']} (one lease call)",
                "wall_time_s": round(metrics.get("phases", {}).get("train_s", 0.0), 1),
                "keras_version": metrics["versions"]["keras"],
                "precision": metrics["precision"],
                "lease": {k: metrics[k] for k in ("minutes", "train_img_per_s", "phases",
                                                  "versions", "seed", "schedule_resized")
                          if k in metrics},
                "recipe": metrics["recipe"],
            }
            write_folder(
                model, folder, weight_id=weight_id, metrics=record,
                recipe=recipe_text(metrics), command=metrics["command"],
                dataset_note=metrics["data_note"], training_log=bundle / "log.csv",
                notes=card_notes(metrics, measured if measured is not None else accuracy, notes),
            )
            narrow_to_bfloat16(folder / SHARD_INDEX if (folder / SHARD_INDEX).is_file()
                               else folder / "model.weights.h5")
            names = (shard_names(folder / SHARD_INDEX) if (folder / SHARD_INDEX).is_file()
                     else ["model.weights.h5"])
            from training.lease.bundle import sha256_file

            return [sha256_file(folder / n) for n in names]

        first = staging_root / "measure" / weight_id
        pins = write(first, metrics["test_accuracy"], None)
        measured = evaluate(arch, str(first), tag)["test_accuracy"]
        if abs(measured - metrics["test_accuracy"]) > GPU_TOLERANCE:
            raise ValueError(
                f"`keras-gated evaluate` measures {measured:.4f} on this machine, the "
                f"accelerator measured {metrics['test_accuracy']:.4f} on the same weights: more "
                f"than {GPU_TOLERANCE * 100:.1f} points apart, so nothing was released."
            )
        final = staging_root / "final" / weight_id
        if write(final, measured, measured) != pins:
            raise ValueError("The folder written for the card holds other weights than the one "
                             "measured: nothing was released.")
        if caveat.strip():
            record_caveat(final, caveat)
        replace_folder(final, target)
    finally:
        shutil.rmtree(staging_root, ignore_errors=True)
    return measured
