"""Speed and memory of keras-gated models, with a plain-PyTorch peer measured in the same run.

    python -m benchmarks.run --quick        # GResNet20, a few minutes
    python -m benchmarks.run                # every family at its reference size
"""
