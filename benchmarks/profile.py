"""Where the time of a training step goes, by op type, with and without XLA.

    python -m benchmarks.profile --model gresnet20 [--backend tensorflow] [--batch 128]
        [--steps 5] [--jit-compile both|True|False] [--onednn default|on|off]

Each mode is a fresh process: ``model.fit`` on in-memory synthetic arrays (as
``benchmarks.measure``), a few warm-up steps, the same steps again unprofiled (the
profiler's overhead), then ``--steps`` steps under ``tf.profiler.experimental``. The
trace's op events are grouped by op type (``benchmarks.trace``, ``benchmarks.op_types``):
convolution forward, backward-input and backward-filter, batch-norm forward and
backward, element-wise/ReLU, optimizer update, XLA's layout copies, other ops, and the
time outside any op; with the share of the step's wall time of each, adding up to 100 %.

Without XLA the events are the TensorFlow kernels. With XLA they are the compiled HLO
instructions, read against the HLO that ``--xla_dump_to`` writes (``benchmarks.hlo``);
XLA:CPU runs convolutions and parallel loops asynchronously, several side by side, so an
instruction counts from its start to its completion and instructions that overlap share
the wall time evenly: an attribution, not the time of each kernel run alone.
The convolutions' achieved GFLOP/s (counted MACs × 2 over the wall time attributed to
them) is set against the CPU's fp32 limit (``benchmarks.machine``, at the clock that
``/proc/cpuinfo`` reports: a CPU boosting above it can pass 100 %), and the rate a large
fp32 matrix multiply reaches on the same machine is printed beside it.

Writes ``profile.<model>.json`` and ``profile.<model>.md`` into ``--out`` (with
``.onednn-on`` / ``.onednn-off`` before the suffix when ``--onednn`` is given).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import hlo, op_types, trace
from benchmarks.machine import cpu_peak, sgemm_gflops

WARMUP_STEPS = 3
ONEDNN_ENV = {"on": "1", "off": "0"}


def conv_macs(model) -> list[int]:
    """Multiply-accumulates of every Conv2D call of one forward pass of one example, in
    call order."""
    import keras
    import numpy as np

    macs: list[int] = []
    original = keras.layers.Conv2D.call

    def call(self, inputs):
        outputs = original(self, inputs)
        kh, kw = self.kernel_size
        macs.append(int(np.prod(outputs.shape[1:])) * kh * kw * (inputs.shape[-1] // self.groups))
        return outputs

    keras.layers.Conv2D.call = call
    try:
        model(np.zeros((1, *model.input_shape[1:]), "float32"), training=False)
    finally:
        keras.layers.Conv2D.call = original
    return macs


def conv_flops(macs: list[int], batch: int) -> dict[str, float]:
    """FLOPs per training step of each convolution category: forward and weight
    gradient 2 × MACs each; the input gradient of every convolution but the first (the
    stem, fed by the images, needs none)."""
    total = 2 * batch * sum(macs)
    stem = 2 * batch * macs[0] if macs else 0
    return {op_types.CONV_FWD: total, op_types.CONV_BWD_FILTER: total, op_types.CONV_BWD_INPUT: total - stem}


def _layers(layer):
    """``layer`` and every layer nested in it."""
    if hasattr(layer, "_flatten_layers"):
        return list(layer._flatten_layers(include_self=True, recursive=True))
    return [layer, *getattr(layer, "layers", [])]


def profile_once(args) -> dict:
    """Profile ``args.steps`` training steps in this process (the child of ``main``)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.util import _pywrap_util_port

    import keras_gated as kg

    model = kg.create_model(args.model)
    model.compile(keras.optimizers.SGD(0.01, momentum=0.9), "sparse_categorical_crossentropy",
                  jit_compile=args.jit_compile)
    rng = np.random.default_rng(0)
    warm = args.batch * WARMUP_STEPS
    x = rng.uniform(0, 255, (warm + args.batch * args.steps, *model.input_shape[1:])).astype("float32")
    y = rng.integers(0, model.output_shape[-1], len(x))
    fit = {"batch_size": args.batch, "epochs": 1, "verbose": 0, "shuffle": False}
    model.fit(x[:warm], y[:warm], **fit)  # tracing and compilation, untimed
    ends: list[float] = []  # the same steps once without the profiler: its overhead
    timer = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: ends.append(time.perf_counter()))
    start = time.perf_counter()
    model.fit(x[warm:], y[warm:], callbacks=[timer], **fit)
    unprofiled_ms = 1e3 * (ends[-1] - start) / len(ends)
    logdir = Path(args.child) / "trace"
    options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=0,
                                                       device_tracer_level=0)
    tf.profiler.experimental.start(str(logdir), options=options)
    try:
        model.fit(x[warm:], y[warm:], **fit)
    finally:
        tf.profiler.experimental.stop()
    modules = hlo.read_hlo_dump(Path(args.child) / "hlo") if model.jit_compile else {}
    bn_layers = frozenset(layer.name for layer in _layers(model)
                          if isinstance(layer, keras.layers.BatchNormalization))
    events, steps = trace.collect(trace.load_xspace(logdir), modules, bn_layers, model.optimizer.name)
    result = trace.breakdown(events, steps)
    result.update(unprofiled_step_ms=unprofiled_ms, jit_compile=bool(model.jit_compile),
                  onednn=bool(_pywrap_util_port.IsMklEnabled()), batch=args.batch,
                  conv_flops=conv_flops(conv_macs(model), args.batch), hlo_modules=len(modules))
    return result


