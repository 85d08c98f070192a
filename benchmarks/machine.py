"""What this machine can do at most: the fp32 FLOP limit of its CPU, from /proc/cpuinfo,
and which GPU (if any) the benchmarks will run on."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CpuPeak:
    """fp32 peak = cores × FMA units × SIMD lanes × 2 FLOPs per FMA × clock."""

    model: str
    cores: int
    fma_units: int
    lanes: int
    ghz: float

    @property
    def gflops(self) -> float:
        return self.cores * self.fma_units * self.lanes * 2 * self.ghz

    def formula(self) -> str:
        return (f"{self.cores} cores × {self.fma_units} FMA units × {self.lanes} fp32 lanes × "
                f"2 FLOPs/FMA × {self.ghz:.2f} GHz = {self.gflops:.0f} GFLOP/s")


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    path = Path("/proc/cpuinfo")
    if path.exists():
        for line in path.read_text().splitlines():
            if ":" in line:
                key, value = (part.strip() for part in line.split(":", 1))
                info.setdefault(key, value)
    return info


def cpu_peak(cores: int | None = None, ghz: float | None = None) -> CpuPeak:
    """Detect the CPU's fp32 peak (AVX-512: 16 lanes, AVX2: 8, else SSE: 4; two FMA units)."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    fma_units = 2 if "fma" in flags else 1
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
    if ghz is None:
        ghz = float(info.get("cpu MHz", 0) or 0) / 1000 or 2.0
    return CpuPeak(info.get("model name", platform.processor() or "unknown CPU"), cores, fma_units, lanes, ghz)



def sgemm_gflops(n: int = 2048, repeats: int = 5) -> float:
    """The fp32 rate a large matrix multiply reaches here (numpy's BLAS, all cores, best of
    ``repeats``): what the CPU sustains in practice, above ``cpu_peak`` when it runs faster
    than the clock ``/proc/cpuinfo`` reports."""
    import time

    import numpy as np

    a = np.random.default_rng(0).random((n, n), dtype=np.float32)
    a @ a  # BLAS start-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def gpu_name() -> str | None:
    """The first NVIDIA GPU's name, from ``nvidia-smi`` (no framework is initialised here, so
    the process that asks holds no GPU memory), or None without one."""
    executable = shutil.which("nvidia-smi")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if executable is None or visible in ("", "-1"):
        return None
    command = [executable, "--query-gpu=name", "--format=csv,noheader"]
    if visible:  # the first GPU the frameworks will see (an index or a UUID)
        command += ["-i", visible.split(",")[0].strip()]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return names[0] if done.returncode == 0 and names else None
