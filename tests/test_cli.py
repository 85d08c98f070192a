"""The keras-gated command line."""

from keras_gated.cli import main


def test_list_prints_names_with_descriptions(capsys):
    assert main(["list", "gwrn_28_*"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("gwrn_28_10") and "Gated WRN-28-10" in out[0]


def test_info_counts_parameters(capsys):
    assert main(["info", "gresnetfc10", "--params"]) == 0
    out = capsys.readouterr().out
    expected = 784 * 50 + 50 + 10 * (50 * 50 + 100) + 5 + 510
    assert f"trainable parameters: {expected:,}" in out


def test_unknown_name_exits_2_with_suggestion(capsys):
    assert main(["info", "gresnet21"]) == 2
    assert "gresnet20" in capsys.readouterr().err
