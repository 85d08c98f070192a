"""The input pipeline on both engines (tf.data, numpy): batching, dtype, augmentation
from the recipe (train only), a deterministic epoch order per seed, and the same
augmentation distribution (crop offsets uniform over the 9x9 positions, flip rate 1/2)."""

import dataclasses

import numpy as np
import pytest

from keras_gated.training.numpy_engine import ArraySource, NumpyBatches
from keras_gated.training.pipeline import load_split, make_pipeline, random_subset
from keras_gated.training.recipes import get_recipe
from keras_gated.training.tf_augment import augment
from keras_gated.training.transforms import Transforms, augment_batch, pad_batch
from tests.support.helpers import needs_tensorflow, tensorflow_installed

if tensorflow_installed():
    import tensorflow as tf


def _train_transforms(recipe, fill=0.0):
    """The training pipeline's ``Transforms`` of ``recipe`` (what ``make_pipeline`` runs)."""
    return Transforms.from_recipe(recipe, training=True, batch_size=1, pad_fill=fill)


def _ds(n=10, shape=(8, 8, 3)):
    x = np.arange(n * np.prod(shape), dtype=np.uint8).reshape(n, *shape)
    return tf.data.Dataset.from_tensor_slices((x, np.arange(n, dtype="int64"))), x


@needs_tensorflow
def test_eval_pipeline_is_ordered_float_and_unaugmented():
    ds, x = _ds()
    batches = list(make_pipeline(ds, get_recipe("wrn_cifar"), training=False, batch_size=4).as_numpy_iterator())
    images = np.concatenate([b[0] for b in batches])
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert images.dtype == np.float32
    np.testing.assert_array_equal(images, x.astype("float32"))


@needs_tensorflow
def test_train_pipeline_shuffles_and_keeps_every_example():
    ds, x = _ds(20)
    out = list(make_pipeline(ds, get_recipe("rg_mnist_fc"), training=True, batch_size=32, seed=1).as_numpy_iterator())
    labels = out[0][1]
    assert sorted(labels.tolist()) == list(range(20)) and labels.tolist() != list(range(20))


@needs_tensorflow
def test_reflect_pad_crop_stays_inside_the_reflected_image():
    recipe = dataclasses.replace(get_recipe("wrn_cifar"), flip=False)
    image = tf.cast(tf.reshape(tf.range(64), (8, 8, 1)), tf.float32)
    padded = tf.pad(image, [[4, 4], [4, 4], [0, 0]], mode="REFLECT").numpy()
    windows = {padded[i:i + 8, j:j + 8].tobytes() for i in range(9) for j in range(9)}
    outputs = set()
    for _ in range(20):
        out = augment(image, _train_transforms(recipe)).numpy()
        assert out.shape == (8, 8, 1) and out.tobytes() in windows
        outputs.add(out.tobytes())
    assert len(outputs) > 1  # the crop is random


@needs_tensorflow
def test_mean_padding_fills_the_border_with_the_normalisation_mean():
    recipe = dataclasses.replace(get_recipe("preact_cifar"), flip=False)
    assert recipe.pad_mode == "mean"
    image = tf.fill((8, 8, 3), 7.0)
    fill = [10.0, 20.0, 30.0]
    outs = [augment(image, _train_transforms(recipe, fill)).numpy() for _ in range(20)]
    values = {tuple(px) for out in outs for px in out.reshape(-1, 3).tolist()}
    assert values <= {(7.0, 7.0, 7.0), (10.0, 20.0, 30.0)} and (10.0, 20.0, 30.0) in values


def test_normalisation_mean_is_read_from_the_model():
    import keras_gated as kg
    from keras_gated.training.pipeline import normalisation_mean

    np.testing.assert_allclose(normalisation_mean(kg.GResNet(8)), [125.3, 123.0, 113.9], rtol=1e-6)
    assert normalisation_mean(kg.PlainNet(2)) == 0.0


@needs_tensorflow
def test_flip_only():
    recipe = dataclasses.replace(get_recipe("wrn_cifar"), pad=0)
    image = tf.cast(tf.reshape(tf.range(6), (1, 6, 1)), tf.float32)
    seen = {augment(image, _train_transforms(recipe)).numpy().ravel().tolist()[0] for _ in range(30)}
    assert seen == {0, 5}


