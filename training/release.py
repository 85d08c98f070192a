"""Turn a finished training run into a released zoo folder.

    python -m training.release training/runs/gresnet20.cifar10 --register [--notes "..."]
    python -m training.release training/runs/gresnet20.cifar10 --out DIR  # zoo/ untouched

Takes the run's final model (``last.keras``, the last epoch, the model ``metrics.json``
measured), writes ``zoo/<weight id>/`` (with ``--register``, under a lock) or
``DIR/<weight id>/`` with ``keras_gated.release.save_zoo_folder`` (Keras save files,
model card, metrics.json, training log) beside its place, checks that ``keras-gated
evaluate``'s own measurement on the real test split equals ``metrics.json``, moves it into
place and prints its ``PretrainedCfg`` as JSON (sha256 pinned, revision None until
published). ``--register`` also writes that entry into the data file of the model's family
(``keras_gated/models/<family>/<family module>.json``) and rewrites the zoo tables: the
full ones in ``docs/zoo.md``, the short released-weights table in the README.
"""

from __future__ import annotations

import argparse
import json
import os
import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from keras_gated.weights.config import split_weight_id
from keras_gated.weights.shards import MAX_SHARD_BYTES

ROOT = Path(__file__).resolve().parents[1]
CFGS_DIR = ROOT / "keras_gated" / "models"  # the families' data files
README = ROOT / "README.md"
ZOO_PAGE = Path("docs") / "zoo.md"  # the zoo page, relative to the README's folder
# The README's short table of released weights (weight id, accuracy, data) sits between
# these markers; the full tables (listing.BEGIN ... listing.END) sit in docs/zoo.md.
SHORT_BEGIN = ("<!-- released weights (written by `python -m training.release --register`; "
               "do not edit) -->")
SHORT_END = "<!-- released weights end -->"
TWIN_HEADING = "Twin comparison"
TOLERANCE = 0.001  # 0.1 percentage point
CAVEAT_HEADING = "Caveat"


def cfg_file(weight_id: str, folder: Path = CFGS_DIR) -> Path:
    """The data file of ``weight_id``'s family in ``folder``: in the family's folder, named
    after the module that defines the model (``gresnet20`` ->
    ``preact_resnet/preact_resnet.json``)."""
    from keras_gated.registry import get_model_entry

    constructor = get_model_entry(split_weight_id(weight_id)[0]).constructor
    family, _, module = constructor.__module__.removeprefix("keras_gated.models.").rpartition(".")
    return folder / family.replace(".", "/") / f"{module}.json"


