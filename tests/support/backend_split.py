"""Which tests run on which backend, read by ``tests/conftest.py`` (and by the tests that
check a new family is covered): tests/run.sh runs the suite on TensorFlow, then on JAX."""

# tests/run.sh runs the suite on TensorFlow, then on JAX. Everything runs in the
# TensorFlow pass; the JAX pass runs only the tests whose subject is what a backend
# computes: layers and models (outputs, gradients, saving and loading weights), the
# training loop and its fast path, the lease's compiled JAX step, compression's training,
# exports. Command lines, files, cards, the Hub protocol, packaging, docs and the paper
# records do not depend on the backend and run once; so do sweeps of every registered
# model through one builder (the layers they build are checked on both backends), and the
# constructors' options, names and model methods (tests/models/test_application_api.py,
# test_gated_model.py, postact_resnet/test_postact_resnet.py: every family's forward pass and
# round trip run on both, in tests/models/test_families.py).
EVERY_BACKEND_PATHS = (
    "tests/layers/",
    "tests/models/compressed/test_compressed.py",
    "tests/models/fc_nets/test_preactivation.py",
    "tests/models/test_families.py",
    "tests/models/test_compiled_round_trip.py",
    "tests/models/test_build_refusals.py",
    "tests/models/test_predict_shapes.py",
    "tests/models/test_mixed_precision.py",
    "tests/training/test_data.py",
    "tests/training/test_distribute.py",
    "tests/training/test_fast_path.py",
    "tests/training/test_finetune.py",
    "tests/training/lease/test_lease.py",
    "tests/training/test_loop.py",
    "tests/training/test_losses.py",
    "tests/training/test_nan_watch.py",
    "tests/training/test_time_limit.py",
    "tests/training/test_train_cli.py",
    "tests/training/test_weight_decay.py",
    "tests/analysis/test_compress.py",  # compression trains under a penalty through fit
    "tests/training/test_phases.py",  # compression's phases resume through the loop
    "tests/training/test_distill.py",  # a Keras Distiller trains through fit
    "tests/export/test_export.py",
    "tests/export/test_keras_onnx_export.py",
    "tests/keras_hub/test_backbone_and_presets.py",
    "tests/weights/test_bfloat16_weights.py",
    "tests/weights/test_load_flow.py",
    "tests/weights/test_sharded_weights.py",
    "tests/weights/test_weights.py",
    "tests/test_features.py",
    "tests/test_gating.py",
)
# Tests in those paths that still run once: the full test-split evaluations of released
# checkpoints (every backend computes the same outputs to 1e-6, which the JAX pass checks
# on one of them, kept below), every registered model's initial kernels and the
# flagship's (seeds drawn by Python's seeded ``random``; GResNet-20's stay in every pass),
# and a large bundle's size; then what the constructors and their configs decide
# (signatures, names, options, block choice, shapes, k's initial value and its round trip,
# a reload in a fresh process), which is Python the backend does not enter: each
# family's forward pass and round trip stay in every pass (tests/models/test_families.py's
# other tests).
ONCE_TESTS = (
    "test_released_accuracy_is_reproduced[",
    "test_no_two_same_shaped_kernels_of_a_fresh_model_are_equal[",
    "test_the_flagship_starts_from_independent_kernels",
    "test_the_flagship_bundle_fits_what_a_call_brings_back",
    "test_the_flagship_is_released_sharded_in_bfloat16_with_its_lease_record",
    "test_signature_defaults_are_what_the_model_gets[",
    "test_default_names_are_registry_names",
    "test_block_choice_by_depth",
    "test_constructor_options_forward_and_round_trip[",
    "test_feature_maps_have_the_stage_strides_and_widths[",
    "test_every_k_starts_at_k_init[",
    "test_k_init_is_recorded_and_survives_a_round_trip",
    "test_a_reloaded_model_keeps_its_methods_in_a_fresh_process[",
    "test_shapes[",
    # keras-hub's own training and a generic classifier's round trip (its preset round
    # trip stays in every pass)
    "test_image_classifier_trains_on_a_gated_backbone",
    "test_a_generic_image_classifier_round_trips_with_its_head",
)
EVERY_BACKEND = ("test_released_accuracy_is_reproduced[gresnetfc10.fashion_mnist]",)
ONCE_BACKEND = "tensorflow"
# Sweeps of one behaviour over every release or family: the default run checks the
# representatives named here, `-m slow` the rest (tests/run.sh -m slow).
SWEEP_REPRESENTATIVES = {
    "test_released_accuracy_is_reproduced": ("gresnet20.cifar10", "gresnetfc10.fashion_mnist"),
    "test_pretrained_true_loads_the_backbone_with_a_new_head": ("gresnet20", "gresnetfc10"),
    "test_a_reloaded_model_keeps_its_methods_in_a_fresh_process": ("gresnet20.cifar10",),
}
