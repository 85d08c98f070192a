"""Training speed on the real CIFAR-10 input pipeline against in-memory synthetic tensors.

    python -m benchmarks.pipeline [--model gresnet20] [--launches 3] [--steps 30]
    python -m benchmarks.pipeline --alone     # the pipeline by itself, no training
    python -m benchmarks.pipeline --backend jax [--data-engine numpy|tf]

Each launch is one ``python -m benchmarks.measure --impl keras --data MODE`` process:

* ``--data synthetic``: ``model.fit`` on random numpy arrays held in memory (what
  ``benchmarks.run`` measures);
* ``--data cifar10``: ``model.fit`` on the training split through ``keras_gated.training.pipeline.
  make_pipeline``, built exactly as ``python -m training.train`` builds it, on the engine
  of ``--data-engine`` (numpy: the split decoded into memory, a ``keras.utils.PyDataset``
  that shuffles, pads, crops and flips per batch; tf: ``tf.data`` with its cache filled
  by one pass first), so the timed steps see the pipeline of every epoch after the first.

Launches are interleaved (the order alternates each round). Reported: median (min-max)
training img/s of each mode and the ratio cifar10 / synthetic of the medians, with the
pipeline's one-off cache fill and its per-epoch start (the time to the first batch of a
cached epoch, the shuffle buffer filling). Writes ``pipeline.json`` and ``pipeline.md``.

``--alone`` iterates cached epochs of the pipeline without a model, in this process:
images and batches per second and CPU milliseconds per 1000 images (all threads), which
is what the pipeline takes from the training step on a CPU-only machine (and what a GPU
host's cores must deliver). Writes ``pipeline_alone.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

MODES = ("synthetic", "cifar10")


@dataclass
class RealData:
    """The training pipeline of one run, its cache filled, and what that cost."""

    dataset: object  # tf.data.Dataset of (float32 images, int64 labels) batches
    num_examples: int
    cache_fill_s: float  # one pass over the split: decode, augment, fill the cache
    epoch_start_s: float  # a cached epoch's time to its first batch


ENGINE_VARIABLE = "KERAS_GATED_BENCH_DATA_ENGINE"  # the engine of --data cifar10 launches


def training_pipeline(model, model_name: str, batch_size: int, *, examples: int | None = None,
                      seed: int = 0, engine: str | None = None) -> RealData:
    """The augmented CIFAR-10 training pipeline that ``training.train`` feeds ``model``
    (registered as ``model_name``; its default recipe), after one full pass.
    ``examples``: only the first N images of the split (small test runs); default all.
    ``engine``: ``numpy`` or ``tf`` (``keras_gated.training.pipeline``; default ``$KERAS_GATED_BENCH_DATA_ENGINE``,
    else the training default). For the numpy engine the cache fill is the decode of the
    split into memory."""
    from keras_gated.training.recipes import get_recipe
    from keras_gated.registry import get_model_entry
    from keras_gated.training.pipeline import check_engine, load_split, make_pipeline, normalisation_mean
    from training.train import default_recipe_name

    engine = check_engine(engine or os.environ.get(ENGINE_VARIABLE))
    recipe = get_recipe(default_recipe_name(get_model_entry(model_name)))
    start = time.perf_counter()
    ds, info = load_split("cifar10", "train", engine)
    num_examples = info.num_examples
    if examples is not None:
        num_examples = min(examples, num_examples)
        ds = ds.take(num_examples)
    pipeline = make_pipeline(ds, recipe, training=True, batch_size=batch_size,
                             num_examples=num_examples, seed=seed,
                             pad_fill=normalisation_mean(model))
    if engine == "tf":
        start = time.perf_counter()
        for _ in pipeline:  # the first epoch: decode and cache
            pass
    cache_fill_s = time.perf_counter() - start
    start = time.perf_counter()
    next(iter(pipeline))
    epoch_start_s = time.perf_counter() - start
    return RealData(pipeline, num_examples, cache_fill_s, epoch_start_s)


def pipeline_alone(model_name: str, batch_size: int, *, examples: int | None = None,
                   epochs: int = 3, engine: str | None = None) -> dict:
    """Cached epochs of the training pipeline alone (no model): medians of img/s,
    batches/s and CPU ms per 1000 images over ``epochs`` epochs. The numpy engine's
    batches are made here one after another, on one thread (its ``fit`` uses several)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras_gated as kg

    real = training_pipeline(kg.create_model(model_name), model_name, batch_size,
                             examples=examples, engine=engine)
    rates, batch_rates, cpu = [], [], []
    for _ in range(epochs):
        wall, used, batches = time.perf_counter(), time.process_time(), 0
        for _ in real.dataset:
            batches += 1
        seconds = time.perf_counter() - wall
        rates.append(real.num_examples / seconds)
        batch_rates.append(batches / seconds)
        cpu.append(1e6 * (time.process_time() - used) / real.num_examples)
        if hasattr(real.dataset, "on_epoch_end"):
            real.dataset.on_epoch_end()
    from keras_gated.training.pipeline import check_engine

    return {"model": model_name, "batch": batch_size, "examples": real.num_examples, "epochs": epochs,
            "engine": check_engine(engine or os.environ.get(ENGINE_VARIABLE)),
            "img_s": statistics.median(rates), "batches_s": statistics.median(batch_rates),
            "cpu_ms_per_1000_images": statistics.median(cpu),
            "cache_fill_s": real.cache_fill_s, "epoch_start_s": real.epoch_start_s}


