"""One benchmark launch in a fresh process: train img/s, batch-1 latency, batch-256
throughput and peak memory of one model on one implementation, printed as JSON.

    KERAS_BACKEND=jax python -m benchmarks.measure --impl keras --model gresnet20
    python -m benchmarks.measure --impl keras --model gresnet20 --data cifar10
    python -m benchmarks.measure --impl torch --model gresnet20 [--channels-last] [--torch-compile]

On a machine with a GPU both run on it (Keras's JAX and torch backends find it themselves;
the PyTorch peer moves to ``cuda``), the clocks stop only once the device has finished, and
``--precision`` means mixed precision there too (the peer: ``torch.autocast``).

Keras trains on in-memory synthetic arrays (``--data synthetic``, the default) or on the
real CIFAR-10 training pipeline of ``training.train`` (``--data cifar10``, see
``benchmarks.pipeline``); latency and inference always use synthetic batches.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

WARMUP_STEPS = 3  # untimed training steps first (tracing, compilation, allocator warm-up)


def _percentiles(times: list[float]) -> dict:
    return {"p50_ms": float(np.percentile(times, 50) * 1e3), "p90_ms": float(np.percentile(times, 90) * 1e3)}


def _timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _device_peak_mb() -> float | None:
    """Peak device memory of this process on the current Keras backend's GPU, if any."""
    import keras

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        stats = jax.devices()[0].memory_stats() or {}
        return stats["peak_bytes_in_use"] / 2**20 if "peak_bytes_in_use" in stats else None
    if backend == "torch":
        import torch

        return torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None
    return None


def measure_keras(args) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # As the README says: keras-gated first, so that it sets its CPU defaults (oneDNN on
    # TensorFlow) before Keras imports the backend.
    import keras_gated as kg  # isort: skip
    import keras

    from keras_gated.precision import has_accelerator

    if args.precision != "float32":
        keras.mixed_precision.set_global_policy(args.precision)
    model = kg.create_model(args.model)
    shape = tuple(model.input_shape[1:])
    rng = np.random.default_rng(0)
    steps = args.steps + WARMUP_STEPS
    data = {"data": args.data}
    if args.data == "cifar10":
        from benchmarks.pipeline import training_pipeline

        real = training_pipeline(model, args.model, args.batch, examples=args.examples)
        if real.num_examples < args.batch * steps:
            raise ValueError(f"{real.num_examples} images hold fewer than {steps} batches of {args.batch}.")
        fit_data = {"x": real.dataset, "steps_per_epoch": steps}
        data.update(examples=real.num_examples, cache_fill_s=real.cache_fill_s,
                    epoch_start_s=real.epoch_start_s)
    else:
        x = rng.uniform(0, 255, (args.batch * steps, *shape)).astype("float32")
        y = rng.integers(0, model.output_shape[-1], len(x))
        fit_data = {"x": x, "y": y, "batch_size": args.batch}
    model.compile(keras.optimizers.SGD(0.01, momentum=0.9), "sparse_categorical_crossentropy",
                  jit_compile=args.jit_compile if args.jit_compile != "auto" else "auto")
    # One fit over warm-up + timed batches; the clock runs from the end of the last
    # warm-up batch (tracing and compilation happen in the first) to the last batch.
    ends: list[float] = []
    timer = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: ends.append(time.perf_counter()))
    # A callback with its own ``on_train_batch_end`` turns off Keras's asynchronous callback
    # dispatch: the logs are read back (a device sync) before each call, so on a GPU too
    # every timestamp falls after its step has finished.
    model.fit(**fit_data, epochs=1, verbose=0, shuffle=False, callbacks=[timer])
    accelerator = has_accelerator()
    train_s = ends[-1] - ends[WARMUP_STEPS - 1]
    timed_images = args.batch * (len(ends) - WARMUP_STEPS)
    probe = rng.uniform(0, 255, (args.infer_batch, *shape)).astype("float32")
    one = probe[:1]
    model.predict_on_batch(one)
    latency = _timed(lambda: model.predict_on_batch(one), args.latency_calls)
    big = probe
    model.predict_on_batch(big)
    infer = _timed(lambda: model.predict_on_batch(big), 3)
    variant = ["GPU"] if accelerator else []
    if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "0" and keras.backend.backend() == "tensorflow":
        variant.append("oneDNN off")
    if args.jit_compile is not None and args.jit_compile != "auto":
        variant.append(f"XLA {'on' if args.jit_compile else 'off'}")
    if args.precision != "float32":
        variant.append(args.precision)
    if args.data != "synthetic":
        variant.append(f"{args.data} pipeline")
    label = f"keras-gated ({', '.join([keras.backend.backend(), *variant])})"
    return {"implementation": label, "backend": keras.backend.backend(), "jit_compile": bool(model.jit_compile),
            "train_img_s": timed_images / train_s, "latency": _percentiles(latency),
            "infer_img_s": args.infer_batch / float(np.median(infer)), "device": "gpu" if accelerator else "cpu",
            "peak_device_mb": _device_peak_mb() if accelerator else None, "precision": args.precision, **data}


