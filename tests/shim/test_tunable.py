"""torch.cuda.tunable (TunableOp) while masquerading: settings kept, nothing tuned
(devshim/tunable.py)."""
import pytest

torch = pytest.importorskip("torch")
from conftest import active_shim, cpu_only  # noqa: E402
from devshim import record  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def test_settings_start_at_torchs_defaults_and_keep_what_is_set(shim):
    t = torch.cuda.tunable
    assert (t.is_enabled(), t.tuning_is_enabled(), t.record_untuned_is_enabled()) == (
        False, True, False)
    assert (t.get_max_tuning_duration(), t.get_max_tuning_iterations()) == (30, 100)
    assert t.get_filename() == "tunableop_results.csv"
    t.enable(True)
    t.tuning_enable(False)
    t.record_untuned_enable()
    t.set_max_tuning_duration(5)
    t.set_max_tuning_iterations(7)
    t.set_rotating_buffer_size(2)
    t.set_numerical_check_tolerances(True, 1e-3, 1e-3)
    assert (t.is_enabled(), t.tuning_is_enabled(), t.record_untuned_is_enabled()) == (
        True, False, True)
    assert (t.get_max_tuning_duration(), t.get_max_tuning_iterations()) == (5, 7)
    assert t.get_rotating_buffer_size() == 2048  # set in MB, read in KB, as torch's
    t.set_filename("results.csv", insert_device_ordinal=True)
    assert t.get_filename() == "results0.csv"
    assert "torch.cuda.tunable.enable" in {r["api"] for r in record.rows()}


def test_nothing_is_tuned(shim, tmp_path):
    t = torch.cuda.tunable
    t.enable()
    a = torch.randn(3, 4, device="cuda")
    assert torch.equal(a @ a.T, a.cpu() @ a.cpu().T)
    assert t.get_results() == () and t.get_validators() == ()
    assert t.read_file(str(tmp_path / "missing.csv")) is False
    for name in ("tune_gemm_in_file", "mgpu_tune_gemm_in_file"):
        with pytest.raises(NotImplementedError,
                           match=r"^devshim: TunableOp GEMM tuning "
                                 rf"\(torch\.cuda\.tunable\.{name}\) has no equivalent on cpu$"):
            getattr(t, name)("tunableop_untuned0.csv")


def test_the_environment_sets_the_defaults_of_each_activation(clean_env):
    clean_env.setenv("PYTORCH_TUNABLEOP_ENABLED", "1")
    clean_env.setenv("PYTORCH_TUNABLEOP_MAX_TUNING_ITERATIONS", "3")
    clean_env.setenv("PYTORCH_TUNABLEOP_FILENAME", "mine.csv")
    for _ in active_shim():
        assert torch.cuda.tunable.is_enabled()
        assert torch.cuda.tunable.get_max_tuning_iterations() == 3
        assert torch.cuda.tunable.get_filename() == "mine.csv"
        torch.cuda.tunable.enable(False)
    clean_env.delenv("PYTORCH_TUNABLEOP_ENABLED")
    clean_env.delenv("PYTORCH_TUNABLEOP_FILENAME")
    for _ in active_shim():
        assert not torch.cuda.tunable.is_enabled()
        assert torch.cuda.tunable.get_filename() == "tunableop_results.csv"


def test_listing_what_the_shim_carries_keeps_the_settings(shim):
    import devshim

    torch.cuda.tunable.set_max_tuning_iterations(7)
    devshim.carried_apis()  # plans the patches again: nothing set may be lost
    assert torch.cuda.tunable.get_max_tuning_iterations() == 7