def register(cfg, folder: Path = CFGS_DIR) -> Path:
    """Write ``cfg`` into its family's data file in ``folder`` (replacing an entry of the
    same weight id); return the file."""
    from keras_gated.weights.registered import write_cfg

    path = cfg_file(cfg.weight_id, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_cfg(cfg, path)
    return path


def registered_cfgs(folder: Path = CFGS_DIR) -> list:
    """Every config (released and planned) of the data files in ``folder``, as on disk."""
    from keras_gated.weights.registered import read_cfg_file

    return [cfg for path in sorted(folder.rglob("*.json")) for cfg in read_cfg_file(path)]


def short_table(cfgs) -> str:
    """The README's table: one row per released weight, its test accuracy and its data."""
    from keras_gated.release.listing import CAVEAT_MARK, accuracy_text

    rows = ["| weight id | test accuracy | data |", "| --- | --- | --- |"]
    for cfg in sorted((c for c in cfgs if c.released), key=lambda c: (c.tag, c.weight_id)):
        caveat = CAVEAT_MARK if cfg.caveat else ""
        rows.append(f"| `{cfg.weight_id}` | {accuracy_text(cfg.metrics)}{caveat} | "
                    f"{cfg.dataset.split(',')[0]} |")
    return "\n".join(rows)


def short_block(cfgs) -> str:
    """``short_table`` between its markers, as the README holds it."""
    return f"{SHORT_BEGIN}\n{short_table(cfgs)}\n{SHORT_END}"


def rewrite_zoo_blocks(text: str, cfgs) -> str:
    """``text`` with every zoo block it has rewritten from ``cfgs``: the full tables
    (``listing.BEGIN`` ... ``listing.END``) and the short table (``SHORT_BEGIN`` ...
    ``SHORT_END``). A text with neither is an error."""
    from keras_gated.release.listing import BEGIN, END, replace_readme_block

    cfgs = list(cfgs)
    if BEGIN not in text and SHORT_BEGIN not in text:
        raise ValueError(f"No zoo block to write the tables into: add the marker lines "
                         f"{BEGIN!r} ... {END!r} (full tables) or {SHORT_BEGIN!r} ... "
                         f"{SHORT_END!r} (the README's short table).")
    if BEGIN in text:
        text = replace_readme_block(text, cfgs)
    if SHORT_BEGIN in text:
        if SHORT_END not in text:
            raise ValueError(f"{SHORT_BEGIN!r} has no {SHORT_END!r} line after it.")
        start = text.index(SHORT_BEGIN)
        stop = text.index(SHORT_END, start) + len(SHORT_END)
        text = text[:start] + short_block(cfgs) + text[stop:]
    return text


def update_readme_tables(readme: Path = README, folder: Path = CFGS_DIR) -> list[Path]:
    """Rewrite the zoo tables from the data files: those of ``readme`` and, when it exists,
    of the zoo page beside it (``docs/zoo.md``). Returns the files written."""
    cfgs = registered_cfgs(folder)
    written = []
    for path in (readme, readme.parent / ZOO_PAGE):
        if path == readme or path.is_file():
            path.write_text(rewrite_zoo_blocks(path.read_text(), cfgs))
            written.append(path)
    return written


def twin_setup(weight_id: str, metrics: dict) -> tuple:
    """What twins share: data, recipe, epochs, backend and command but for the model."""
    arch, tag = split_weight_id(weight_id)
    command = str(metrics.get("command", "")).replace(f"--model {arch} ", "--model MODEL ")
    return (tag, metrics.get("recipe"), metrics.get("epochs"), metrics.get("backend"), command)


def check_twins(metrics_by_id: dict[str, dict]) -> None:
    """Twins share data, recipe, epochs, backend and training command but for the model."""
    if len(metrics_by_id) < 2:
        raise ValueError(f"Twins are two or more different weights, got {list(metrics_by_id)}.")
    (first_id, first), *others = metrics_by_id.items()
    for weight_id, metrics in others:
        if twin_setup(weight_id, metrics) != twin_setup(first_id, first):
            raise ValueError(
                f"{weight_id} and {first_id} are not twins: their data, recipe, epochs, "
                f"backend or command (seed included) differ: {twin_setup(weight_id, metrics)} "
                f"vs {twin_setup(first_id, first)}."
            )


def twin_note(metrics_by_id: dict[str, dict]) -> str:
    """Markdown comparing twins: checkpoints trained with the same recipe, budget, seed
    and data that differ in one thing (e.g. gated vs ungated); ``check_twins`` first."""
    from keras_gated.release.listing import accuracy_text, backend_label, wall_time_text

    check_twins(metrics_by_id)
    rows = ["| weight id | test accuracy | epochs | backend | wall time |",
            "| --- | --- | --- | --- | --- |"]
    for weight_id, m in metrics_by_id.items():
        rows.append(f"| `{weight_id}` | {accuracy_text(m)} | {m.get('epochs', '?')} | "
                    f"{backend_label(m)} | {wall_time_text(m.get('wall_time_s'))} |")
    evaluate = " and ".join(
        f"`keras-gated evaluate {w.split('.')[0]} --weights {w.split('.')[1]} "
        f"--dataset {w.split('.')[1]}`" for w in metrics_by_id)
    return ("\n".join(rows) + "\n\nSame recipe, epoch budget, seed and data; one run each, "
            "so the run-to-run spread at this budget is not measured here (wall times depend "
            f"on what else shared the machine). Reproduce the accuracies with {evaluate}.")


def zoo_metrics(folder: Path) -> dict:
    """The metrics.json of a zoo folder."""
    return json.loads((folder / "metrics.json").read_text())


def twin_metrics(weight_id: str, twins: Sequence[str], zoo: Path, folder: Path) -> dict:
    """The zoo metrics of ``twins``, checked before anything is written: each is another
    released weight with a zoo folder, not yet published (its card will change)."""
    registered = {cfg.weight_id: cfg for cfg in registered_cfgs(folder) if cfg.released}
    problems = []
    for twin in twins:
        if twin == weight_id or list(twins).count(twin) > 1:
            problems.append(f"{twin!r} is given twice (or is the run itself)")
        elif twin not in registered:
            problems.append(f"{twin!r} is not released (not in the data files of {folder})")
        elif not (zoo / twin / "README.md").is_file():
            problems.append(f"{zoo / twin} has no model card")
        elif registered[twin].revision is not None:
            problems.append(f"{twin!r} is published (revision pinned): changing its card "
                            "would make zoo/ differ from the Hub; publish the pair together")
    if problems:
        raise ValueError("Bad --twin: " + "; ".join(problems) + ". Nothing was released.")
    return {t: zoo_metrics(zoo / t) for t in twins}


def write_twin_notes(weight_ids: Sequence[str], zoo: Path = ROOT / "zoo") -> None:
    """Put the twins' comparison table into each twin's card."""
    from keras_gated.release.zoo_folder import set_card_note

    note = twin_note({w: zoo_metrics(zoo / w) for w in weight_ids})  # checks they are twins
    for weight_id in weight_ids:
        set_card_note(zoo / weight_id, TWIN_HEADING, note)


def run_metrics(run: Path) -> dict:
    """The ``metrics.json`` of a finished run folder, checked before anything is written."""
    from keras_gated.training.run_dir import read_json

    if not run.is_dir():
        raise ValueError(f"{run} is not a folder: give the --out folder of a finished "
                         "training.train run.")
    if not (run / "metrics.json").is_file():
        raise ValueError(f"{run} has no metrics.json, so it is not a finished run: finish it "
                         "first (the training.train command that started it resumes it).")
    if not (run / "last.keras").is_file():
        raise ValueError(f"{run} has no last.keras (the final model): nothing to release.")
    return read_json(run / "metrics.json")


def release_target(weight_id: str, zoo: Path, out: Path | None,
                   register_in: Path | None) -> Path:
    """Where a release of ``weight_id`` goes: ``zoo/<weight id>`` when it is registered
    (``register_in``), else a new ``out/<weight id>``; nothing else writes the zoo."""
    from keras_gated.files import check_outside_zoo

    if register_in is not None:
        return zoo / weight_id
    if out is None:
        raise ValueError("Without --register nothing is written into zoo/: give --out DIR for "
                         "the released folder, or --register to release into zoo/.")
    resolved, zoo = Path(out).resolve(), Path(zoo).resolve()
    if resolved == zoo or zoo in resolved.parents:
        raise ValueError(f"--out {out} is in the zoo, which only python -m training.release "
                         "--register writes: give a folder outside it.")
    check_outside_zoo(out)
    target = Path(out) / weight_id
    if target.exists():
        raise ValueError(f"{target} exists: give another --out.")
    return target


@contextlib.contextmanager
def measured_release(target: Path, write: Callable[[Path], Path],
                     measure: Callable[[Path], float], expected: float, *,
                     finish: Callable[[Path], None] | None = None) -> Iterator[float]:
    """Put a release folder at ``target`` whole, only when its measurement agrees with
    ``expected`` (within ``TOLERANCE``), and yield the measurement while still holding the
    release's lock (what registers it runs in the block).

    Under a lock beside ``target`` (a second release of the same weight id is refused),
    ``write(folder)`` writes the folder into a staging folder beside its place and returns
    it, ``measure(folder)`` gives the test accuracy ``keras-gated evaluate`` reproduces
    from it, ``finish(folder)`` adds what comes after the check (a caveat), and the folder
    replaces ``target`` in one step. A failed check or a kill leaves ``target`` as it was;
    the staging folder goes either way.
    """
    import shutil

    from keras_gated.files import exclusive_lock, fresh_staging_folder, replace_folder

    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.parent / f".{target.name}.lock", f"The release folder {target}"):
        staging = fresh_staging_folder(target)
        try:
            written = write(staging / target.name)
            measured = measure(written)
            if abs(measured - expected) > TOLERANCE:
                raise ValueError(
                    f"`keras-gated evaluate` measures {measured:.4f} on the released folder, "
                    f"metrics.json says {expected:.4f}: not released ({target} is left as it "
                    "was)."
                )
            if finish is not None:
                finish(written)
            replace_folder(written, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        yield measured


def release(run: Path, notes: str = "", zoo: Path = ROOT / "zoo",
            register_in: Path | None = None, readme: Path | None = None,
            twins: Sequence[str] = (), caveat: str = "",
            max_shard_bytes: int = MAX_SHARD_BYTES, out: Path | None = None) -> Path:
    """Release the finished run ``run`` into ``zoo/<weight id>`` and register it
    (``register_in``), or into ``out/<weight id>`` (``release_target``); return the folder.

    The folder is written and evaluated in a temporary folder beside its place and moved
    into place only when ``keras-gated evaluate`` reproduces metrics.json, under a lock
    beside it: a failed check, a kill or a second release of the same weight id leaves
    the folder there as it was.
    """
    import keras

    import keras_gated  # noqa: F401  (registers the layers)
    from keras_gated.evaluation import evaluate
    from keras_gated.release.zoo_folder import (
        pretrained_cfg_from_folder,
        save_zoo_folder,
    )

    metrics = run_metrics(run)
    weight_id = run.name
    arch, tag = split_weight_id(weight_id)
    if metrics.get("model") != arch:
        raise ValueError(f"{run} trained {metrics.get('model')!r}, not {arch!r}.")
    target = release_target(weight_id, zoo, out, register_in)
    if twins:
        if register_in is None:
            raise ValueError("Twins are compared through the registry: pass `register_in`.")
        check_twins({weight_id: metrics, **twin_metrics(weight_id, twins, zoo, register_in)})
    model = keras.saving.load_model(run / "last.keras", compile=False)
    if register_in is not None:
        check_preset_possible(model)

    def write(folder: Path) -> Path:
        return save_zoo_folder(
            model, folder, weight_id=weight_id, metrics=metrics,
            recipe=metrics["recipe"], command=metrics["command"],
            dataset_note=metrics["dataset"], training_log=run / "log.csv", notes=notes,
            max_shard_bytes=max_shard_bytes,  # larger weights: Keras sharded weights
        )

    # The number published is the one `keras-gated evaluate` reproduces from the folder.
    with measured_release(
            target, write, lambda folder: evaluate(arch, str(folder), tag)["test_accuracy"],
            metrics["test_accuracy"],
            finish=(lambda folder: record_caveat(folder, caveat)) if caveat.strip() else None,
    ) as measured:
        folder = target
        print(f"wrote {folder}: test accuracy {metrics['test_accuracy']:.4f} "
              f"(keras-gated evaluate: {measured:.4f})")
        cfg = pretrained_cfg_from_folder(folder)
        if register_in is not None:
            print(f"registered {weight_id} in {register(cfg, register_in)}")
            write_keras_hub_preset(weight_id, folder)
            if readme is not None:
                written_tables = update_readme_tables(readme, register_in)
                print(f"updated the zoo tables of {', '.join(map(str, written_tables))}")
            if twins:
                write_twin_notes([weight_id, *twins], zoo)
                print(f"wrote the twin comparison into the cards of {weight_id}, "
                      f"{', '.join(twins)}")
        else:
            print(f"rerun with --register to add it to {cfg_file(weight_id).relative_to(ROOT)}:")
            print(json.dumps({weight_id: cfg.to_dict()}, indent=2))
    return folder


def kerashub_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("keras_hub") is not None


def is_convolutional(model) -> bool:
    """Whether ``model`` ends in average pooling then the head: what a keras-hub
    ``ImageClassifier`` preset holds (fully connected nets have no preset)."""
    import keras

    try:
        return isinstance(model.get_layer("avg_pool"), keras.layers.GlobalAveragePooling2D)
    except ValueError:
        return False


def check_preset_possible(model) -> None:
    """A registered convolutional release carries a keras-hub preset: refuse, before
    anything is written (an earlier release's preset included), where keras-hub is missing."""
    if is_convolutional(model) and not kerashub_installed():
        raise ValueError("keras-hub is not installed, so this convolutional release would have "
                         "no keras_hub/ preset: pip install -e '.[kerashub]' and run again. "
                         "Nothing was released.")


def write_keras_hub_preset(weight_id: str, folder: Path) -> Path | None:
    """The release as a keras-hub ``ImageClassifier`` preset in ``folder/keras_hub``, for a
    convolutional model when keras-hub is installed (None otherwise, with a line why).
    ``keras-gated publish`` sends it to the Hub repo ``<repo id>-keras-hub`` (and its task
    files to the release repo's root), where keras-hub handles reach it."""
    if not kerashub_installed():
        print("keras-hub is not installed: no keras_hub/ preset written (pip install keras-hub)")
        return None
    from keras_gated.keras_hub import save_classifier_preset
    from keras_gated.weights.shards import SHARD_INDEX

    if (folder / SHARD_INDEX).is_file():  # a second copy of a large net's weights
        print(f"no keras_hub/ preset: {weight_id} is a sharded release; "
              f"`python -m keras_gated.keras_hub {weight_id} OUT_DIR` writes one")
        return None

    preset = folder / "keras_hub"
    try:
        save_classifier_preset(weight_id, preset)
    except ValueError as error:  # a fully connected net has no keras-hub image backbone
        print(f"no keras_hub/ preset: {error}")
        return None
    print(f"wrote {preset}: keras_hub.models.ImageClassifier.from_preset({str(preset)!r})")
    return preset


def record_caveat(folder: Path, caveat: str) -> None:
    """The caveat into the card's front matter (-> ``PretrainedCfg.caveat``) and its Notes
    ("" removes both)."""
    from keras_gated.release.zoo_folder import set_card_note, set_caveat

    set_caveat(folder, caveat)
    set_card_note(folder, CAVEAT_HEADING, caveat)


def check_released_folder(folder: Path, zoo: Path = ROOT / "zoo") -> None:
    """Refuse, in one sentence, a folder that is not a release's own ``zoo/<weight id>``:
    amending a copy would register what the zoo does not hold."""
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder: --amend takes a released "
                         "zoo/<weight id> folder.")
    if folder.resolve() != (Path(zoo) / folder.name).resolve():
        raise ValueError(f"{folder} is not in the zoo ({zoo}): --amend changes a release in "
                         f"place, so give {Path(zoo) / folder.name} itself.")


