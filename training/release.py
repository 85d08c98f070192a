"""Turn a finished training run into a released zoo folder.

    python -m training.release training/runs/gresnet20.cifar10 [--notes "..."]

Takes the run's final model (``last.keras``, the last epoch, the model ``metrics.json``
measured), checks that ``keras-gated evaluate``'s own measurement on the real test split
equals ``metrics.json``, writes ``zoo/<weight id>/`` with ``keras_gated.hub.
save_zoo_folder`` (Keras save files, model card, metrics.json, training log) and prints
the ``PretrainedCfg`` entry for ``keras_gated/pretrained_cfgs.py`` (sha256 pinned,
revision None until published). ``--register`` writes that entry itself and rewrites the
README's zoo tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from keras_gated.weight_ids import split_weight_id

ROOT = Path(__file__).resolve().parents[1]
CFGS_FILE = ROOT / "keras_gated" / "pretrained_cfgs.py"
README = ROOT / "README.md"
TOLERANCE = 0.001  # 0.1 percentage point
CAVEAT_HEADING = "Caveat"


def register(cfg_source: str, weight_id: str, path: Path = CFGS_FILE) -> None:
    """Write ``cfg_source`` (a ``PretrainedCfg(...)`` expression) into the shipped
    registry as the block of ``weight_id``, replacing an older block of the same id."""
    text = path.read_text()
    begin, end = f"    # >>> {weight_id}\n", f"    # <<< {weight_id}\n"
    block = begin + "".join(f"    {line}\n" for line in cfg_source.splitlines())
    block = block.rstrip("\n") + ",\n" + end
    if begin in text:
        start = text.index(begin)
        text = text[:start] + block + text[text.index(end, start) + len(end):]
    else:
        closing = text.rindex("\n)")
        text = text[:closing + 1] + block + text[closing + 1:]
    path.write_text(text)


def registered_cfgs(path: Path = CFGS_FILE) -> list:
    """The ``PretrainedCfg`` entries of a registry file as it is on disk now."""
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # our own data file
    return list(namespace["PRETRAINED_CFGS"])


def update_readme_tables(readme: Path = README, cfgs_file: Path = CFGS_FILE) -> None:
    """Rewrite the README's zoo tables from the registry file (keras_gated.zoo_index)."""
    from keras_gated.zoo_index import replace_readme_block

    readme.write_text(replace_readme_block(readme.read_text(), registered_cfgs(cfgs_file)))


def twin_cfgs(weight_id: str, twins: Sequence[str], zoo: Path, cfgs_file: Path) -> list:
    """The registered configs of ``twins``, checked before anything is written: each is
    another released weight with a zoo folder, not yet published (its card will change)."""
    registered = {cfg.weight_id: cfg for cfg in registered_cfgs(cfgs_file)}
    problems = []
    for twin in twins:
        if twin == weight_id or list(twins).count(twin) > 1:
            problems.append(f"{twin!r} is given twice (or is the run itself)")
        elif twin not in registered:
            problems.append(f"{twin!r} is not released (not in {cfgs_file.name})")
        elif not (zoo / twin / "README.md").is_file():
            problems.append(f"{zoo / twin} has no model card")
        elif registered[twin].revision is not None:
            problems.append(f"{twin!r} is published (revision pinned): changing its card "
                            "would make zoo/ differ from the Hub; publish the pair together")
    if problems:
        raise ValueError("Bad --twin: " + "; ".join(problems) + ". Nothing was released.")
    return [registered[t] for t in twins]


def write_twin_notes(weight_ids: Sequence[str], zoo: Path = ROOT / "zoo",
                     cfgs_file: Path = CFGS_FILE) -> None:
    """Put the twins' comparison table into each twin's card (keras_gated.zoo_index)."""
    from keras_gated.hub import set_card_note
    from keras_gated.zoo_index import TWIN_HEADING, twin_note

    registered = {cfg.weight_id: cfg for cfg in registered_cfgs(cfgs_file)}
    note = twin_note(registered[w] for w in weight_ids)  # checks they are twins
    for weight_id in weight_ids:
        set_card_note(zoo / weight_id, TWIN_HEADING, note)