def launch(args, jit_compile: bool, workdir: Path) -> dict:
    """``profile_once`` in a fresh process, XLA dumping its optimised HLO into workdir."""
    command = [sys.executable, "-m", "benchmarks.profile", "--model", args.model,
               "--batch", str(args.batch), "--steps", str(args.steps),
               "--jit-compile", str(jit_compile), "--child", str(workdir)]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "KERAS_BACKEND": args.backend}
    if jit_compile:
        dump = f"--xla_dump_to={workdir / 'hlo'} --xla_dump_hlo_as_text"
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {dump}".strip()
    if args.onednn in ONEDNN_ENV:
        env["TF_ENABLE_ONEDNN_OPTS"] = ONEDNN_ENV[args.onednn]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROFILE ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("PROFILE "):])


def add_rates(run: dict, peak_gflops: float) -> dict:
    """Achieved GFLOP/s of each convolution category over the wall time attributed to it
    (and to its kernels alone, without the layout copies XLA adds), and the fraction of
    the fp32 limit."""
    for category, flops in run["conv_flops"].items():
        row = run["categories"][category]
        wall_ms, kernel_ms = row["wall_ms_per_step"], row["kernel_wall_ms_per_step"]
        row["gflops"] = flops / wall_ms / 1e6 if wall_ms else None
        row["kernel_gflops"] = flops / kernel_ms / 1e6 if kernel_ms else None
        row["fraction_of_peak"] = row["gflops"] / peak_gflops if row["gflops"] else None
    total_ms = sum(run["categories"][c]["wall_ms_per_step"] for c in op_types.CONV_CATEGORIES)
    run["conv_gflops"] = sum(run["conv_flops"].values()) / total_ms / 1e6 if total_ms else None
    run["conv_fraction_of_peak"] = run["conv_gflops"] / peak_gflops if run["conv_gflops"] else None
    return run