def amend_caveat(folder: Path, caveat: str | None, register_in: Path = CFGS_DIR,
                 readme: Path | None = README, notes: str | None = None,
                 zoo: Path = ROOT / "zoo") -> None:
    """Set (or, with ``""``, clear) the caveat of the released folder ``zoo/<weight id>``,
    replace its card's notes when ``notes`` is given, and re-register it: its weights, sha256
    pin, Hub id and revision stay as registered. ``caveat=None`` keeps the caveat it has."""
    from keras_gated.weights.sources import sha256_of
    from keras_gated.release.zoo_folder import pretrained_cfg_from_folder

    check_released_folder(folder, zoo)
    weight_id = folder.name
    registered = {cfg.weight_id: cfg for cfg in registered_cfgs(register_in) if cfg.released}
    if weight_id not in registered:
        raise ValueError(f"{weight_id} is not registered in {register_in}: release it first.")
    old = registered[weight_id]
    if any(not (folder / name).is_file() or sha256_of(folder / name) != pin
           for name, pin in old.files.items()):  # checked before anything is written
        raise ValueError(f"{folder}'s weights differ from the registered ones (sha256): "
                         "release the run again instead.")
    if notes is not None:
        from keras_gated.release.zoo_folder import set_card_notes

        set_card_notes(folder, notes)
    if caveat is not None:
        record_caveat(folder, caveat)
    cfg = pretrained_cfg_from_folder(folder, hf_hub_id=old.hf_hub_id, revision=old.revision)
    register(cfg, register_in)
    if readme is not None:
        update_readme_tables(readme, register_in)