@needs_tensorflow
def test_batch_augmentation_crops_and_flips_each_image_on_its_own():
    recipe = dataclasses.replace(get_recipe("wrn_cifar"), pad_mode="constant")
    images = tf.random.uniform((32, 6, 6, 1), 1, 255, seed=0)
    padded = tf.pad(images, [[0, 0], [4, 4], [4, 4], [0, 0]]).numpy()
    out = augment(images, _train_transforms(recipe)).numpy()
    assert out.shape == (32, 6, 6, 1)
    placements = set()
    for i in range(32):
        windows = {(a, b, flip): padded[i, a:a + 6, b:b + 6][:, ::-1 if flip else 1]
                   for a in range(9) for b in range(9) for flip in (False, True)}
        found = [key for key, window in windows.items() if np.array_equal(window, out[i])]
        assert found, f"image {i} is no crop of its own padded image"
        placements.add(found[0])
    assert len(placements) > 8 and {flip for _, _, flip in placements} == {False, True}


# --- the numpy engine ---------------------------------------------------------------------
def _source(n=10, shape=(8, 8, 3)):
    x = np.arange(n * np.prod(shape), dtype=np.uint8).reshape(n, *shape)
    return ArraySource(x, np.arange(n, dtype="int64")), x


def test_numpy_eval_pipeline_is_ordered_float_and_unaugmented():
    source, x = _source()
    batches = make_pipeline(source, get_recipe("wrn_cifar"), training=False, batch_size=4)
    assert isinstance(batches, NumpyBatches) and len(batches) == 3
    images = np.concatenate([batches[i][0] for i in range(len(batches))])
    assert [len(batches[i][1]) for i in range(3)] == [4, 4, 2] and images.dtype == np.float32
    np.testing.assert_array_equal(images, x.astype("float32"))


def _epoch_labels(batches):
    return np.concatenate([batches[i][1] for i in range(len(batches))]).tolist()


def test_numpy_epoch_order_is_deterministic_per_seed_and_new_each_epoch():
    source, _ = _source(40)
    recipe = get_recipe("rg_mnist_fc")

    def pipeline(seed):
        return make_pipeline(source, recipe, training=True, batch_size=16, seed=seed)

    first, again, other = pipeline(3), pipeline(3), pipeline(4)
    epoch0 = _epoch_labels(first)
    assert sorted(epoch0) == list(range(40)) and epoch0 != list(range(40))
    assert _epoch_labels(again) == epoch0 and _epoch_labels(other) != epoch0
    first.on_epoch_end()
    epoch1 = _epoch_labels(first)
    assert sorted(epoch1) == list(range(40)) and epoch1 != epoch0
    resumed = pipeline(3)
    resumed.set_epoch(1)  # a run resumed at epoch 1 sees the batches of epoch 1
    assert _epoch_labels(resumed) == epoch1


def test_tf_epochs_are_a_function_of_the_seed_and_the_epoch():
    """The tf engine's epoch e (order, crops, flips) is the same whether a pipeline
    reaches it after epochs 0 .. e-1 or starts there (a resumed run), and differs from
    the epochs before it."""
    tf = pytest.importorskip("tensorflow", reason="the tf.data engine needs TensorFlow")
    from keras_gated.training.tf_epochs import SeededEpochs

    x = np.random.default_rng(0).integers(0, 256, (40, 8, 8, 3), dtype=np.uint8)
    ds = tf.data.Dataset.from_tensor_slices((x, np.arange(40, dtype="int64")))
    recipe = get_recipe("wrn_cifar")  # pad 4 (reflect), random crop, flip

    def pipeline(seed=3):
        return make_pipeline(ds, recipe, training=True, batch_size=16, num_examples=40, seed=seed)

    continuous = pipeline()
    assert isinstance(continuous, SeededEpochs) and continuous.steps_per_epoch == 3
    batches = list(continuous.from_epoch(0, 3).as_numpy_iterator())
    assert len(batches) == 9
    epochs = [batches[i:i + 3] for i in (0, 3, 6)]
    labels = [np.concatenate([b[1] for b in epoch]).tolist() for epoch in epochs]
    assert all(sorted(order) == list(range(40)) for order in labels)
    assert labels[0] != labels[1] != labels[2]
    resumed = list(pipeline().from_epoch(2).as_numpy_iterator())
    for (images, ys), (again, ys_again) in zip(epochs[2], resumed):
        np.testing.assert_array_equal(ys, ys_again)
        np.testing.assert_array_equal(images, again)  # the same crops and flips
    other_seed = np.concatenate([b[1] for b in pipeline(4).from_epoch(2).as_numpy_iterator()])
    assert other_seed.tolist() != labels[2]
    tf.random.set_seed(0)  # a run's --seed 0 sets TensorFlow's global seed to 0
    try:
        zero = [np.concatenate([b[1] for b in pipeline(0).from_epoch(e).as_numpy_iterator()])
                for e in (0, 1)]
    finally:
        tf.random.set_seed(None)
    assert zero[0].tolist() != zero[1].tolist()
    # Iterating the object gives the epoch it was set to, as one tf.data pass.
    resumed_object = pipeline()
    resumed_object.set_epoch(2)
    assert np.concatenate([y for _, y in resumed_object]).tolist() == labels[2]


