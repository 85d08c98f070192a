"""``evaluate`` of a run's own files: a run's ``.keras`` file trained on other input shapes, and
a save folder's model built on its recorded input shape."""

from __future__ import annotations



from keras_gated import cli
from tests.support.helpers import assert_one_clear_sentence, last_line


def test_evaluate_takes_a_run_s_keras_file_trained_on_other_input_shapes(finished_run,
                                                                           capsys):
    dataset = str(finished_run.parent / "rgb")
    assert cli.main(["evaluate", "gresnetfc2", "--weights", str(finished_run / "last.keras"),
                     "--dataset", dataset]) == 0
    assert "test accuracy:" in capsys.readouterr().out
    assert cli.main(["evaluate", "gresnet20", "--weights", str(finished_run / "last.keras"),
                     "--dataset", dataset]) == 2
    assert_one_clear_sentence(last_line(capsys), "'gresnetfc2'", "not 'gresnet20'")


def test_evaluate_builds_a_save_folder_s_model_on_its_recorded_input_shape(finished_run,
                                                                            tmp_path, capsys):
    import keras

    from keras_gated.convert import save_folder

    folder = save_folder(keras.saving.load_model(finished_run / "last.keras", compile=False),
                         tmp_path / "saved")
    assert cli.main(["evaluate", "gresnetfc2", "--weights", str(folder),
                     "--dataset", str(finished_run.parent / "rgb")]) == 0
    assert "test accuracy:" in capsys.readouterr().out


def test_evaluate_takes_a_variant_of_the_registered_model_and_no_other(tmp_path, capsys):
    """A model the registered constructor built with other arguments keeps the name with a
    suffix (``resnetfc2_preact``, ``resnetfc2_w20``): evaluated as the registered model; a
    model of another name is still refused."""
    import keras_gated as kg
    from tests.support.helpers import make_image_folder

    data = make_image_folder(tmp_path / "tiny", per_class=(2, 4), classes=10)
    for model in (kg.ResNetFC(2, preactivation=True), kg.ResNetFC(2, units=20)):
        path = tmp_path / f"{model.name}.keras"
        model.save(path)
        assert cli.main(["evaluate", "resnetfc2", "--weights", str(path), "--dataset",
                         str(data)]) == 0, model.name
        assert "test accuracy:" in capsys.readouterr().out
        assert cli.main(["evaluate", "gresnetfc2", "--weights", str(path), "--dataset",
                         str(data)]) == 2
        assert_one_clear_sentence(last_line(capsys), f"'{model.name}'", "not 'gresnetfc2'")