def markdown(run: dict) -> str:
    xla = "XLA on (jit_compile=True)" if run["jit_compile"] else "XLA off (jit_compile=False)"
    title = (f"**{xla}**, oneDNN {'on' if run['onednn'] else 'off'}: step {run['step_ms']:.0f} ms "
             f"under the profiler ({run['batch'] * 1e3 / run['step_ms']:.0f} img/s), "
             f"{run['unprofiled_step_ms']:.0f} ms without it "
             f"({run['batch'] * 1e3 / run['unprofiled_step_ms']:.0f} img/s); {run['steps']} steps; "
             f"ops side by side ×{run['concurrency']:.2f}")
    lines = [title, "",
             ("| op type | op time / step (ms) | wall time / step (ms) | % of step | GFLOP/s (kernels alone) "
              "| % of fp32 peak |"),
             "| --- | --- | --- | --- | --- | --- |"]
    for category in op_types.CATEGORIES:
        row = run["categories"][category]
        rate = peak = ""
        if row.get("gflops"):
            rate = f"{row['gflops']:.1f} ({row['kernel_gflops']:.1f})" if row["kernel_gflops"] else f"{row['gflops']:.1f}"
            peak = f"{100 * row['fraction_of_peak']:.0f} %"
        op_ms = f"{row['op_ms_per_step']:.1f}" if category != op_types.OUTSIDE else "–"
        lines.append(f"| {category} | {op_ms} | {row['wall_ms_per_step']:.1f} | {row['percent']:.1f} | "
                     f"{rate} | {peak} |")
    total = sum(run["categories"][c]["percent"] for c in op_types.CATEGORIES)
    lines.append(f"| **all** | | {run['step_ms']:.1f} | {total:.1f} | conv {run['conv_gflops'] or 0:.1f} | "
                 f"{100 * (run['conv_fraction_of_peak'] or 0):.0f} % |")
    lines += ["", "Top ops: " + "; ".join(f"`{op['op'][-70:]}` ({op['category']}) {op['ms_per_step']:.1f} ms"
                                          for op in run["top_ops"][:8]), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__.split("\n")[0])
    p.add_argument("--model", default="gresnet20")
    p.add_argument("--backend", default="tensorflow", choices=("tensorflow",),
                   help="the TensorFlow profiler traces TensorFlow (and its XLA) only")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=5, help="profiled training steps")
    p.add_argument("--jit-compile", default="both", choices=("both", "True", "False"))
    p.add_argument("--onednn", default="default", choices=("default", "on", "off"),
                   help="TF_ENABLE_ONEDNN_OPTS for the profiled process (default: unset)")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--keep", type=Path, metavar="DIR",
                   help="keep each mode's trace (and XLA's HLO dump) under DIR/xla-on, DIR/xla-off")
    p.add_argument("--child", help=argparse.SUPPRESS)  # internal: profile in this process
    args = p.parse_args(argv)
    if args.child:
        args.jit_compile = args.jit_compile == "True"
        print("PROFILE " + json.dumps(profile_once(args)))
        return 0
    peak = cpu_peak()
    sgemm = sgemm_gflops()
    modes = [True, False] if args.jit_compile == "both" else [args.jit_compile == "True"]
    runs = []
    for jit_compile in modes:
        if args.keep:
            workdir = args.keep / ("xla-on" if jit_compile else "xla-off")
            shutil.rmtree(workdir, ignore_errors=True)
            runs.append(add_rates(launch(args, jit_compile, workdir), peak.gflops))
            continue
        with tempfile.TemporaryDirectory(prefix="keras-gated-profile-") as workdir:
            runs.append(add_rates(launch(args, jit_compile, Path(workdir)), peak.gflops))
    command = "python -m benchmarks.profile " + " ".join(argv if argv is not None else sys.argv[1:])
    header = (f"`{command.strip()}`: {args.model}, batch {args.batch}, TensorFlow; {peak.model}, "
              f"fp32 limit {peak.formula()}; a 2048² fp32 matrix multiply (numpy) reaches "
              f"{sgemm:.0f} GFLOP/s here")
    text = "\n".join([header, "", *(markdown(run) for run in runs)])
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"profile.{args.model}" + (f".onednn-{args.onednn}" if args.onednn != "default" else "")
    (args.out / f"{stem}.json").write_text(json.dumps(
        {"command": command.strip(), "model": args.model, "batch": args.batch, "cpu": peak.model,
         "machine": peak.formula(), "peak_gflops": peak.gflops, "sgemm_gflops": sgemm, "runs": runs},
        indent=2) + "\n")
    (args.out / f"{stem}.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
