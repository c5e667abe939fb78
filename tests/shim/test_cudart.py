"""torch.cuda.cudart(), check_error and torch.cuda.profiler while masquerading: what a build
without CUDA's runtime could not answer, torch's own callers included (devshim/cudart.py)."""
import pytest

torch = pytest.importorskip("torch")
from conftest import cpu_only, free_memory_held_still  # noqa: E402
from conftest import recorded_apis as apis  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def test_the_runtime_answers_as_one_whose_calls_succeed(shim):
    runtime = torch.cuda.cudart()
    assert runtime is not None
    assert runtime.cudaError.success == 0
    assert runtime.cudaProfilerStart() == runtime.profilerStart() == 0
    assert runtime.cudaProfilerStop() == runtime.profilerStop() == 0
    data = torch.ones(8)
    assert runtime.cudaHostRegister(data.data_ptr(), 32, 1) == 0
    assert runtime.cudaHostUnregister(data.data_ptr()) == 0
    with free_memory_held_still():
        assert runtime.cudaMemGetInfo(0) == torch.cuda.mem_get_info()
    assert runtime.cudaGetErrorString(0) == runtime.getErrorString(0) == "no error"
    assert torch.cuda.check_error(runtime.cudaProfilerStart()) is None
    assert {"torch.cuda.cudart", "torch.cuda.check_error"} <= apis()


def test_a_failing_code_is_a_cuda_error_and_raw_streams_are_refused(shim):
    with pytest.raises(torch.cuda.CudaError, match=r"^devshim: CUDA error 2 \(no CUDA runtime"):
        torch.cuda.check_error(2)
    with pytest.raises(NotImplementedError,
                       match=r"^devshim: raw CUDA stream handles "
                             r"\(torch\.cuda\.cudart\(\)\.cudaStreamCreate\) have no equivalent"):
        torch.cuda.cudart().cudaStreamCreate()


def test_the_cuda_profiler_brackets_a_region_and_changes_nothing(shim):
    x = torch.ones(2, device="cuda")
    torch.cuda.profiler.start()
    torch.cuda.profiler.stop()
    with torch.cuda.profiler.profile():
        y = x + 1
    assert y.tolist() == [2.0, 2.0]
    assert {"torch.cuda.profiler.start", "torch.cuda.profiler.stop",
            "torch.cuda.profiler.profile"} <= apis()


def test_checkpoint_staging_into_pinned_memory_works(shim):
    # torch pins the staging copy of a distributed checkpoint itself (cudaHostRegister through
    # torch.cuda._pin_memory_utils) whenever torch.cuda.is_available(): it failed on None.
    from torch.distributed._state_dict_utils import _create_cpu_state_dict
    from torch.distributed.checkpoint._state_dict_stager import StateDictStager

    state = {"w": torch.arange(16.0, device="cuda").reshape(4, 4)}
    staged = _create_cpu_state_dict(state, pin_memory=True, share_memory=True)
    assert staged["w"].shape == (4, 4) and staged["w"].is_shared()
    copied = StateDictStager(pin_memory=True).stage(state)
    assert torch.equal(copied["w"], state["w"].cpu())