def measure_torch(args) -> dict:
    import torch

    from benchmarks.peers import build_peer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    # Timings wait for the GPU to finish what was queued.
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    net, chw = build_peer(args.model)
    memory_format = torch.channels_last if args.channels_last and len(chw) == 3 else torch.contiguous_format
    net = net.to(device=device, memory_format=memory_format)
    if args.torch_compile:  # compiled on the first (untimed) warm-up steps
        net = torch.compile(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    half = {"mixed_bfloat16": torch.bfloat16, "mixed_float16": torch.float16}.get(args.precision)
    # float16 needs loss scaling, as Keras's mixed_float16 does; bfloat16 does not.
    scaler = torch.amp.GradScaler(device) if half is torch.float16 else None
    gen = torch.Generator().manual_seed(0)
    x = torch.rand((args.batch, *chw), generator=gen).to(device=device, memory_format=memory_format)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)

    def autocast():
        return torch.autocast(device, dtype=half, enabled=half is not None)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = torch.nn.functional.cross_entropy(net(x), y)
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

    net.train()
    for _ in range(WARMUP_STEPS):
        step()
    sync()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    sync()
    train_s = time.perf_counter() - start
    net.eval()
    one = x[:1].contiguous().to(memory_format=memory_format)
    big = torch.rand((args.infer_batch, *chw), generator=gen).to(device=device, memory_format=memory_format)

    def infer(batch):
        with autocast():
            net(batch)
        sync()

    with torch.inference_mode():
        infer(one)
        latency = _timed(lambda: infer(one), args.latency_calls)
        infer(big)
        throughput = _timed(lambda: infer(big), 3)
    label = ("PyTorch peer" + (" (GPU)" if device == "cuda" else "")
             + (", channels_last" if memory_format is torch.channels_last else "")
             + (f", {args.precision} autocast" if half is not None else "")
             + (", torch.compile" if args.torch_compile else ""))
    return {"implementation": label, "backend": "torch", "train_img_s": args.batch * args.steps / train_s,
            "latency": _percentiles(latency), "infer_img_s": args.infer_batch / float(np.median(throughput)),
            "device": "gpu" if device == "cuda" else "cpu", "precision": args.precision,
            "peak_device_mb": torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else None,
            # The reference the other implementations are compared with.
            "peer_reference": (memory_format is torch.channels_last and half is None
                               and not args.torch_compile),
            "peer": True}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.measure", description=__doc__.split("\n")[0])
    p.add_argument("--impl", choices=("keras", "torch"), required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20, help="timed training steps")
    p.add_argument("--latency-calls", type=int, default=30)
    p.add_argument("--infer-batch", type=int, default=256)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--jit-compile", default="auto", help="keras: auto, or True/False")
    p.add_argument("--torch-compile", action="store_true", help="torch: the peer through torch.compile")
    p.add_argument("--precision", default="float32", choices=("float32", "mixed_bfloat16", "mixed_float16"))
    p.add_argument("--data", default="synthetic", choices=("synthetic", "cifar10"),
                   help="keras: in-memory random arrays, or the CIFAR-10 training pipeline")
    p.add_argument("--examples", type=int, help="--data cifar10: the first N training images only")
    args = p.parse_args(argv)
    if args.impl == "torch" and args.data != "synthetic":
        p.error("--data cifar10 is a keras measurement (the training pipeline of training.train)")
    if args.jit_compile in ("True", "False"):
        args.jit_compile = args.jit_compile == "True"
    result = measure_torch(args) if args.impl == "torch" else measure_keras(args)
    result.update(model=args.model, batch=args.batch,
                  peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print("BENCH " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
