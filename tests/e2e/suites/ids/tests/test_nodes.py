"""pytest names of every shape: module-level, class, nested class, parameters with spaces,
brackets, quotes and dots. Tests whose name holds "fails" fail."""
import pytest


def test_module_level_fails():
    assert 1 == 2


@pytest.mark.parametrize("value", ["a b", "x[1]", "it's", 1.5])
def test_param_fails(value):
    assert value is None


class TestOuter:
    def test_method_passes(self):
        assert True

    class TestInner:
        def test_nested_fails(self):
            raise AssertionError("nested")


def test_skipped():
    pytest.skip("a skip")
