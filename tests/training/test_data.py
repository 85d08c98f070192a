"""The tf.data pipeline: batching, dtype, augmentation from the recipe (train only)."""

import dataclasses

import numpy as np
import tensorflow as tf

from training.data import augment, make_pipeline
from keras_gated.recipes import get_recipe


def _ds(n=10, shape=(8, 8, 3)):
    x = np.arange(n * np.prod(shape), dtype=np.uint8).reshape(n, *shape)
    return tf.data.Dataset.from_tensor_slices((x, np.arange(n, dtype="int64"))), x


def test_eval_pipeline_is_ordered_float_and_unaugmented():
    ds, x = _ds()
    batches = list(make_pipeline(ds, get_recipe("wrn_cifar"), training=False, batch_size=4).as_numpy_iterator())
    images = np.concatenate([b[0] for b in batches])
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert images.dtype == np.float32
    np.testing.assert_array_equal(images, x.astype("float32"))


def test_train_pipeline_shuffles_and_keeps_every_example():
    ds, x = _ds(20)
    out = list(make_pipeline(ds, get_recipe("rg_mnist_fc"), training=True, batch_size=32, seed=1).as_numpy_iterator())
    labels = out[0][1]
    assert sorted(labels.tolist()) == list(range(20)) and labels.tolist() != list(range(20))


def test_reflect_pad_crop_stays_inside_the_reflected_image():
    recipe = dataclasses.replace(get_recipe("wrn_cifar"), flip=False)
    image = tf.cast(tf.reshape(tf.range(64), (8, 8, 1)), tf.float32)
    padded = tf.pad(image, [[4, 4], [4, 4], [0, 0]], mode="REFLECT").numpy()
    windows = {padded[i:i + 8, j:j + 8].tobytes() for i in range(9) for j in range(9)}
    outputs = set()
    for _ in range(20):
        out = augment(image, recipe).numpy()
        assert out.shape == (8, 8, 1) and out.tobytes() in windows
        outputs.add(out.tobytes())
    assert len(outputs) > 1  # the crop is random


def test_mean_padding_fills_the_border_with_the_normalisation_mean():
    recipe = dataclasses.replace(get_recipe("preact_cifar"), flip=False)
    assert recipe.pad_mode == "mean"
    image = tf.fill((8, 8, 3), 7.0)
    fill = [10.0, 20.0, 30.0]
    outs = [augment(image, recipe, fill).numpy() for _ in range(20)]
    values = {tuple(px) for out in outs for px in out.reshape(-1, 3).tolist()}
    assert values <= {(7.0, 7.0, 7.0), (10.0, 20.0, 30.0)} and (10.0, 20.0, 30.0) in values


def test_normalisation_mean_is_read_from_the_model():
    import keras_gated as kg
    from training.data import normalisation_mean

    np.testing.assert_allclose(normalisation_mean(kg.GResNet(8)), [125.3, 123.0, 113.9], rtol=1e-6)
    assert normalisation_mean(kg.PlainNet(2)) == 0.0


def test_flip_only():
    recipe = dataclasses.replace(get_recipe("wrn_cifar"), pad=0)
    image = tf.cast(tf.reshape(tf.range(6), (1, 6, 1)), tf.float32)
    seen = {augment(image, recipe).numpy().ravel().tolist()[0] for _ in range(30)}
    assert seen == {0, 5}


def test_batch_augmentation_crops_and_flips_each_image_on_its_own():
    recipe = dataclasses.replace(get_recipe("wrn_cifar"), pad_mode="constant")
    images = tf.random.uniform((32, 6, 6, 1), 1, 255, seed=0)
    padded = tf.pad(images, [[0, 0], [4, 4], [4, 4], [0, 0]]).numpy()
    out = augment(images, recipe).numpy()
    assert out.shape == (32, 6, 6, 1)
    placements = set()
    for i in range(32):
        windows = {(a, b, flip): padded[i, a:a + 6, b:b + 6][:, ::-1 if flip else 1]
                   for a in range(9) for b in range(9) for flip in (False, True)}
        found = [key for key, window in windows.items() if np.array_equal(window, out[i])]
        assert found, f"image {i} is no crop of its own padded image"
        placements.add(found[0])
    assert len(placements) > 8 and {flip for _, _, flip in placements} == {False, True}
