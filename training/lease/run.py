"""``python -m training.lease run``: train on a lent accelerator until a deadline, then
evaluate and write a bundle.

    python -m training.lease run --model gwrn_28_10 --dataset cifar10 --minutes 9.5 --out DIR
    python -m training.lease run --model gresnet20 preactresnet20 --recipe preact_cifar \
        --side-by-side --minutes 9.5 --out DIR        # several nets: DIR/<model>.tar each

Phases, each timed in the bundle's ``metrics.json``:

1. set-up: Keras from the carried wheels when the host has none; the carried data decoded
   and checked against the manifest's sha256s; the training set put on the device;
2. compile: the model built (``mixed_bfloat16`` on a GPU/TPU), the compiled training step
   (``training.lease.device_step``) and the evaluation steps compiled, and the step's
   throughput measured on a throw-away copy of the initial state;
3. sizing: the number of steps T that ends before the deadline (counted from this
   command's start), less a reserve for the evaluation and the bundle; the recipe's
   learning-rate schedule is laid over exactly those T steps;
4. training: T steps on all training images (a fresh order each epoch, whole batches),
   one progress line at least every 30 s, and a bundle of the current net refreshed every
   few minutes, so a call killed at its limit still brings one back;
5. evaluation: the test split in float32 on the weights rounded to bfloat16, i.e. exactly
   the weights the bundle holds; then the final bundle.

A budget recipe (``lr_schedule="warmup_linear"``) is laid over as many steps as fit; a
paper recipe over its own epochs (``--epochs`` sets another number), cut to what fits
when they do not (the bundle says so). Several nets in one call: ``training.lease.several``.

Exit status 0 only when all T steps ran and the test accuracy is finite.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

# Keras, JAX and the library's modules are imported inside the functions below: on the
# host, Keras may first come from the carried wheels (``carried_site``).
STARTED = time.time()  # the command's start: the deadline counts from here
LEASE_DIR = Path(".lease")
PROGRESS_SECONDS = 20.0


def _say(message: str) -> None:
    print(f"[lease {time.time() - STARTED:6.1f}s] {message}", flush=True)


def carried_site(lease_dir: Path) -> list[str]:
    """Make the carried wheels importable before anything imports them: Pillow always
    (the pixels were checked with that Pillow's decoder) when its wheel fits this Python;
    Keras, optree and namex when Keras is missing. Returns the wheels unpacked."""
    from training.lease.bootstrap import missing, temporary_site, unpack_wheels

    wheels = sorted((lease_dir / "wheels").glob("*.whl"))
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    chosen = [w for w in wheels if w.name.lower().startswith("pillow-") and f"-{tag}-" in w.name]
    if missing("keras"):
        chosen += [w for w in wheels if not w.name.lower().startswith("pillow-")]
    if not chosen:
        return []
    return unpack_wheels(chosen, temporary_site())


def recorded_command(argv: list[str], out: str) -> str:
    """The command as run, with an ``--out`` outside the working directory written as
    ``DIR`` (a host's absolute path says nothing to a reader of the card)."""
    relative = os.path.relpath(out)
    shown = relative if not relative.startswith("..") and not os.path.isabs(relative) else "DIR"
    return "python -m training.lease " + " ".join(shown if a == out else a for a in argv)


def learning_rate_fn(recipe):
    """η(t, T) of the recipe over T steps, for the compiled step (T a traced scalar)."""
    import jax.numpy as jnp

    from keras_gated.training.schedules import warmup_linear_decay

    if recipe.lr_schedule == "warmup_linear":
        return lambda t, total: warmup_linear_decay(t, recipe.learning_rate, total, recipe.warmup)
    if recipe.lr_epoch_decay != 1.0:
        raise SystemExit(f"Recipe {recipe.name!r} decays per epoch: use a budget recipe for a lease.")

    def step_schedule(t, total):
        passed = sum(
            (t >= jnp.round(f * total)).astype(jnp.float32) for f in recipe.lr_boundaries
        ) if recipe.lr_boundaries else jnp.float32(0.0)
        return recipe.learning_rate * recipe.lr_decay ** passed

    return step_schedule


def size_schedule(*, now: float, deadline: float, reserve: float, steps_per_second: float,
                  snapshot_seconds: float, snapshot_cost: float, max_steps: int | None) -> int:
    """The whole number of steps that ends before ``deadline`` less ``reserve`` seconds,
    at the measured rate, counting the time the periodic bundles take (at least 1)."""
    available = deadline - now - reserve
    snapshots = max(0.0, available / snapshot_seconds) if snapshot_seconds > 0 else 0.0
    available -= snapshots * snapshot_cost
    steps = int(math.floor(0.97 * max(0.0, available) * steps_per_second))
    if max_steps is not None:
        steps = min(steps, max_steps)
    return max(1, steps)


def lease_transforms(recipe, model, batch_size: int, seed: int):
    """The training ``Transforms`` of a lease run: the recipe's, as both engines run it
    (``pad_mode="mean"`` pads with the model's normalisation mean), whole batches only."""
    from keras_gated.training.pipeline import normalisation_mean  # imports Keras
    from keras_gated.training.transforms import Transforms

    return Transforms.from_recipe(recipe, training=True, batch_size=batch_size, seed=seed,
                                  drop_remainder=True, pad_fill=normalisation_mean(model))


def main(args: argparse.Namespace) -> int:
    if len(args.model) > 1:
        from training.lease import several

        return several.main(args, STARTED, recorded_command(sys.argv[1:], args.out))
    if len(args.recipe) > 1:
        raise SystemExit("One net takes one --recipe: give several with several --model names.")
    args.model, args.recipe = args.model[0], args.recipe[0]
    os.environ.setdefault("KERAS_BACKEND", "jax")
    wheels = carried_site(Path(args.lease_dir))  # before anything imports Keras
    import keras

    if keras.backend.backend() != "jax":
        raise SystemExit("The lease run trains on the JAX backend: unset KERAS_BACKEND or set it to jax.")
    run = LeaseRun(args, wheels)
    run.load_data()
    run.build()
    run.measure()
    run.size()
    run.train()
    return run.evaluate_and_write()


class LeaseRun:
    """One net's lease run, phase by phase (the module's docstring): each method is one
    phase, timed in ``phases``; what a phase makes is kept on the object for the next."""

    def __init__(self, args: argparse.Namespace, wheels: list[str]):
        from training.lease import bundle as bundle_io

        self.args, self.wheels = args, wheels
        self.deadline = STARTED + 60.0 * args.minutes
        self.phases: dict[str, float] = {}
        self.out = Path(args.out)
        if args.pack:
            if self.out.exists() and not bundle_io.is_packed_bundle(self.out):
                raise SystemExit(f"{self.out} exists and is not a packed lease bundle: give a new --out.")
        elif self.out.exists() and not (self.out.is_dir() and bundle_io.is_bundle_or_empty(self.out)):
            raise SystemExit(f"{self.out} exists and is not an empty folder or a lease bundle: give a new --out.")
        if args.dataset != "cifar10":
            raise SystemExit(f"The lease run carries CIFAR-10 only, not {args.dataset!r}: use --dataset cifar10.")

    # 1. set-up -------------------------------------------------------------------------
    def load_data(self) -> None:
        """The carried data, checked against the manifest; the training set on the device."""
        import jax
        import numpy as np

        from training.lease.compact_data import load_split

        lease_dir = Path(self.args.lease_dir)
        manifest_path = lease_dir / "manifest.json"
        if not manifest_path.is_file():
            raise SystemExit(f"No {manifest_path}: run `python -m training.lease prepare` first.")
        data = {e["split"]: e for e in json.loads(manifest_path.read_text())["data"]}
        x_train, y_train = load_split(lease_dir / data["train"]["file"], data["train"])
        x_test, y_test = load_split(lease_dir / data["test"]["file"], data["test"])
        self.device = jax.devices()[0]
        self.accelerated = self.device.platform in ("gpu", "tpu")
        self.images = jax.device_put(x_train, self.device)
        self.labels = jax.device_put(y_train, self.device)
        self.num_train = len(y_train)
        self.test_images = jax.device_put(x_test, self.device)
        self.test_labels = np.asarray(y_test)
        _say(f"data: {len(y_train)} train, {len(y_test)} test images checked against the "
             f"manifest; device {self.device.device_kind}; wheels unpacked: "
             f"{', '.join(self.wheels) or 'none'}")
        self.phases["setup_s"] = time.time() - STARTED

    # 2. model and compiled steps -------------------------------------------------------
    def build(self) -> None:
        """The model (and a float32 twin for evaluation), its optimiser state and the
        compiled training and evaluation steps; the schedule's cap in steps."""
        import jax
        import keras

        from keras_gated import create_model, get_model_entry
        from keras_gated.model_args import parse_model_args
        from keras_gated.training.optimizers import decayed_variables
        from keras_gated.training.recipes import get_recipe
        from training.lease.device_step import (
            initial_state, make_eval_step, make_train_step,
        )

        args = self.args
        self.t0 = time.time()
        recipe = self.recipe = get_recipe(args.recipe)
        self.batch = args.batch_size or recipe.batch_size
        self.precision = args.precision or ("mixed_bfloat16" if self.accelerated else "float32")
        keras.config.set_dtype_policy(self.precision)
        keras.utils.set_random_seed(args.seed)
        takes_dropout = recipe.dropout is not None and get_model_entry(args.model).supports_dropout
        model_kwargs = {"dropout": recipe.dropout} if takes_dropout else {}
        self.model_args = parse_model_args(args.model_arg)  # read once Keras can be imported
        model_kwargs.update(self.model_args)
        self.model = create_model(args.model, **model_kwargs)
        optimizer = keras.optimizers.SGD(
            0.0, momentum=recipe.momentum, nesterov=recipe.nesterov,
            global_clipnorm=recipe.gradient_clip_norm,
        )
        self.state = initial_state(self.model, optimizer)
        self.step = make_train_step(
            self.model, optimizer, decayed=decayed_variables(self.model, recipe),
            weight_decay=recipe.weight_decay, label_smoothing=recipe.label_smoothing,
            transforms=lease_transforms(recipe, self.model, self.batch, args.seed),
            learning_rate=learning_rate_fn(recipe),
        )
        keras.config.set_dtype_policy("float32")
        self.eval_model = create_model(args.model, **model_kwargs)
        keras.config.set_dtype_policy(self.precision)
        self.predict_low = make_eval_step(self.model)
        self.predict_f32 = make_eval_step(self.eval_model)
        self.steps_per_epoch = self.num_train // self.batch
        if self.steps_per_epoch < 1:
            raise SystemExit(f"--batch-size {self.batch} is larger than the {self.num_train} "
                             f"training images.")
        self.key = jax.random.PRNGKey(args.seed)
        self.epochs_asked = args.epochs if args.epochs is not None else (
            None if recipe.lr_schedule == "warmup_linear" else recipe.epochs)
        self.step_cap = args.max_steps
        if self.epochs_asked is not None:
            asked_steps = max(1, round(self.epochs_asked * self.steps_per_epoch))
            self.step_cap = asked_steps if self.step_cap is None else min(self.step_cap, asked_steps)

    def measure(self) -> None:
        """Compile (timed), then the step's throughput on a throw-away copy of the state,
        and the cost of a periodic bundle."""
        import jax
        import jax.numpy as jnp

        from training.lease import bundle as bundle_io
        from training.lease.device_step import epoch_order

        step, batch = self.step, self.batch
        total_steps_guess = 10 * self.steps_per_epoch  # the trial's schedule: thrown away
        trial = jax.tree_util.tree_map(jnp.copy, self.state)
        order = epoch_order(jax.random.fold_in(self.key, 10**6), self.num_train, batch)
        trial = step(trial, self.images, self.labels, order[0], self.key, total_steps_guess)
        jax.block_until_ready(trial.metrics)
        self.phases["compile_s"] = time.time() - self.t0
        with jax.default_matmul_precision("float32"):
            jax.block_until_ready(self.predict_f32(
                [v.value for v in self.eval_model.trainable_variables],
                [v.value for v in self.eval_model.non_trainable_variables],
                self.test_images[:batch]))
        jax.block_until_ready(self.predict_low(self.state.trainable, self.state.non_trainable,
                                               self.test_images[:batch]))
        for i in range(1, 6):  # warm-up: the first runs of a compiled program are slower
            trial = step(trial, self.images, self.labels, order[i], self.key, total_steps_guess)
        jax.block_until_ready(trial.metrics)
        trial_steps, t1 = 0, time.time()
        while trial_steps < 10 or time.time() - t1 < self.args.measure_seconds:
            trial = step(trial, self.images, self.labels,
                         order[(6 + trial_steps) % self.steps_per_epoch], self.key,
                         total_steps_guess)
            trial_steps += 1
            if trial_steps % 5 == 0:
                jax.block_until_ready(trial.metrics)
        jax.block_until_ready(trial.metrics)
        self.steps_per_second = trial_steps / (time.time() - t1)
        del trial
        t2 = time.time()
        bundle_io.state_weights(self.model, self.state.trainable, self.state.non_trainable)
        self.snapshot_cost = time.time() - t2 + 1.0  # the copy to the host, writing at level 1
        self.phases["model_and_compile_s"] = time.time() - self.t0
        _say(f"{self.args.model} ({self.precision}): compiled in {self.phases['compile_s']:.1f}s; "
             f"{self.steps_per_second * batch:.0f} img/s at batch {batch} over {trial_steps} "
             f"trial steps")

    # 3. sizing -------------------------------------------------------------------------
    def steps_that_fit(self, now: float, steps_per_second: float) -> int:
        return size_schedule(
            now=now, deadline=self.deadline, reserve=self.args.reserve,
            steps_per_second=steps_per_second,
            snapshot_seconds=60.0 * self.args.snapshot_minutes,
            snapshot_cost=self.snapshot_cost, max_steps=self.step_cap,
        )

    def size(self) -> None:
        """The schedule's steps, and the bundle's record of the run so far."""
        import jax
        import keras
        import numpy as np

        args, recipe = self.args, self.recipe
        self.total_steps = self.steps_that_fit(time.time(), self.steps_per_second)
        epochs = self.total_steps / self.steps_per_epoch
        expected_end = time.time() + self.total_steps / self.steps_per_second
        if self.epochs_asked is not None and epochs < self.epochs_asked:
            _say(f"{self.epochs_asked:g} epochs do not fit before the deadline: cut to {epochs:.2f}")
        _say(f"schedule: {self.total_steps} steps = {epochs:.2f} epochs of "
             f"{self.steps_per_epoch} steps ({recipe.describe()}); training ends at "
             f"~{expected_end - STARTED:.0f}s, deadline {self.deadline - STARTED:.0f}s")
        self.record = {
            "status": "in progress",
            "command": args.call or recorded_command(sys.argv[1:], args.out),
            "model": args.model,
            "dataset": "cifar10",
            "data_note": "CIFAR-10, JPEG q75 copy of the standard splits",
            "recipe": recipe.name,
            "model_args": self.model_args,
            "recipe_description": recipe.describe(),
            "recipe_fields": dataclasses.asdict(recipe),
            "batch_size": self.batch,
            "precision": self.precision,
            "seed": args.seed,
            "steps": self.total_steps,
            "steps_per_epoch": self.steps_per_epoch,
            "epochs": round(epochs, 3),
            "epochs_asked": self.epochs_asked,
            "minutes": args.minutes,
            "device": self.device.device_kind,
            "platform": self.device.platform,
            "versions": {"jax": jax.__version__, "keras": keras.__version__,
                         "python": platform.python_version(), "numpy": np.__version__},
            "wheels_unpacked": self.wheels,
            "trial_img_per_s": round(self.steps_per_second * self.batch, 1),
            "schedule_resized": [],
        }

    # 4. training -----------------------------------------------------------------------
    def snapshot(self, level: int, status: str, extra: dict | None = None, named=None) -> None:
        """The bundle of the net as it is now (``named``: weights already on the host)."""
        from training.lease import bundle as bundle_io

        if named is None:  # the weights now on the device, copied to the host
            named = bundle_io.state_weights(self.model, self.state.trainable,
                                            self.state.non_trainable)
        record = {**self.record, "status": status, "steps_done": self.done,
                  "phases": dict(self.phases), **(extra or {})}
        write = bundle_io.write_packed_bundle if self.args.pack else bundle_io.write_bundle
        write(self.out, named, record, self.log_rows, level=level)

    def train(self) -> None:
        """The schedule's steps, epoch by epoch, with progress lines and periodic bundles;
        stops early at a non-finite training loss."""
        import jax

        from training.lease.device_step import epoch_order

        self.t_train = time.time()
        self.log_rows: list[dict] = []
        self.done, self.bad, epoch = 0, False, 0
        self.last_print = last_snapshot = time.time()
        while self.done < self.total_steps and not self.bad:
            order = epoch_order(jax.random.fold_in(self.key, epoch), self.num_train, self.batch)
            epoch_start = time.time()
            for i in range(min(self.steps_per_epoch, self.total_steps - self.done)):
                if self.done >= self.total_steps:  # the schedule was shortened in this epoch
                    break
                self.state = self.step(self.state, self.images, self.labels, order[i], self.key,
                                       self.total_steps)
                self.done += 1
                if time.time() - self.last_print >= PROGRESS_SECONDS:
                    self.progress(epoch)
            epoch += 1
            self.end_epoch(epoch, epoch_start)
            if (time.time() - last_snapshot >= 60.0 * self.args.snapshot_minutes
                    and self.done < self.total_steps):
                self.snapshot(1, "in progress")
                last_snapshot = time.time()
        jax.block_until_ready(self.state.metrics)
        self.phases["train_s"] = time.time() - self.t_train
        self.train_rate = self.done * self.batch / self.phases["train_s"]
        _say(f"trained {self.done} steps ({self.done / self.steps_per_epoch:.2f} epochs) in "
             f"{self.phases['train_s']:.0f}s, {self.train_rate:.0f} img/s")

    def progress(self, epoch: int) -> None:
        """One progress line; early in the run (the warm-up), the schedule's length may
        still follow the measured rate, if the trial steps misjudged it by over 3 %."""
        import jax

        jax.block_until_ready(self.state.metrics)
        now = time.time()
        done, total = self.done, self.total_steps
        rate = done * self.batch / (now - self.t_train)
        eta = self.t_train + total * (now - self.t_train) / done
        _say(f"epoch {epoch + 1} step {done}/{total} {rate:.0f} img/s, elapsed "
             f"{now - STARTED:.0f}s, expected end of training {eta - STARTED:.0f}s")
        self.last_print = now
        if done >= 0.1 * total:
            return
        resized = self.steps_that_fit(now, done / (now - self.t_train)) + done
        if abs(resized - total) > 0.03 * total:
            _say(f"schedule resized from {total} to {resized} steps at the measured rate")
            self.record["schedule_resized"].append({"at_step": done, "from": total, "to": resized})
            self.total_steps = resized
            self.record["steps"] = resized
            self.record["epochs"] = round(resized / self.steps_per_epoch, 3)

    def end_epoch(self, epoch: int, epoch_start: float) -> None:
        """The epoch's row of ``log.csv`` from the metrics summed on the device."""
        import jax.numpy as jnp

        loss_sum, correct, seen, nonfinite = (float(v) for v in self.state.metrics)
        self.state.metrics = jnp.zeros_like(self.state.metrics)
        now = time.time()
        lr = float(learning_rate_fn(self.recipe)(jnp.float32(self.done - 1),
                                                 jnp.float32(self.total_steps)))
        self.log_rows.append({
            "epoch": epoch, "steps": self.done, "lr_last": f"{lr:.6g}",
            "loss": f"{loss_sum / max(seen, 1):.5f}",
            "accuracy": f"{correct / max(seen, 1):.5f}",
            "epoch_s": f"{now - epoch_start:.2f}", "elapsed_s": f"{now - STARTED:.1f}",
        })
        if nonfinite:
            self.bad = True
            _say(f"non-finite training loss in epoch {epoch}: stopping")

    # 5. evaluation on the bfloat16-rounded weights, and the bundle ---------------------
    def evaluate_and_write(self) -> int:
        """The test split in float32 on the weights rounded to bfloat16 (and at the
        training precision), then the final bundle; 0 when the run finished and its
        test accuracy is finite."""
        import jax
        import jax.numpy as jnp
        import numpy as np

        from training.lease import bundle as bundle_io
        from training.lease.device_step import TrainState, evaluate

        t3 = time.time()
        named = bundle_io.state_weights(self.model, self.state.trainable, self.state.non_trainable)
        rounded = {p: (bundle_io.to_bfloat16(v).astype(np.float32) if low else v)
                   for p, v, low in named}
        f32_trainable = [jnp.asarray(rounded[v.path]) for v in self.eval_model.trainable_variables]
        f32_non_trainable = [jnp.asarray(rounded[v.path]) if v.path in rounded else v.value
                             for v in self.eval_model.non_trainable_variables]
        with jax.default_matmul_precision("float32"):
            result = evaluate(self.predict_f32, TrainState(f32_trainable, f32_non_trainable, [], None),
                              self.test_images, self.test_labels, self.batch)
        if self.precision == "float32":  # the same computation: measured once
            result_low = result
        else:
            low_trainable = [jnp.asarray(rounded[v.path], v.value.dtype)
                             for v in self.model.trainable_variables]
            result_low = evaluate(self.predict_low,
                                  TrainState(low_trainable, self.state.non_trainable, [], None),
                                  self.test_images, self.test_labels, self.batch)
        self.phases["evaluate_s"] = time.time() - t3
        finished = self.done == self.total_steps and not self.bad
        ok = finished and result["finite"] and math.isfinite(result["loss"])
        final = {
            "status": "finished" if finished else "stopped: non-finite training loss",
            "steps_done": self.done,
            "epochs_done": round(self.done / self.steps_per_epoch, 3),
            "train_img_per_s": round(self.train_rate, 1),
            "test_accuracy": result["accuracy"],
            "test_loss": result["loss"],
            "test_accuracy_note": "float32 compute on the bfloat16-rounded weights the bundle holds",
            f"test_accuracy_{self.precision}": result_low["accuracy"],
            "train_accuracy_last_epoch": (float(self.log_rows[-1]["accuracy"])
                                          if self.log_rows else None),
        }
        self.phases["total_s_before_bundle"] = time.time() - STARTED
        final["training_ended_before_deadline"] = (self.t_train + self.phases["train_s"]
                                                   <= self.deadline)
        self.snapshot(self.args.level, final["status"], {**final, "phases": self.phases},
                      named=named)
        end = time.time()
        final["ended_before_deadline"] = end <= self.deadline
        _say(f"bundle written in {end - t3 - self.phases['evaluate_s']:.1f}s; command time "
             f"{end - STARTED:.1f}s")
        _say(f"test accuracy {result['accuracy']:.4f} (float32 on the bf16 weights), "
             f"{result_low['accuracy']:.4f} ({self.precision}); bundle in {self.out}; "
             f"{'before' if final['ended_before_deadline'] else 'AFTER'} the deadline")
        return 0 if ok else 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, nargs="+",
                        help="registry name, e.g. gwrn_28_10; several: each trains in its own "
                        "process and comes back as DIR/<model>.tar")
    parser.add_argument("--dataset", default="cifar10", help="cifar10 (the carried data)")
    parser.add_argument("--minutes", type=float, required=True,
                        help="the deadline, in minutes from this command's start")
    parser.add_argument("--out", required=True, help="the bundle's folder (new, or a bundle)")
    parser.add_argument("--recipe", nargs="+", default=["wrn_cifar_budget"],
                        help="a recipe for a budget (sized to the time), or a paper recipe (its "
                        "epochs, cut to what fits); one for all nets or one per net")
    parser.add_argument("--epochs", type=float, default=None,
                        help="at most this many epochs (default: as many as fit for a budget "
                        "recipe, the recipe's own for a paper recipe)")
    parser.add_argument("--side-by-side", action="store_true",
                        help="several nets: train them at once on the accelerator, not in turn")
    parser.add_argument("--pack", action="store_true",
                        help="write the bundle as the one file --out (a .tar), not a folder")
    parser.add_argument("--model-arg", action="append", default=[], metavar="NAME=VALUE", help="a model constructor argument (repeatable), "
                        "as training.train's: batch_norm=False, k_init=0.5 (every net of the call)")
    parser.add_argument("--call", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", type=int, default=None, help="default: the recipe's")
    parser.add_argument("--precision", default=None, help="default: mixed_bfloat16 on a GPU/TPU, else float32")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=None, help="cap the sized schedule (rehearsals)")
    parser.add_argument("--reserve", type=float, default=40.0,
                        help="seconds kept for the evaluation and the bundle")
    parser.add_argument("--snapshot-minutes", type=float, default=3.0,
                        help="minutes between bundles of the net in training")
    parser.add_argument("--measure-seconds", type=float, default=3.0,
                        help="seconds of trial steps that measure the throughput")
    parser.add_argument("--level", type=int, default=9, help="zlib level of the final bundle")
    parser.add_argument("--lease-dir", default=str(LEASE_DIR), help=argparse.SUPPRESS)
