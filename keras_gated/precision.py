"""Mixed precision is fast on accelerators and slow on most CPUs: a CPU without bf16/fp16
instructions emulates the half-precision arithmetic and casts at every layer. This module
tells which case applies, so that nobody walks into it silently."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import keras

MIXED_POLICIES = ("mixed_bfloat16", "mixed_float16")
# CPU flags with native half-precision arithmetic, per policy.
NATIVE_FLAGS = {"mixed_bfloat16": {"avx512_bf16", "amx_bf16"}, "mixed_float16": {"avx512_fp16", "amx_fp16"}}
# GResNet20 training, TensorFlow, batch 128, 2-core AVX2 CPU without bf16 instructions
# (python -m benchmarks.measure --impl keras --model gresnet20 --precision P [--jit-compile True]):
# with the default path (oneDNN kernels, XLA off) 32 img/s in mixed_bfloat16 against 474 in
# float32, since oneDNN has no bf16 kernels without AVX-512; with XLA 360, still slower.
MEASURED_CPU_NOTE = ("about 15x slower than float32 (32 vs 474 img/s for GResNet20 training on "
                     "a 2-core AVX2 CPU), and 0.76x of float32 even with XLA")


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    path = Path("/proc/cpuinfo")
    if not path.exists():
        return frozenset()
    for line in path.read_text().splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


@functools.lru_cache(maxsize=1)
def has_accelerator() -> bool:
    """True when the current Keras backend sees a GPU or TPU."""
    if keras.backend.backend() == "torch":
        # Keras's distribution API is not implemented for torch: ask torch itself.
        import torch

        return (torch.cuda.is_available() or (hasattr(torch, "xpu") and torch.xpu.is_available())
                or torch.backends.mps.is_available())
    try:
        devices = keras.distribution.list_devices()
    except (AttributeError, NotImplementedError, ValueError, RuntimeError):
        devices = []
    return any(("gpu" in d.lower() or "tpu" in d.lower() or "cuda" in d.lower()) for d in devices)


def cpu_runs_natively(policy: str) -> bool:
    """True when this CPU has instructions for ``policy``'s half-precision type."""
    return bool(cpu_flags() & NATIVE_FLAGS.get(policy, set()))


def slow_mixed_precision(policy: str | None = None) -> str | None:
    """A sentence when ``policy`` (default: the global one) would run emulated on this CPU."""
    policy = policy or keras.config.dtype_policy().name
    if policy not in MIXED_POLICIES or has_accelerator() or cpu_runs_natively(policy):
        return None
    return (f"{policy} on this machine runs on a CPU without {policy.split('_')[1]} instructions, "
            f"where it is emulated: {MEASURED_CPU_NOTE}; use float32 here and mixed precision "
            "on a GPU or TPU.")


_warned: set[str] = set()


def warn_if_slow_mixed_precision() -> None:
    """Warn once per policy when the global mixed-precision policy runs emulated here."""
    message = slow_mixed_precision()
    policy = keras.config.dtype_policy().name
    if message and policy not in _warned:
        _warned.add(policy)
        warnings.warn(message, UserWarning, stacklevel=3)
