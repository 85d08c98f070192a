"""Several nets in one lease call: ``python -m training.lease run --model A B ...``.

Each net trains in its own ``python -m training.lease run`` process with one model, the
same deadline logic and its bundle packed into one file, ``DIR/<model>.tar`` (so that up
to 8 nets come back from one call). In turn (the default), each net gets an equal share
of the time still left when it starts, so a net that ends early leaves its time to the
next; ``--side-by-side`` starts them all at once on the one accelerator (small nets leave
most of a large GPU idle), each with the whole time left and JAX's memory allocated as
needed rather than up front.

The exit status is 0 only when every net's run exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from training.lease.bundle import MAX_FILES, MAX_TOTAL_BYTES, PACKED_SUFFIX

WRAP_UP_SECONDS = 10.0  # kept after the last net, for this process to report


def recipes_for(models: list[str], recipes: list[str]) -> list[str]:
    """One recipe per model: one recipe given for all, or one given per model."""
    if len(recipes) == 1:
        return recipes * len(models)
    if len(recipes) != len(models):
        raise SystemExit(f"{len(models)} models and {len(recipes)} recipes: give one --recipe "
                         "for all of them or one per model, in the same order.")
    return list(recipes)


def child_command(args: argparse.Namespace, model: str, recipe: str, minutes: float,
                  out: Path, call: str) -> list[str]:
    """The one-model ``training.lease run`` command of ``model`` in this call."""
    command = [sys.executable, "-m", "training.lease", "run", "--model", model, "--recipe", recipe,
               "--minutes", f"{minutes:.3f}", "--out", str(out), "--pack", "--call", call]
    for flag, value in (("--dataset", args.dataset), ("--batch-size", args.batch_size),
                        ("--precision", args.precision), ("--seed", args.seed),
                        ("--epochs", args.epochs), ("--max-steps", args.max_steps),
                        ("--reserve", args.reserve), ("--snapshot-minutes", args.snapshot_minutes),
                        ("--measure-seconds", args.measure_seconds), ("--level", args.level),
                        ("--lease-dir", args.lease_dir)):
        if value is not None:
            command += [flag, str(value)]
    for text in args.model_arg:
        command += ["--model-arg", text]
    return command


def _relay(process: subprocess.Popen, model: str) -> None:
    """Print a net's output as it comes, each line marked with the net's name."""
    for line in process.stdout:
        print(f"[{model}] {line}", end="", flush=True)


def _start(command: list[str], model: str, env: dict) -> tuple[subprocess.Popen, threading.Thread]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)
    relay = threading.Thread(target=_relay, args=(process, model), daemon=True)
    relay.start()
    return process, relay


def check_out(out: Path, models: list[str]) -> None:
    """``out`` must be new, or hold only packed bundles of these nets (a call run again)."""
    if len(models) > MAX_FILES:
        raise SystemExit(f"{len(models)} nets: a call brings back at most {MAX_FILES} files, "
                         f"one per net; split them over {MAX_FILES} nets a call.")
    if len(set(models)) != len(models):
        raise SystemExit("A net is named twice in --model: name each once.")
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise SystemExit(f"{out} is not a folder: give a new folder for the bundles.")
    if out.exists():
        ours = {f"{m}{PACKED_SUFFIX}" for m in models}
        others = sorted(p.name for p in out.iterdir() if p.name not in ours)
        if others:
            raise SystemExit(f"{out} holds {', '.join(others[:3])}: give a new folder for the bundles.")


def main(args: argparse.Namespace, started: float, call: str) -> int:
    """Train ``args.model`` (several) in turn or side by side until the deadline."""
    models = list(args.model)
    recipes = recipes_for(models, args.recipe)
    out = Path(args.out)
    check_out(out, models)
    out.mkdir(parents=True, exist_ok=True)
    deadline = started + 60.0 * args.minutes - WRAP_UP_SECONDS
    env = dict(os.environ)
    if args.side_by_side:
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    codes: dict[str, int] = {}
    running: list[tuple[str, subprocess.Popen, threading.Thread]] = []
    for i, (model, recipe) in enumerate(zip(models, recipes)):
        left = deadline - time.time()
        share = left if args.side_by_side else left / (len(models) - i)
        if share < 30.0:
            print(f"[lease] {model}: skipped, {share:.0f}s left for it", flush=True)
            codes[model] = 1
            continue
        command = child_command(args, model, recipe, share / 60.0, out / f"{model}{PACKED_SUFFIX}", call)
        print(f"[lease] {model} ({recipe}): {share / 60.0:.2f} minutes"
              f"{', side by side' if args.side_by_side else ''}", flush=True)
        process, relay = _start(command, model, env)
        running.append((model, process, relay))
        if not args.side_by_side:
            codes[model] = process.wait()
            relay.join()
    for model, process, relay in running:
        if model not in codes:
            codes[model] = process.wait()
            relay.join()
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"[lease] bundles in {out}: " + ", ".join(
        f"{m} {'ok' if c == 0 else f'exit {c}'}" for m, c in codes.items())
        + f"; {total / 2**20:.1f} MiB", flush=True)
    if total > MAX_TOTAL_BYTES:
        print(f"[lease] {total / 2**20:.1f} MiB is more than a call brings back "
              f"({MAX_TOTAL_BYTES / 2**20:.0f} MiB): train fewer nets a call.", flush=True)
        return 1
    return 0 if all(c == 0 for c in codes.values()) else 1