def test_numpy_batches_are_the_same_whatever_order_they_are_made_in():
    source, _ = _source(64)
    pipeline = make_pipeline(source, get_recipe("wrn_cifar"), training=True, batch_size=16, seed=0)
    forward = [pipeline[i][0] for i in range(len(pipeline))]
    backward = [pipeline[i][0] for i in reversed(range(len(pipeline)))][::-1]
    for a, b in zip(forward, backward):
        np.testing.assert_array_equal(a, b)


class _LabelRecorder:
    """A tiny model run eagerly whose ``train_step`` writes down the labels it is fed."""

    def __new__(cls):
        import keras

        class Recording(keras.Sequential):
            seen: list

            def train_step(self, *args):  # (data), or (state, data) on JAX
                self.seen.append(np.asarray(keras.ops.convert_to_numpy(args[-1][1])).tolist())
                logs = {"batches": keras.ops.convert_to_tensor(float(len(self.seen)))}
                return (logs, args[0]) if len(args) == 2 else logs

        model = Recording([keras.Input((8, 8, 3)), keras.layers.Flatten(), keras.layers.Dense(2)])
        model.seen = []
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", run_eagerly=True)
        return model


@pytest.mark.parametrize("workers", [0, 2])
def test_fit_sees_each_epochs_batches_in_order_even_after_an_abandoned_iteration(workers):
    """Keras (on JAX and PyTorch) reads one batch to build an unbuilt model, then starts
    the epoch again; and a run stopped mid-epoch abandons what was read ahead. Either
    way ``fit`` must see every epoch's batches exactly in that epoch's order."""
    from keras_gated.training.callbacks import DataEpoch

    source, _ = _source(40)
    pipeline = NumpyBatches(source, Transforms(8, shuffle=True, seed=5), workers=workers)
    pipeline[0], pipeline[1]  # an abandoned read-ahead: batches 0..4 of epoch 0 were made
    model = _LabelRecorder()
    model.fit(pipeline, epochs=2, verbose=0, shuffle=False, callbacks=[DataEpoch(pipeline)])
    expected = NumpyBatches(source, Transforms(8, shuffle=True, seed=5), workers=0)
    epochs = []
    for epoch in range(2):
        expected.set_epoch(epoch)
        epochs += [expected[i][1].tolist() for i in range(len(expected))]
    assert model.seen[-10:] == epochs  # the last two epochs' 5 batches each, in order


