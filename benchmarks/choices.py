"""The fast-path choices per backend, each measured: training img/s of one model with a
setting on and off, launches interleaved, medians.

    python -m benchmarks.choices [--model gresnet20] [--launches 3] [--only tf-xla tf-no-xla]

Every choice is one ``python -m benchmarks.measure`` launch with an environment and
arguments (the same process the main benchmark runs). The choices:

* TensorFlow: keras-gated's default (oneDNN kernels on x86, see
  ``keras_gated.tensorflow_cpu``; no XLA with them) against XLA with oneDNN, and against
  TensorFlow's own default on AVX2 CPUs (``TF_ENABLE_ONEDNN_OPTS=0``: Eigen kernels) with
  XLA (keras-gated's choice there) and without (Keras's); one intra-op thread
  (``TF_NUM_INTRAOP_THREADS=1``) against all cores.
* JAX: the default XLA CPU runtime; the older non-thunk runtime
  (``--xla_cpu_use_thunk_runtime=false``); one thread (no Eigen multi-threading).
* torch backend: eager (Keras's default) against ``torch.compile`` (``jit_compile=True``).

Writes ``choices.json`` and ``choices.md`` into ``--out`` (``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ONE_THREAD_XLA = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


@dataclass(frozen=True)
class Choice:
    """One setting of one backend: what ``benchmarks.measure`` runs with."""

    name: str
    backend: str
    description: str
    env: dict = field(default_factory=dict)
    args: tuple = ()
    default: bool = False  # what keras-gated users get without setting anything


CHOICES = (
    Choice("tf-onednn", "tensorflow", "oneDNN kernels, XLA off (keras-gated's default)",
           default=True),
    Choice("tf-onednn-xla", "tensorflow", "oneDNN kernels, XLA on", args=("--jit-compile", "True")),
    Choice("tf-eigen-xla", "tensorflow",
           "oneDNN off, XLA on (keras-gated's jit_compile='auto' without oneDNN)",
           env={"TF_ENABLE_ONEDNN_OPTS": "0"}),
    Choice("tf-eigen", "tensorflow", "oneDNN off, XLA off (Keras's default on an AVX2 CPU)",
           env={"TF_ENABLE_ONEDNN_OPTS": "0"}, args=("--jit-compile", "False")),
    Choice("tf-onednn-1-thread", "tensorflow", "keras-gated's default, one intra-op thread",
           env={"TF_NUM_INTRAOP_THREADS": "1"}),
    Choice("jax", "jax", "XLA CPU, default runtime", default=True),
    Choice("jax-no-thunks", "jax", "XLA CPU, the older non-thunk runtime",
           env={"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"}),
    Choice("jax-1-thread", "jax", "XLA CPU, one thread", env={"XLA_FLAGS": ONE_THREAD_XLA}),
    Choice("torch-eager", "torch", "eager (Keras's default on torch)", default=True),
    Choice("torch-compile", "torch", "torch.compile (jit_compile=True)", args=("--jit-compile", "True")),
)


# Set only by a choice, never inherited: a choice without them gets what users get.
CHOSEN_VARIABLES = ("TF_ENABLE_ONEDNN_OPTS", "TF_NUM_INTRAOP_THREADS", "XLA_FLAGS")


def available(choices=CHOICES) -> list[Choice]:
    """The choices whose backend is installed."""
    installed = {b for b in ("tensorflow", "jax", "torch") if importlib.util.find_spec(b)}
    return [c for c in choices if c.backend in installed]


def launch(choice: Choice, model: str, batch: int, steps: int, timeout: int) -> dict:
    """One measurement in a fresh process: the training img/s, and how long it took."""
    command = [sys.executable, "-m", "benchmarks.measure", "--impl", "keras", "--model", model,
               "--batch", str(batch), "--steps", str(steps), "--latency-calls", "1",
               "--infer-batch", "1", *choice.args]
    inherited = {k: v for k, v in os.environ.items() if k not in CHOSEN_VARIABLES}
    env = {**inherited, "TF_CPP_MIN_LOG_LEVEL": "2", "KERAS_BACKEND": choice.backend, **choice.env}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("BENCH ")]
    if done.returncode or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    result = json.loads(lines[-1][len("BENCH "):])
    return {"train_img_s": result["train_img_s"], "jit_compile": result.get("jit_compile"),
            "wall_s": time.perf_counter() - start}


def measure(choices: list[Choice], model: str, launches: int, batch: int, steps: int,
            timeout: int) -> list[dict]:
    """Every choice ``launches`` times, interleaved (round r runs every choice once), so a
    slow spell of the machine touches all of them alike."""
    runs: dict[str, list[dict]] = {c.name: [] for c in choices}
    for round_ in range(launches):
        for choice in choices:
            result = launch(choice, model, batch, steps, timeout)
            runs[choice.name].append(result)
            shown = (f"{result['train_img_s']:.1f} img/s" if "train_img_s" in result
                     else f"failed: {result['error']}")
            print(f"[choices] round {round_ + 1}/{launches} {choice.name}: {shown}", flush=True)
    rows = []
    for choice in choices:
        speeds = [r["train_img_s"] for r in runs[choice.name] if "train_img_s" in r]
        errors = [r["error"] for r in runs[choice.name] if "error" in r]
        rows.append({
            "choice": choice.name, "backend": choice.backend, "description": choice.description,
            "default": choice.default, "env": choice.env, "args": list(choice.args),
            "train_img_s": ({"median": statistics.median(speeds), "min": min(speeds),
                             "max": max(speeds), "n": len(speeds)} if speeds else None),
            "errors": errors,
        })
    for row in rows:  # each choice against its backend's default
        base = next((r for r in rows if r["backend"] == row["backend"] and r["default"]), None)
        ok = base and base["train_img_s"] and row["train_img_s"]
        row["vs_default"] = (row["train_img_s"]["median"] / base["train_img_s"]["median"]
                             if ok else None)
    return rows


def markdown(rows: list[dict], header: str) -> str:
    lines = [header, "", "| backend | choice | setting | train img/s, median (min–max) | vs the backend's default |",
             "| --- | --- | --- | --- | --- |"]
    for row in rows:
        setting = " ".join([*(f"{k}={v}" for k, v in row["env"].items()), *row["args"]]) or "(none)"
        speed = row["train_img_s"]
        shown = (f"{speed['median']:.0f} ({speed['min']:.0f}–{speed['max']:.0f})" if speed
                 else f"failed: {row['errors'][0] if row['errors'] else '?'}")
        ratio = f"{row['vs_default']:.2f}" if row["vs_default"] is not None else "–"
        name = f"**{row['choice']}** (default)" if row["default"] else row["choice"]
        lines.append(f"| {row['backend']} | {name} | `{setting}` | {shown} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.choices", description=__doc__.split("\n")[0])
    p.add_argument("--model", default="gresnet20")
    p.add_argument("--launches", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--only", nargs="+", help="choice names (default: every available one)")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = p.parse_args(argv)
    choices = available()
    if args.only:
        unknown = sorted(set(args.only) - {c.name for c in CHOICES})
        if unknown:
            p.error(f"unknown choice {unknown[0]!r}; choose from {', '.join(c.name for c in CHOICES)}")
        choices = [c for c in choices if c.name in args.only]
    rows = measure(choices, args.model, args.launches, args.batch, args.steps, args.timeout)
    command = "python -m benchmarks.choices " + " ".join(argv if argv is not None else sys.argv[1:])
    header = (f"`{command.strip()}`: {args.model}, batch {args.batch}, {args.steps} timed steps, "
              f"{args.launches} launches per choice, interleaved")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "choices.json").write_text(json.dumps(
        {"command": command.strip(), "model": args.model, "batch": args.batch, "steps": args.steps,
         "launches": args.launches, "rows": rows}, indent=2) + "\n")
    table = markdown(rows, header)
    (args.out / "choices.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