def remeasure(folder: Path, command: str) -> dict:
    """Evaluate a released folder's weights on the current architecture with the repo's own
    evaluator and write that accuracy into its ``metrics.json`` and its card's model-index
    (the number the repository reproduces; the training record stays as it was). For
    weights trained before a change of the architecture's function."""
    from huggingface_hub import ModelCard

    from keras_gated.evaluation import evaluate
    from keras_gated.release.zoo_folder import CARD_FILE, METRICS_FILE

    arch, tag = split_weight_id(folder.name)
    metrics_path = folder / METRICS_FILE
    metrics = json.loads(metrics_path.read_text())
    result = evaluate(arch, str(folder), tag)
    if result["num_examples"] != metrics["num_examples"]:
        raise ValueError(f"{folder}: evaluated {result['num_examples']} examples, the record has "
                         f"{metrics['num_examples']}.")
    metrics.setdefault("test_accuracy_when_trained", metrics["test_accuracy"])
    metrics["test_accuracy"] = round(result["test_accuracy"], 4)
    metrics["remeasure_command"] = command
    card = ModelCard.load(folder / CARD_FILE)
    card.data.eval_results[0].metric_value = metrics["test_accuracy"]
    card.save(folder / CARD_FILE)
    metrics_path.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.is_released:
        released = {cfg.weight_id for cfg in registered_cfgs() if cfg.released}
        return 0 if args.is_released in released else 1
    if args.run is None:
        parser.error("give a run folder (or --is-released WEIGHT_ID)")
    if args.remeasure and not args.amend:
        parser.error("--remeasure needs --amend")
    if args.amend and args.caveat is None and not args.notes and not args.remeasure:
        parser.error("--amend changes the --caveat (\"\" clears it), the --notes or, with "
                     "--remeasure, the test accuracy: give one")
    if args.amend and not args.register:
        parser.error("--amend changes a release in zoo/ and registers it again: add --register")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from keras_gated.errors import (
        run_command,  # one sentence and an exit code on failure
    )

    if args.amend:
        return run_command("training.release", lambda: amend(args), debug=args.debug)
    if args.twin and not args.register:
        parser.error("--twin needs --register (the comparison reads the registered metrics)")

    from training.release_bundle import is_bundle

    if is_bundle(args.run):
        if args.twin:
            parser.error("--twin compares run folders; a lease bundle is released alone")
        if not args.register and args.out is None:
            parser.error("a lease bundle is released into zoo/ with --register, or into --out DIR")
        return run_command("training.release", lambda: release_lease_bundle(args),
                           debug=args.debug)

    def release_run() -> int:
        release(args.run, args.notes, register_in=CFGS_DIR if args.register else None,
                readme=README if args.register else None, twins=args.twin, caveat=args.caveat or "",
                out=None if args.register else args.out)
        return 0

    return run_command("training.release", release_run, debug=args.debug)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training.release", description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, nargs="?",
                        help="a finished run folder, named by weight id, or a lease bundle "
                        "(python -m training.lease run --out)")
    parser.add_argument("--out", type=Path, default=None,
                        help="without --register: the folder to write the release into "
                        "(zoo/ is written only with --register)")
    parser.add_argument("--is-released", metavar="WEIGHT_ID",
                        help="only answer, by the exit code (0: yes, 1: no), whether the data "
                        "files register released weights WEIGHT_ID")
    parser.add_argument("--notes", default="", help="markdown for the card's Notes section")
    parser.add_argument("--register", action="store_true",
                        help="write the config into its family's data file "
                        f"({CFGS_DIR.relative_to(ROOT)}/<module>.json) and the zoo tables of "
                        f"{README.name} and {ZOO_PAGE}")
    parser.add_argument("--twin", action="append", default=[], metavar="WEIGHT_ID",
                        help="a released twin (same recipe, budget, seed, data): both cards get "
                        "the comparison table (needs --register)")
    parser.add_argument("--caveat", default=None,
                        help="a warning given whenever the weights are loaded (e.g. the run did "
                        "not converge); also written into the card")
    parser.add_argument("--amend", action="store_true",
                        help="RUN is a released zoo/<weight id> folder: only set its --caveat "
                        "(empty: clear it) and/or replace its card's --notes, and register it "
                        "again (the weights stay as they are; needs --register)")
    parser.add_argument("--remeasure", action="store_true",
                        help="with --amend: evaluate the weights on the current architecture "
                        "and record that test accuracy (for weights trained before a change "
                        "of the architecture)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return parser


def amend(args: argparse.Namespace) -> int:
    """``--amend``: set (or clear) a released folder's caveat and/or replace its card's notes,
    after ``--remeasure`` records its test accuracy on the current architecture; registered
    again."""
    check_released_folder(args.run)
    if args.remeasure:
        arch, tag = split_weight_id(args.run.name)
        backend = os.environ.get("KERAS_BACKEND", "tensorflow")
        metrics = remeasure(args.run, f"KERAS_BACKEND={backend} keras-gated evaluate "
                            f"{arch} --weights {tag} --dataset {tag}")
        print(f"{args.run.name}: test accuracy now {metrics['test_accuracy']:.4f} "
              f"(was {metrics['test_accuracy_when_trained']:.4f} when trained)")
    amend_caveat(args.run, args.caveat, notes=args.notes or None)
    done = [] if args.caveat is None else [
        "caveat " + ("set" if args.caveat.strip() else "cleared")]
    done += ["notes replaced"] if args.notes else []
    print(f"{args.run.name}: {', '.join(done + ['registered again'])}")
    return 0


def release_lease_bundle(args: argparse.Namespace) -> int:
    """Release a lease bundle into ``--out``, or into zoo/ and the registry with
    ``--register``."""
    from training.release_bundle import release_bundle

    folder = release_bundle(args.run, notes=args.notes, caveat=args.caveat or "",
                            zoo=ROOT / "zoo", out=args.out, into_zoo=args.register,
                            record_caveat=record_caveat)
    if args.register:
        from keras_gated.release.zoo_folder import pretrained_cfg_from_folder

        cfg = pretrained_cfg_from_folder(folder)
        print(f"registered {cfg.weight_id} in {register(cfg, CFGS_DIR)}")
        written = update_readme_tables(README, CFGS_DIR)
        print(f"updated the zoo tables of {', '.join(map(str, written))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
