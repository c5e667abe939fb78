import pytest

from conftest import config_line, made_where


@pytest.mark.warm_e2e
def test_prints_its_configuration_a(request, capsys):
    # Straight to the log: the runner's -ra keeps no passing test's captured output.
    with capsys.disabled():
        print("\nconfig", config_line(request.config))
        print("made", made_where(request.config))