def run_metrics(run: Path) -> dict:
    """The ``metrics.json`` of a finished run folder, checked before anything is written."""
    from training.run_dir import read_json

    if not run.is_dir():
        raise ValueError(f"{run} is not a folder: give the --out folder of a finished "
                         "training.train run.")
    if not (run / "metrics.json").is_file():
        raise ValueError(f"{run} has no metrics.json, so it is not a finished run: finish it "
                         "first (the training.train command that started it resumes it).")
    if not (run / "last.keras").is_file():
        raise ValueError(f"{run} has no last.keras (the final model): nothing to release.")
    return read_json(run / "metrics.json")


def release(run: Path, notes: str = "", zoo: Path = ROOT / "zoo",
            register_in: Path | None = None, readme: Path | None = None,
            twins: Sequence[str] = (), caveat: str = "") -> Path:
    import shutil

    import keras

    import keras_gated  # noqa: F401  (registers the layers)
    from keras_gated.evaluation import evaluate
    from keras_gated.hub import (
        format_pretrained_cfg,
        pretrained_cfg_from_folder,
        save_zoo_folder,
    )

    metrics = run_metrics(run)
    weight_id = run.name
    arch, tag = split_weight_id(weight_id)
    if metrics.get("model") != arch:
        raise ValueError(f"{run} trained {metrics.get('model')!r}, not {arch!r}.")
    if twins:
        if register_in is None:
            raise ValueError("Twins are compared through the registry: pass `register_in`.")
        from types import SimpleNamespace

        from keras_gated.zoo_index import check_twins

        this_run = SimpleNamespace(weight_id=weight_id, arch=arch, tag=tag, metrics=metrics,
                                   recipe=metrics["recipe"], command=metrics["command"])
        check_twins([this_run, *twin_cfgs(weight_id, twins, zoo, register_in)])
    model = keras.saving.load_model(run / "last.keras", compile=False)
    folder = save_zoo_folder(
        model, zoo / weight_id, weight_id=weight_id, metrics=metrics,
        recipe=metrics["recipe"], command=metrics["command"], dataset_note=metrics["dataset"],
        training_log=run / "log.csv", notes=notes, overwrite=True,
    )
    # The number published is the one `keras-gated evaluate` reproduces from the folder.
    measured = evaluate(arch, str(folder), tag)["test_accuracy"]
    if abs(measured - metrics["test_accuracy"]) > TOLERANCE:
        shutil.rmtree(folder)
        raise ValueError(
            f"`keras-gated evaluate` measures {measured:.4f} on the released folder, "
            f"metrics.json says {metrics['test_accuracy']:.4f}: not released."
        )
    if caveat.strip():
        record_caveat(folder, caveat)
    print(f"wrote {folder}: test accuracy {metrics['test_accuracy']:.4f} "
          f"(keras-gated evaluate: {measured:.4f})")
    source = format_pretrained_cfg(pretrained_cfg_from_folder(folder))
    if register_in is not None:
        register(source, weight_id, register_in)
        print(f"registered {weight_id} in {register_in}")
        if readme is not None:
            update_readme_tables(readme, register_in)
            print(f"updated the zoo tables of {readme}")
        if twins:
            write_twin_notes([weight_id, *twins], zoo, register_in)
            print(f"wrote the twin comparison into the cards of {weight_id}, {', '.join(twins)}")
    else:
        print("add to keras_gated/pretrained_cfgs.py (or rerun with --register):")
        print(source)
    return folder


def record_caveat(folder: Path, caveat: str) -> None:
    """The caveat into the card's front matter (-> ``PretrainedCfg.caveat``) and its Notes
    ("" removes both)."""
    from keras_gated.hub import set_caveat, set_card_note

    set_caveat(folder, caveat)
    set_card_note(folder, CAVEAT_HEADING, caveat)