def launch(model: str, data: str, batch: int, steps: int, examples: int | None,
           timeout: int, jit_compile: str = "auto", backend: str | None = None,
           engine: str | None = None) -> dict:
    """One ``benchmarks.measure`` process on ``data``; its BENCH record."""
    command = [sys.executable, "-m", "benchmarks.measure", "--impl", "keras", "--model", model,
               "--data", data, "--batch", str(batch), "--steps", str(steps),
               "--latency-calls", "1", "--infer-batch", "1", "--jit-compile", jit_compile]
    if examples is not None:
        command += ["--examples", str(examples)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if backend:
        env["KERAS_BACKEND"] = backend
    env.setdefault("KERAS_BACKEND", "tensorflow")
    if engine:
        env[ENGINE_VARIABLE] = engine
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("BENCH ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(lines[-1][len("BENCH "):])


def _stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def summarise(runs: list[dict]) -> dict:
    """Medians per mode, the ratio of the medians and each round's paired ratio."""
    by_mode = {mode: [r for r in runs if r["data"] == mode] for mode in MODES}
    speed = {mode: _stats([r["train_img_s"] for r in group]) for mode, group in by_mode.items()}
    real = by_mode["cifar10"]
    paired = [c["train_img_s"] / s["train_img_s"] for s, c in zip(by_mode["synthetic"], real)]
    return {
        "train_img_s": speed,
        "ratio": speed["cifar10"]["median"] / speed["synthetic"]["median"],
        "paired_ratios": paired,
        "cache_fill_s": statistics.median(r["cache_fill_s"] for r in real),
        "epoch_start_s": statistics.median(r["epoch_start_s"] for r in real),
        "examples": real[0]["examples"],
    }


def markdown(summary: dict, header: str) -> str:
    rows = [header, "", "| data | train img/s, median (min–max) | vs synthetic |", "| --- | --- | --- |"]
    for mode in MODES:
        s = summary["train_img_s"][mode]
        ratio = summary["ratio"] if mode == "cifar10" else 1.0
        rows.append(f"| {mode} | {s['median']:.0f} ({s['min']:.0f}–{s['max']:.0f}) | {ratio:.3f} |")
    paired = ", ".join(f"{r:.3f}" for r in summary["paired_ratios"])
    rows += ["", (f"Paired ratios per round: {paired}. CIFAR-10 pipeline: cache filled in "
                  f"{summary['cache_fill_s']:.1f} s ({summary['examples']} images, once per run); "
                  f"each cached epoch starts its first batch in {summary['epoch_start_s']:.2f} s.")]
    return "\n".join(rows) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.pipeline", description=__doc__.split("\n")[0])
    p.add_argument("--model", default="gresnet20")
    p.add_argument("--launches", type=int, default=3, help="launches per mode (interleaved)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=30, help="timed training steps per launch")
    p.add_argument("--examples", type=int, help="use the first N training images (default: all)")
    p.add_argument("--jit-compile", default="auto", choices=("auto", "True", "False"))
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--alone", action="store_true", help="the pipeline by itself, without training")
    p.add_argument("--backend", choices=("tensorflow", "jax", "torch"),
                   help="Keras backend of the launches (default: KERAS_BACKEND, else tensorflow)")
    p.add_argument("--data-engine", choices=("numpy", "tf"), default=None,
                   help="input pipeline engine of the cifar10 launches (default: training's, numpy)")
    args = p.parse_args(argv)
    command = "python -m benchmarks.pipeline " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    if args.alone:
        result = {"command": command.strip(), **pipeline_alone(args.model, args.batch, examples=args.examples,
                                                               engine=args.data_engine)}
        print(f"[pipeline] alone ({result['engine']} engine): {result['img_s']:.0f} img/s, "
              f"{result['batches_s']:.1f} batches/s, {result['cpu_ms_per_1000_images']:.0f} CPU ms "
              f"per 1000 images; cache filled in {result['cache_fill_s']:.1f} s")
        (args.out / "pipeline_alone.json").write_text(json.dumps(result, indent=2) + "\n")
        return 0
    runs = []
    for round_ in range(args.launches):
        for mode in MODES if round_ % 2 == 0 else MODES[::-1]:
            result = launch(args.model, mode, args.batch, args.steps, args.examples, args.timeout,
                            args.jit_compile, args.backend, args.data_engine)
            runs.append(result)
            print(f"[pipeline] round {round_ + 1}/{args.launches} {mode}: "
                  f"{result['train_img_s']:.1f} img/s", flush=True)
    summary = summarise(runs)
    backend = args.backend or os.environ.get("KERAS_BACKEND", "tensorflow")
    engine = args.data_engine or "numpy"
    header = (f"`{command.strip()}`: {args.model}, backend {backend}, {engine} engine, batch "
              f"{args.batch}, {args.steps} timed steps, jit_compile={args.jit_compile}, "
              f"{args.launches} launches per mode, interleaved")
    table = markdown(summary, header)
    print(table)
    (args.out / "pipeline.json").write_text(json.dumps(
        {"command": command.strip(), "model": args.model, "backend": backend, "engine": engine,
         "batch": args.batch, "steps": args.steps,
         "jit_compile": args.jit_compile, "launches": args.launches, **summary, "runs": runs},
        indent=2) + "\n")
    (args.out / "pipeline.md").write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
