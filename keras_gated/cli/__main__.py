"""``python -m keras_gated.cli``: the ``keras-gated`` command."""

from keras_gated.cli.app import main

if __name__ == "__main__":
    raise SystemExit(main())