def test_numpy_mean_and_reflect_padding():
    image = np.full((1, 8, 8, 3), 7.0, np.float32)
    mean = Transforms(1, pad=4, pad_mode="mean", fill=(10.0, 20.0, 30.0))
    padded = pad_batch(image, mean)
    assert padded.shape == (1, 16, 16, 3)
    np.testing.assert_array_equal(padded[0, 0, 0], [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(padded[0, 4:12, 4:12], image[0])
    ramp = np.arange(64, dtype=np.float32).reshape(1, 8, 8, 1)
    reflected = pad_batch(ramp, Transforms(1, pad=4, pad_mode="reflect"))
    np.testing.assert_array_equal(reflected[0, 4, :4, 0], ramp[0, 0, 4:0:-1, 0])


@needs_tensorflow
def test_numpy_padding_equals_tensorflow_padding():
    images = np.random.default_rng(0).uniform(0, 255, (2, 6, 6, 3)).astype("float32")
    for mode, tf_mode in (("reflect", "REFLECT"), ("constant", "CONSTANT")):
        expected = tf.pad(images, [[0, 0], [4, 4], [4, 4], [0, 0]], mode=tf_mode).numpy()
        np.testing.assert_array_equal(pad_batch(images, Transforms(1, pad=4, pad_mode=mode)), expected)


def test_split_and_subset_work_on_the_numpy_source():
    source, x = _source(10)
    assert len(source.take(7)) == 7 and source.skip(7).labels.tolist() == [7, 8, 9]
    subset = random_subset(source, 10, 4, seed=0)
    assert len(subset) == 4 and subset.labels.tolist() == random_subset(source, 10, 4, 0).labels.tolist()
    with pytest.raises(ValueError):
        random_subset(source, 10, 11, seed=0)


def test_load_split_gives_the_numpy_engine_an_array_source(tmp_path):
    from tests.support.helpers import make_image_folder

    folder = make_image_folder(tmp_path / "f", per_class=(3, 2))
    source, info = load_split(str(folder), "train", "numpy")
    assert isinstance(source, ArraySource) and len(source) == info.num_examples == 6
    with pytest.raises(ValueError, match="Unknown data engine"):
        load_split(str(folder), "train", "grain")


# --- the same augmentation distribution on both engines ----------------------------------
# chi2.ppf(0.999, 80): 80 degrees of freedom for the 81 crop positions.
CHI2_80_999 = 124.84
SAMPLES = 4050  # 50 per crop position


def _placements(out: np.ndarray, image: np.ndarray, pad: int = 4):
    """(top, left, flipped) of each augmented image of ``out``, found among the windows of
    the zero-padded ``image`` (its pixels are all different and non-zero)."""
    size = image.shape[0]
    padded = np.pad(image, ((pad, pad), (pad, pad)))
    windows = {}
    for a in range(2 * pad + 1):
        for b in range(2 * pad + 1):
            window = padded[a:a + size, b:b + size]
            windows[window.tobytes()] = (a, b, False)
            windows[window[:, ::-1].copy().tobytes()] = (a, b, True)
    return [windows[o.tobytes()] for o in out]


def _check_distribution(placements):
    counts = np.zeros((9, 9))
    for a, b, _ in placements:
        counts[a, b] += 1
    expected = len(placements) / 81
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < CHI2_80_999, f"crop offsets not uniform over 9x9: chi2 {chi2:.1f}"
    flips = np.mean([flipped for _, _, flipped in placements])
    sigma = 0.5 / np.sqrt(len(placements))
    assert abs(flips - 0.5) < 4 * sigma, f"flip rate {flips:.3f}"


def _constant_recipe():
    return dataclasses.replace(get_recipe("wrn_cifar"), pad=4, pad_mode="constant", flip=True)


IMAGE = (np.arange(64, dtype=np.float32) + 1).reshape(8, 8)


def test_numpy_engine_crops_uniformly_and_flips_half():
    source = ArraySource(np.broadcast_to(IMAGE.astype(np.uint8)[None, ..., None], (SAMPLES, 8, 8, 1)).copy(),
                         np.zeros(SAMPLES, np.int64))
    batches = make_pipeline(source, _constant_recipe(), training=True, batch_size=512, seed=0)
    out = np.concatenate([batches[i][0] for i in range(len(batches))])[..., 0]
    _check_distribution(_placements(out, IMAGE))


@needs_tensorflow
def test_tf_engine_crops_uniformly_and_flips_half():
    images = np.broadcast_to(IMAGE.astype(np.uint8)[None, ..., None], (SAMPLES, 8, 8, 1)).copy()
    ds = tf.data.Dataset.from_tensor_slices((images, np.zeros(SAMPLES, np.int64)))
    batches = make_pipeline(ds, _constant_recipe(), training=True, batch_size=512, seed=0)
    out = np.concatenate([x for x, _ in batches.as_numpy_iterator()])[..., 0]
    _check_distribution(_placements(out, IMAGE))


@needs_tensorflow
def test_tf_engine_epoch_order_is_deterministic_per_seed():
    ds, _ = _ds(40)

    def first_epoch(seed):
        pipeline = make_pipeline(ds, get_recipe("rg_mnist_fc"), training=True, batch_size=16, seed=seed)
        return np.concatenate([y for _, y in pipeline.as_numpy_iterator()]).tolist()

    assert first_epoch(3) == first_epoch(3) != first_epoch(4)


def test_augment_batch_draws_from_the_generator_it_is_given():
    images = np.random.default_rng(0).uniform(0, 255, (16, 8, 8, 3)).astype("float32")
    transforms = Transforms(16, pad=4, flip=True)
    one = augment_batch(images, transforms, np.random.default_rng(7))
    np.testing.assert_array_equal(one, augment_batch(images, transforms, np.random.default_rng(7)))
    assert not np.array_equal(one, augment_batch(images, transforms, np.random.default_rng(8)))