def amend_caveat(folder: Path, caveat: str, register_in: Path = CFGS_FILE,
                 readme: Path | None = README) -> None:
    """Set (or, with ``""``, clear) the caveat of a released zoo folder and re-register it:
    its weights, sha256 pin, Hub id and revision stay as registered."""
    from keras_gated.hub import format_pretrained_cfg, pretrained_cfg_from_folder
    from keras_gated.weights import sha256_of

    weight_id = folder.name
    registered = {cfg.weight_id: cfg for cfg in registered_cfgs(register_in)}
    if weight_id not in registered:
        raise ValueError(f"{weight_id} is not registered in {register_in}: release it first.")
    old = registered[weight_id]
    if sha256_of(folder / old.file_name) != old.sha256:  # checked before anything is written
        raise ValueError(f"{folder}'s weights differ from the registered ones (sha256): "
                         "release the run again instead.")
    record_caveat(folder, caveat)
    cfg = pretrained_cfg_from_folder(folder, hf_hub_id=old.hf_hub_id, revision=old.revision)
    register(format_pretrained_cfg(cfg), weight_id, register_in)
    if readme is not None:
        update_readme_tables(readme, register_in)


def remeasure(folder: Path, command: str) -> dict:
    """Evaluate a released folder's weights on the current architecture with the repo's own
    evaluator and write that accuracy into its ``metrics.json`` and its card's model-index
    (the number the repository reproduces; the training record stays as it was). For
    weights trained before a change of the architecture's function."""
    from huggingface_hub import ModelCard

    from keras_gated.evaluation import evaluate
    from keras_gated.hub import CARD_FILE, METRICS_FILE

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
    parser = argparse.ArgumentParser(prog="python -m training.release", description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a finished run folder, named by weight id")
    parser.add_argument("--notes", default="", help="markdown for the card's Notes section")
    parser.add_argument("--register", action="store_true",
                        help=f"write the config into {CFGS_FILE.relative_to(ROOT)} and the "
                        f"zoo table of {README.name}")
    parser.add_argument("--twin", action="append", default=[], metavar="WEIGHT_ID",
                        help="a released twin (same recipe, budget, seed, data): both cards get "
                        "the comparison table (needs --register)")
    parser.add_argument("--caveat", default="",
                        help="a warning given whenever the weights are loaded (e.g. the run did "
                        "not converge); also written into the card")
    parser.add_argument("--amend", action="store_true",
                        help="RUN is a released zoo/<weight id> folder: only set its --caveat "
                        "(empty: clear it) and register it again")
    parser.add_argument("--remeasure", action="store_true",
                        help="with --amend: evaluate the weights on the current architecture "
                        "and record that test accuracy (for weights trained before a change "
                        "of the architecture)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)
    if args.remeasure and not args.amend:
        parser.error("--remeasure needs --amend")
    if args.amend:
        try:
            if args.remeasure:
                arch, tag = split_weight_id(args.run.name)
                backend = os.environ.get("KERAS_BACKEND", "tensorflow")
                metrics = remeasure(args.run, f"KERAS_BACKEND={backend} keras-gated evaluate "
                                    f"{arch} --weights {tag} --dataset {tag}")
                print(f"{args.run.name}: test accuracy now {metrics['test_accuracy']:.4f} "
                      f"(was {metrics['test_accuracy_when_trained']:.4f} when trained)")
            amend_caveat(args.run, args.caveat)
        except ValueError as error:
            print(f"training.release: error: {error}", file=sys.stderr)
            return 2
        print(f"{args.run.name}: caveat {'set' if args.caveat.strip() else 'cleared'}, registered again")
        return 0
    if args.twin and not args.register:
        parser.error("--twin needs --register (the comparison reads the registered metrics)")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from keras_gated.errors import run_command  # one sentence and an exit code on failure

    def release_run() -> int:
        release(args.run, args.notes, register_in=CFGS_FILE if args.register else None,
                readme=README if args.register else None, twins=args.twin, caveat=args.caveat)
        return 0

    return run_command("training.release", release_run, debug=args.debug)


if __name__ == "__main__":
    raise SystemExit(main())
