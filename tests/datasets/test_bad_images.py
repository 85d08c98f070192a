"""A bad image in a data folder (not an image, or truncated), in either split, is named in one
sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from keras_gated import cli
from tests.support.helpers import assert_one_clear_sentence, last_line, make_image_folder
from training import train


# --- data -------------------------------------------------------------------------------------
def _text_jpg(path: Path) -> None:
    path.write_text("this is not an image")


def _truncated_jpg(path: Path) -> None:
    from PIL import Image

    Image.fromarray(np.zeros((28, 28), np.uint8)).save(path.with_suffix(".tmp.jpg"))
    path.write_bytes(path.with_suffix(".tmp.jpg").read_bytes()[:60])
    path.with_suffix(".tmp.jpg").unlink()


@pytest.mark.parametrize("damage", [_text_jpg, _truncated_jpg])
@pytest.mark.parametrize("split", ["train", "test"])
def test_a_bad_image_in_a_data_folder_is_named(tmp_path, capsys, damage, split):
    folder = make_image_folder(tmp_path / "data", shape=(28, 28, 1), per_class=(20, 6))
    bad = folder / split / "class1" / "bad.jpg"
    damage(bad)
    out = tmp_path / "run"
    code = train.main(["--model", "gresnetfc2", "--dataset", str(folder), "--epochs", "1",
                       "--out", str(out), "--verbose", "0"])
    assert code == 2 and not out.exists()
    assert_one_clear_sentence(last_line(capsys), str(bad), "remove it")
    if split == "test":
        assert cli.main(["evaluate", "plainnet10", "--weights", "fashion_mnist",
                         "--dataset", str(folder)]) == 2
        assert_one_clear_sentence(last_line(capsys), str(bad), "remove it")
