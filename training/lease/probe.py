"""A short measurement on a lent GPU before the long call: the compiled Keras step's
throughput, its compile time and bf16 inference, and the plain PyTorch peer's throughput.

    python -m training.lease.probe keras --model gwrn_28_10 --batch 512 256 --seconds 15
    python -m training.lease.probe torch --model gwrn_28_10 --batch 512 --seconds 15
    python -m training.lease.probe torch --compile --model gwrn_28_10 --batch 512 --seconds 15

Random uint8 images live on the device (throughput does not depend on their values;
they are not zeros). One JSON line per measurement goes to stdout and to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from training.lease.bootstrap import ensure_keras

LEASE_DIR = Path(".lease")


def _emit(record: dict, out: Path | None) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    if out is not None:
        with open(out, "a") as f:
            f.write(line + "\n")


def probe_keras(model_name: str, batches: list[int], seconds: float, out: Path | None,
                budget: float = float("inf")) -> None:
    started = time.perf_counter()
    os.environ.setdefault("KERAS_BACKEND", "jax")
    wheels = ensure_keras(LEASE_DIR / "wheels")
    import jax
    import jax.numpy as jnp
    import keras

    from keras_gated import create_model
    from keras_gated.training.optimizers import decayed_variables
    from keras_gated.training.recipes import get_recipe
    from keras_gated.training.transforms import Transforms
    from training.lease.device_step import (
        initial_state, make_eval_step, make_train_step,
    )

    _emit({"what": "host", "devices": [str(d) for d in jax.devices()], "jax": jax.__version__,
           "keras": keras.__version__, "wheels": wheels}, out)
    keras.config.set_dtype_policy("mixed_bfloat16")
    recipe = get_recipe("wrn_cifar")
    n = 8192
    key = jax.random.PRNGKey(0)
    images = jax.random.randint(key, (n, 32, 32, 3), 0, 256, jnp.int32).astype(jnp.uint8)
    labels = jax.random.randint(jax.random.PRNGKey(1), (n,), 0, 10, jnp.int32)
    for batch in batches:
        if time.perf_counter() - started > budget:
            _emit({"what": "skipped", "batch": batch, "reason": f"past --budget {budget} s"}, out)
            continue
        keras.utils.set_random_seed(0)
        t0 = time.perf_counter()
        model = create_model(model_name, dropout=0.3)
        optimizer = keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True)
        state = initial_state(model, optimizer)
        step = make_train_step(
            model, optimizer, decayed=decayed_variables(model, recipe),
            weight_decay=recipe.weight_decay,
            transforms=Transforms.from_recipe(recipe, training=True, batch_size=batch,
                                              seed=0, drop_remainder=True),
        )
        build_s = time.perf_counter() - t0
        idx = jnp.arange(batch)
        t0 = time.perf_counter()
        state = step(state, images, labels, idx, jax.random.PRNGKey(2))
        jax.block_until_ready(state.metrics)
        compile_s = time.perf_counter() - t0
        steps = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(5):
                idx = (jnp.arange(batch) + steps * batch) % n
                state = step(state, images, labels, idx, jax.random.PRNGKey(steps))
                steps += 1
            jax.block_until_ready(state.metrics)
        elapsed = time.perf_counter() - t0
        predict = make_eval_step(model)
        t1 = time.perf_counter()
        probs = predict(state.trainable, state.non_trainable, images[:1000])
        finite = bool(jnp.all(jnp.isfinite(probs)))
        eval_compile_s = time.perf_counter() - t1
        _emit({"what": "keras_train_step", "model": model_name, "precision": "mixed_bfloat16",
               "batch": batch, "build_s": round(build_s, 1), "compile_s": round(compile_s, 1),
               "steps": steps, "img_per_s": round(steps * batch / elapsed, 1),
               "metrics": [float(v) for v in state.metrics],
               "bf16_inference_finite": finite, "eval_compile_s": round(eval_compile_s, 1)}, out)
        del state, model


def probe_torch(model_name: str, batches: list[int], seconds: float, out: Path | None,
                compile_backend: str | None = None) -> None:
    """The plain PyTorch peer's training step at its best: channels_last, bf16 autocast,
    and with ``compile_backend`` (``"inductor"``: ``--compile``) the model compiled by
    ``torch.compile``; the compile time is the first steps' time, reported apart."""
    import torch

    from benchmarks.peers import build_peer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for batch in batches:
        torch.manual_seed(0)
        net, shape = build_peer(model_name)
        net = net.to(device).to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                              weight_decay=5e-4)
        forward = torch.compile(net, backend=compile_backend) if compile_backend else net
        x = torch.randint(0, 256, (batch, *shape), device=device).float()
        x = x.contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 10, (batch,), device=device)

        def step():
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(forward(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

        t0 = time.perf_counter()
        for _ in range(3):
            loss = step()
        sync()
        first_steps_s = time.perf_counter() - t0
        steps = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(5):
                loss = step()
                steps += 1
            sync()
        elapsed = time.perf_counter() - t0
        compiled = f"torch.compile ({compile_backend})" if compile_backend else "eager"
        _emit({"what": "torch_peer_train_step", "model": model_name, "batch": batch,
               "precision": f"bf16 autocast, channels_last, {compiled}", "steps": steps,
               "img_per_s": round(steps * batch / elapsed, 1),
               "first_3_steps_s": round(first_steps_s, 1), "loss": float(loss),
               "gpu": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
               "torch": torch.__version__}, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.lease.probe", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("impl", choices=("keras", "torch"))
    parser.add_argument("--model", default="gwrn_28_10")
    parser.add_argument("--batch", type=int, nargs="+", default=[512])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--budget", type=float, default=float("inf"),
                        help="seconds after which no further batch size is started")
    parser.add_argument("--out", type=Path, default=None, help="a JSON-lines file to append to")
    parser.add_argument("--compile", action="store_true",
                        help="torch: compile the peer with torch.compile (inductor)")
    parser.add_argument("--compile-backend", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.impl == "keras":
        probe_keras(args.model, args.batch, args.seconds, args.out, args.budget)
    else:
        backend = args.compile_backend or ("inductor" if args.compile else None)
        probe_torch(args.model, args.batch, args.seconds, args.out, compile_backend=backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
