"""torch.cuda answering for the CPU on this machine: device queries, properties, memory, RNG,
streams and events, NotImplementedError for CUDA-only features, nvtx no-ops; and the MPS backend
against a fake torch.mps."""
import copy
import gc
import os
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
from conftest import active_shim, child_env, cpu_only, free_memory_held_still  # noqa: E402
from conftest import recorded_apis as apis  # noqa: E402
from devshim import backends, record, unsupported  # noqa: E402

pytestmark = pytest.mark.skipif(not cpu_only(torch),
                                reason="expectations are for a CPU-only machine")


def test_device_queries_agree_with_each_other(shim):
    assert torch.cuda.is_available() and torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    torch.cuda.set_device(0)
    torch.cuda.set_device("cuda:0")
    props = torch.cuda.get_device_properties(0)
    assert props.name == torch.cuda.get_device_name() == torch.cuda.get_device_name(0)
    assert (props.major, props.minor) == torch.cuda.get_device_capability() == (0, 0)
    page, pages = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_PHYS_PAGES")
    assert props.total_memory == page * pages
    assert props.multi_processor_count == os.cpu_count()
    assert "cpu" in repr(props).lower()
    assert torch.cuda.is_bf16_supported()
    assert torch.cuda.is_tf32_supported() is False
    assert torch.cuda.is_current_stream_capturing() is False
    assert torch.cuda.can_device_access_peer(0, 0) is False
    assert {"torch.cuda.get_device_properties", "torch.cuda.set_device"} <= apis()
    row = next(r for r in record.rows() if r["api"] == "torch.cuda.get_device_properties")
    assert (row["requested"], row["used"]) == ("cuda:0", "cpu")


def test_device_context_managers(shim):
    with torch.cuda.device(0) as d:
        assert torch.cuda.current_device() == 0
        assert d.idx == 0
    x = torch.ones(1, device="cuda")
    with torch.cuda.device_of(x) as d:
        assert d.idx == 0
    assert isinstance(torch.cuda.device(0), torch.cuda.device)


def test_a_module_with_a_buffer_that_is_not_a_tensor_moves_to_cuda(shim):
    # tensordict keeps a TensorDict (no hash) in a module's _buffers: torch moves it with the
    # module, but counting the placed buffers with Module.buffers() hashed it (TypeError).
    class Unhashable:
        __hash__ = None

        def __init__(self):
            self.moves = 0

        def cuda(self, *args, **kwargs):
            self.moves += 1
            return self

        to = cuda

        def is_floating_point(self):
            return False

        is_complex = is_floating_point

    start = torch.cuda.memory_allocated()
    model = torch.nn.Linear(4, 4)
    model._buffers["box"] = box = Unhashable()
    assert model.cuda() is model
    assert box.moves == 1 and model._buffers["box"] is box
    assert torch.cuda.memory_allocated() == start + (4 * 4 + 4) * 4  # the tensors still count


def test_init_and_is_initialized(shim):
    assert not torch.cuda.is_initialized()
    torch.cuda.init()
    assert torch.cuda.is_initialized()


def test_asking_for_the_current_device_initialises_cuda_as_torch_does(shim):
    # torch.cuda.current_device() calls _lazy_init: torchquad's enable_cuda() asks it, then sets
    # the default device to "cuda" only when torch.cuda.is_initialized() says so.
    assert torch.cuda.device_count() == 1 and not torch.cuda.is_initialized()
    assert torch.cuda.current_device() == 0
    assert torch.cuda.is_initialized()


def test_device_objects_and_the_accelerators_queries_initialise_nothing_as_in_torch(shim):
    # torch.testing._internal.common_cuda builds torch.device("cuda:0") at import, then asserts
    # that CUDA is not initialised: building a device object is not using CUDA.
    assert torch.device("cuda:0").type == "cpu" and torch.device("cuda").type == "cpu"
    with torch.device("cuda"):
        pass
    torch.set_default_device("cuda")
    torch.set_default_device(None)
    assert torch.get_device_module("cuda") is torch.cuda
    torch.get_autocast_gpu_dtype()
    assert torch.accelerator.is_available() and torch.accelerator.device_count() == 1
    assert torch.accelerator.current_accelerator().type == "cuda"
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()
    torch.accelerator.memory_allocated()
    torch.accelerator.reset_peak_memory_stats()
    assert {"torch.device", "torch.set_default_device",
            "torch.accelerator.is_available"} <= apis()
    assert not torch.cuda.is_initialized()
    torch.zeros(1, device="cuda")
    assert torch.cuda.is_initialized()


def test_seeding_and_setting_the_rng_state_queue_their_work_as_torch_does(shim):
    # torch.cuda.manual_seed, seed and set_rng_state hand their work to _lazy_call: CUDA stays
    # uninitialised until something else initialises it.
    torch.cuda.manual_seed(1)
    torch.cuda.manual_seed_all(1)
    torch.cuda.set_rng_state(torch.get_rng_state())
    assert not torch.cuda.is_initialized()
    torch.cuda.get_rng_state()
    assert torch.cuda.is_initialized()


def _initialising_in_torch_source():
    """The torch.cuda functions that initialise CUDA in the installed torch's source: those whose
    body calls _lazy_init, or calls one that does (current_device, get_device_properties, ...)."""
    import ast

    def calls(node):
        # What the body calls when it runs: not what a nested function (manual_seed's callback,
        # queued with _lazy_call until CUDA is initialised) would.
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                yield child.func.id
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                yield child.func.attr
            yield from calls(child)

    folder = os.path.join(os.path.dirname(torch.__file__), "cuda")
    bodies = {}
    for name in ("__init__.py", "memory.py", "random.py"):
        with open(os.path.join(folder, name), encoding="utf-8") as source:
            for node in ast.parse(source.read()).body:
                if isinstance(node, ast.FunctionDef):
                    bodies[node.name] = set(calls(node))
    initialising = {"_lazy_init"}
    while True:
        more = {f for f, calls in bodies.items() if calls & initialising} - initialising
        if not more:
            return initialising - {"_lazy_init"}
        initialising |= more


def test_every_patched_call_that_initialises_cuda_in_torch_initialises_it_here(shim):
    from devshim import cuda_masquerade, patching

    patched = {name for owner, name, _, _ in patching.installed()
               if getattr(owner, "__name__", "").startswith("torch.cuda")}
    initialising = _initialising_in_torch_source()
    assert {"current_device", "get_device_properties", "synchronize"} <= initialising
    missing = sorted(n for n in initialising & patched
                     if f"torch.cuda.{n}" not in cuda_masquerade._INITIALISING)
    assert missing == []


def test_memory_queries_are_honest_for_the_cpu(shim):
    start = torch.cuda.memory_allocated()
    x = torch.ones(1024, device="cuda")
    assert torch.cuda.memory_allocated() == torch.cuda.max_memory_allocated() == start + 4096
    assert torch.cuda.memory_reserved() == torch.cuda.memory_allocated()
    model = torch.nn.Linear(16, 16).to("cuda")  # moved "to cuda": its parameters count
    assert torch.cuda.memory_allocated() == start + 4096 + (16 * 16 + 16) * 4
    del x, model
    assert torch.cuda.memory_allocated() == start
    assert torch.cuda.max_memory_allocated() == start + 4096 + (16 * 16 + 16) * 4
    free, total = torch.cuda.mem_get_info()
    assert 0 < free <= total == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_max_memory_allocated()
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == start and stats["num_ooms"] == 0
    assert torch.cuda.memory_stats_as_nested_dict()["allocated_bytes"]["all"]["peak"] == start
    assert "cpu" in torch.cuda.memory_summary()
    assert torch.cuda.memory_snapshot() == []
    torch.cuda.set_per_process_memory_fraction(0.5)
    assert torch.cuda.get_per_process_memory_fraction() == 0.5



@pytest.mark.parametrize("objects", ["redirect", "keep"])
def test_tensors_made_inside_with_torch_device_cuda_count(clean_env, objects):
    # litgpt builds its models under `with torch.device("cuda")` and its conftest frees memory
    # (gc.collect()) only when torch.cuda.memory_allocated() > 0: counting 0 there let a file's
    # models pile up until the kernel's OOM killer ended it.
    clean_env.setenv("TORCHDEVICE_DEVICE_OBJECTS", objects)
    for _ in active_shim():
        start = torch.cuda.memory_allocated()
        with torch.device("cuda"):
            model = torch.nn.Linear(16, 16)  # its parameters hold the factories' storages
            x = torch.zeros(8)
            y = torch.zeros(8, device="meta")  # a device of its own: not counted
        assert torch.cuda.memory_allocated() == start + (16 * 16 + 16 + 8) * 4
        with torch.device("cpu"):  # the CPU asked for: nothing counts
            z = torch.ones(1024)
        with torch.device("meta"):
            torch.nn.Linear(1024, 1024)
        assert torch.cuda.memory_allocated() == start + (16 * 16 + 16 + 8) * 4
        del model, x
        gc.collect()
        assert torch.cuda.memory_allocated() == start
        assert (y.device.type, z.device.type) == ("meta", "cpu")


def test_cleanup_and_debug_calls_of_cuda_test_code(shim):
    # The teardown of many CUDA-written tests: gc, empty_cache, ipc_collect (a CPU build has no
    # torch._C._cuda_ipc_collect: every test of such a suite failed in its teardown).
    x = torch.ones(4, device="cuda").pin_memory()
    torch.cuda.empty_cache()
    torch.cuda.ipc_collect()
    assert torch.cuda.get_allocator_backend() == "native"
    # Pinned memory is not CUDA's host allocator's: no statistics, as before CUDA starts.
    assert torch.cuda.host_memory_stats() == {} == torch.cuda.host_memory_stats_as_nested_dict()
    torch.cuda.reset_peak_host_memory_stats()
    torch.cuda.reset_accumulated_host_memory_stats()
    assert torch.cuda.get_sync_debug_mode() == 0
    torch.cuda.set_sync_debug_mode("error")  # nothing synchronises with a CUDA device: no error
    assert x.sum().item() == 4 and torch.cuda.get_sync_debug_mode() == 2
    torch.cuda.set_sync_debug_mode(0)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        torch.cuda.set_sync_debug_mode("loud")
    assert torch.cuda.get_sync_debug_mode() == 0
    assert {"torch.cuda.ipc_collect", "torch.cuda.set_sync_debug_mode"} <= apis()


def test_the_cpu_memory_setting_caps_what_the_device_says_it_has(clean_env):
    # A test that fills "GPU memory" to what is free would otherwise fill the host.
    clean_env.setenv("TORCHDEVICE_CPU_MEMORY", "64MiB")
    from conftest import active_shim

    for _ in active_shim():
        free, total = torch.cuda.mem_get_info()
        assert total == torch.cuda.get_device_properties(0).total_memory == 64 << 20
        x = torch.ones(1 << 20, device="cuda")  # 4 MiB placed
        assert torch.cuda.mem_get_info()[0] == min(free, 64 << 20) - (4 << 20)
        del x


def test_sizes_of_the_cpu_memory_setting():
    from devshim import config

    assert config.parse_size("2GiB") == config.parse_size("2 g") == 2 << 30
    assert config.parse_size("512MiB") == 512 << 20 and config.parse_size("1.5k") == 1536
    assert config.parse_size("4096") == 4096
    for bad in ("", "lots", "-1G", "0", "2XB"):
        assert config.parse_size(bad) is None, bad
    settings = config.from_environ({"TORCHDEVICE_CPU_MEMORY": "huge"})
    assert settings.cpu_memory is None and "TORCHDEVICE_CPU_MEMORY" in settings.problems[0]
    assert config.from_environ({"TORCHDEVICE_CPU_MEMORY": "1GiB"}).cpu_memory == 1 << 30

def test_the_submodules_of_torch_cuda_answer_as_torch_cuda_does(shim):
    # transformers' Trainer saves torch.cuda.random.get_rng_state() with every checkpoint: on a
    # CPU build torch's own answers "Torch not compiled with CUDA enabled".
    torch.cuda.manual_seed(3)
    assert torch.equal(torch.cuda.random.get_rng_state(), torch.cuda.get_rng_state())
    torch.cuda.random.set_rng_state_all(torch.cuda.random.get_rng_state_all())
    x = torch.zeros(1024, device="cuda")
    assert torch.cuda.memory.memory_allocated() == torch.cuda.memory_allocated() >= x.nbytes
    torch.cuda.memory.reset_peak_memory_stats()
    with free_memory_held_still():
        assert torch.cuda.memory.mem_get_info() == torch.cuda.mem_get_info()
    assert torch.cuda.graphs.is_current_stream_capturing() is False
    with pytest.raises(NotImplementedError, match="CUDA graphs"):
        torch.cuda.graphs.graph_pool_handle()


def test_same_seed_same_numbers(shim):
    torch.cuda.manual_seed(123)
    a = torch.randn(5, device="cuda")
    torch.cuda.manual_seed_all(123)
    b = torch.randn(5, device="cuda")
    assert torch.equal(a, b)
    assert torch.cuda.initial_seed() == 123
    state = torch.cuda.get_rng_state()
    c = torch.rand(4, device="cuda")
    torch.cuda.set_rng_state(state)
    assert torch.equal(c, torch.rand(4, device="cuda"))
    states = torch.cuda.get_rng_state_all()
    d = torch.rand(4, device="cuda")
    torch.cuda.set_rng_state_all(states)
    assert torch.equal(d, torch.rand(4, device="cuda"))
    assert torch.cuda.default_generators[0] is torch.default_generator
    with torch.random.fork_rng(device_type="cuda"):
        torch.rand(3)
    torch.cuda.seed()
    torch.cuda.seed_all()


def test_torch_manual_seed_calls_are_not_recorded_as_cuda_calls(shim):
    torch.manual_seed(0)  # torch calls torch.cuda.manual_seed_all itself
    assert "torch.cuda.manual_seed_all" not in apis()


def test_a_stream_held_back_by_sleep_is_waited_for(shim):
    # fairscale's pipe tests: torch.cuda._sleep holds the current stream back, then check that
    # a copy on another stream waits for it. torch's own needs torch._C._cuda_sleep (CUDA only).
    source = torch.ones(3, device="cuda")
    other = torch.cuda.Stream()
    torch.cuda._sleep(100_000_000)
    other.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(other):
        copied = source.to("cpu", non_blocking=True)
    other.synchronize()
    assert copied.tolist() == [1.0, 1.0, 1.0]
    assert "torch.cuda._sleep" in apis()


def test_streams(shim):
    s = torch.cuda.Stream()
    default = torch.cuda.default_stream()
    assert torch.cuda.current_stream() == default
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
        y = torch.ones(3, device="cuda") * 2
    assert torch.cuda.current_stream() == default
    other = torch.cuda.Stream()
    with s:  # torch.Stream's own protocol (torch.nn.parallel.parallel_apply enters streams so)
        assert torch.cuda.current_stream() == s
        with other:
            assert torch.cuda.current_stream() == other
        assert torch.cuda.current_stream() == s
    assert torch.cuda.current_stream() == default
    s.wait_stream(default)
    default.wait_stream(s)
    assert s.query()
    s.synchronize()
    e = s.record_event()
    assert isinstance(e, torch.cuda.Event)
    s.wait_event(e)
    y.record_stream(s)
    with torch.cuda.stream(None):
        pass
    torch.cuda.set_stream(s)
    assert torch.cuda.current_stream() == s
    torch.cuda.set_stream(default)
    assert y.sum().item() == 6
    assert isinstance(s, torch.cuda.Stream) and s.device.type == "cpu"


def test_the_device_generic_stream_and_event_for_cuda_are_the_masquerades(shim):
    # torchtune's activation offloading: s0 = torch.accelerator.current_stream(), then
    # s1 = torch.Stream() (the current accelerator's), waited on each other. A CPU build refused
    # torch.Stream("cuda"); a CUDA build with no GPU raised cudaErrorInsufficientDriver for
    # torch.Stream() itself.
    s0 = torch.accelerator.current_stream()
    for s1 in (torch.Stream(), torch.Stream("cuda"), torch.Stream(device="cuda:0", priority=-1)):
        assert isinstance(s1, torch.cuda.Stream) and s1.device.type == "cpu"
        s1.wait_stream(s0)
        event = s1.record_event()
        s0.wait_event(event)
        with s1:
            assert torch.accelerator.current_stream() == s1
            moved = torch.ones(2).to("cuda", non_blocking=True)
        s0.wait_stream(s1)
    assert moved.tolist() == [1.0, 1.0]
    assert torch.Stream(device="cuda:0", priority=-1).priority == -1
    timed = torch.Event(enable_timing=True)
    assert isinstance(timed, torch.cuda.Event) and timed.enable_timing
    assert isinstance(torch.Event("cuda"), torch.cuda.Event)
    # Another device is torch's own, and so is a subclass.
    assert type(torch.Stream("cpu")) is torch.Stream
    assert type(torch.Event(device="cpu")) is torch.Event
    assert {"torch.Stream", "torch.Event"} <= apis()


def test_the_raw_stream_binding_libraries_read_at_import_is_the_current_streams(shim):
    # bitsandbytes' backends/cuda/ops.py, imported once torch.cuda.is_available():
    # `_get_raw_stream = torch._C._cuda_getCurrentRawStream` (an AttributeError on a CPU build
    # failed `import bitsandbytes`, and `import peft` with it).
    compiled = torch.cuda._is_compiled()
    get_raw_stream = torch._C._cuda_getCurrentRawStream
    assert get_raw_stream(torch.cuda.current_device()) == torch.cuda.current_stream().cuda_stream
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        assert get_raw_stream(0) == s.cuda_stream == 0  # CUDA's handle of the default stream
    # torch tells a CUDA build by its other _cuda_* bindings: the masquerade adds none of them.
    assert torch.cuda._is_compiled() == compiled
    assert "torch._C._cuda_getCurrentRawStream" in apis()


def test_torchs_test_base_runs_a_cuda_test_on_a_stream_of_its_own(shim):
    # torch.testing._internal's CudaNonDefaultStream, around every CUDA device-type test
    # (instantiate_device_type_tests): torch._C._cuda_setStream and _cuda_setDevice, bindings of
    # CUDA builds, were missing, and each such test failed before it began (torchdata).
    from torch.testing._internal.common_utils import CudaNonDefaultStream

    compiled = torch.cuda._is_compiled()
    before = torch.cuda.current_stream()
    with CudaNonDefaultStream():
        inside = torch.cuda.current_stream()
        assert inside != before and inside.stream_id != 0
        assert torch.cuda.current_device() == 0
    assert torch.cuda.current_stream() == before
    torch._C._cuda_setStream(stream_id=inside.stream_id, device_index=0, device_type=1)
    assert torch.cuda.current_stream() == inside
    torch.cuda.set_stream(before)
    torch._C._cuda_setDevice(0)
    assert torch.cuda.current_device() == 0
    assert torch.cuda._is_compiled() == compiled
    assert {"torch._C._cuda_setStream", "torch._C._cuda_setDevice"} <= apis()


def test_the_caching_allocators_switch_and_cublas_workspaces_as_a_cuda_build_has_them(shim):
    assert torch._C._cuda_cudaCachingAllocator_is_enabled() is True
    with torch.cuda.caching_allocator_disabled():
        x = torch.ones(2, device="cuda")
    torch._C._cuda_cudaCachingAllocator_enable(False)
    assert torch._C._cuda_cudaCachingAllocator_is_enabled() is False
    torch._C._cuda_cudaCachingAllocator_enable(True)
    assert torch._C._cuda_cudaCachingAllocator_is_enabled() is True
    assert torch._C._cuda_clearCublasWorkspaces() is None
    assert x.sum().item() == 2.0
    assert {"torch._C._cuda_cudaCachingAllocator_is_enabled",
            "torch._C._cuda_cudaCachingAllocator_enable",
            "torch._C._cuda_clearCublasWorkspaces"} <= apis()


# run by unittest.main: torch's run_tests() wants xmlrunner when the environment says CI.
DEVICE_TYPE_TESTS = """
import unittest

import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests, onlyCUDA
from torch.testing._internal.common_utils import TestCase, skipIfCachingAllocatorDisabled

class TestPlacement(TestCase):
    @onlyCUDA
    def test_ones(self, device):
        x = torch.ones(3, device=device)
        self.assertEqual((x + x).sum().item(), 6.0)

    @onlyCUDA
    @skipIfCachingAllocatorDisabled
    def test_uncached(self, device):
        with torch.cuda.caching_allocator_disabled():
            x = torch.ones(3, device=device)
        self.assertEqual(x.sum().item(), 3.0)

instantiate_device_type_tests(TestPlacement, globals(), only_for=("cpu", "cuda"))

if __name__ == "__main__":
    unittest.main()
"""


def test_a_cuda_device_type_test_of_torchs_test_base_runs(tmp_path):
    # The whole path a library's CUDA device-type tests take: common_cuda imported (it asserts
    # that CUDA is not initialised), TestPlacementCUDA instantiated, run on a non-default stream,
    # under torch's memory-leak check (its CUDA-build bindings: cuBLAS workspaces cleared) and
    # its skip for an uncached allocator (the allocator's switch asked).
    (tmp_path / "test_placement.py").write_text(DEVICE_TYPE_TESTS)
    env = child_env(activate=True)
    env["PYTORCH_TEST_CUDA_MEM_LEAK_CHECK"] = "1"
    done = subprocess.run([sys.executable, "test_placement.py", "-v"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "test_uncached_cuda (__main__.TestPlacementCUDA" in done.stderr, done.stderr[-3000:]
    # Both CUDA tests ran and passed; only the two CPU ones ("Only runs on cuda") skipped.
    assert "Ran 4 tests" in done.stderr and "OK (skipped=2)" in done.stderr, done.stderr[-3000:]


def test_events_measure_real_time(shim):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    time.sleep(0.05)
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    assert 50.0 <= start.elapsed_time(end) < 5000.0
    assert "torch.cuda.Event.elapsed_time" in apis()


def test_events_refuse_what_cuda_refuses(shim):
    a, b = torch.cuda.Event(), torch.cuda.Event()
    a.record()
    b.record()
    with pytest.raises(RuntimeError, match="enable_timing"):
        a.elapsed_time(b)
    c, d = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="recorded"):
        c.elapsed_time(d)
    with pytest.raises(NotImplementedError, match=r"devshim: interprocess CUDA events"):
        torch.cuda.Event(interprocess=True)
    with pytest.raises(NotImplementedError, match=r"ipc_handle"):
        c.ipc_handle()


def test_cuda_only_features_raise_naming_the_feature(shim):
    with pytest.raises(NotImplementedError) as info:
        torch.cuda.CUDAGraph()
    message = "devshim: CUDA graphs (torch.cuda.CUDAGraph) have no equivalent on cpu"
    assert str(info.value) == message
    with pytest.raises(NotImplementedError, match=r"\(torch\.cuda\.graph\)"):
        with torch.cuda.graph(None):
            pass
    with pytest.raises(NotImplementedError, match=r"make_graphed_callables"):
        torch.cuda.make_graphed_callables(torch.nn.Linear(2, 2), (torch.ones(1, 2),))
    with pytest.raises(NotImplementedError,
                       match=r"NCCL collectives \(torch\.cuda\.nccl\.all_reduce\)"):
        torch.cuda.nccl.all_reduce([torch.ones(1)])
    # A CPU build has no torch._C._nccl_version: an AttributeError said nothing of NCCL.
    with pytest.raises(NotImplementedError,
                       match=r"^devshim: NCCL \(torch\.cuda\.nccl\.version\) has no equivalent"):
        torch.cuda.nccl.version()
    assert torch.cuda.nccl.is_available([torch.ones(1, device="cuda")]) is False


def test_a_jiterator_function_is_made_as_in_torch_and_raises_when_called(shim):
    # torch checks for CUDA when the function is called, not when it is made:
    # torch.testing._internal.common_methods_invocations makes four at import.
    square = torch.cuda.jiterator._create_jit_fn(
        "template <typename T> T sq(T x) { return x * x; }")
    assert square.kernel_name == "sq" and square.num_outputs == 1
    with pytest.raises(NotImplementedError, match=r"^devshim: the CUDA jiterator \(torch\.cuda"
                                                  r"\.jiterator\._create_jit_fn\) has no "):
        square(torch.ones(2, device="cuda"))
    with pytest.raises(NotImplementedError, match="jiterator"):
        copy.deepcopy(square)(torch.ones(2))  # OpInfo copies its ops
    pair = torch.cuda.jiterator._create_multi_output_jit_fn(
        "template <typename T> void two(T x, T& a, T& b) { a = x; b = x; }", num_outputs=2)
    assert pair.num_outputs == 2
    with pytest.raises(NotImplementedError, match=r"_create_multi_output_jit_fn\) has no "):
        pair(torch.ones(2))
    with pytest.raises(Exception, match="Couldn.t parse code"):
        torch.cuda.jiterator._create_jit_fn("not a kernel")  # torch's own check of the code


@pytest.mark.parametrize("path,name,feature,verb", unsupported._RAISING)
def test_every_raising_api_names_itself(shim, path, name, feature, verb):
    owner = torch
    for part in path.split("."):
        owner = getattr(owner, part)
    with pytest.raises(NotImplementedError) as info:
        getattr(owner, name)()
    message = f"devshim: {feature} (torch.{path}.{name}) {verb} no equivalent on cpu"
    assert str(info.value) == message


def test_nvtx_ranges_are_no_ops(shim):
    assert torch.cuda.nvtx.range_push("outer") == 0
    assert torch.cuda.nvtx.range_push("inner") == 1
    assert torch.cuda.nvtx.range_pop() == 1
    assert torch.cuda.nvtx.range_pop() == 0
    torch.cuda.nvtx.mark("here")
    torch.cuda.nvtx.range_end(torch.cuda.nvtx.range_start("r"))
    with torch.cuda.nvtx.range("block"):
        pass


class FakeMps:
    """What MpsBackend asks of torch.mps."""

    def __init__(self):
        self.allocated, self.driver, self.calls = 100, 400, []

    def current_allocated_memory(self):
        return self.allocated

    def driver_allocated_memory(self):
        return self.driver

    def recommended_max_memory(self):
        return 1000

    def empty_cache(self):
        self.calls.append("empty_cache")

    def synchronize(self):
        self.calls.append("synchronize")

    def manual_seed(self, seed):
        self.calls.append(("manual_seed", seed))

    def seed(self):
        self.calls.append("seed")

    def get_rng_state(self):
        return "state"

    def set_rng_state(self, state):
        self.calls.append(("set_rng_state", state))

    def set_per_process_memory_fraction(self, fraction):
        self.calls.append(("fraction", fraction))


class FakeTorch:
    def __init__(self):
        self.mps = FakeMps()


def test_mps_backend_uses_torch_mps():
    fake = FakeTorch()
    b = backends.for_device(fake, "mps")
    assert isinstance(b, backends.MpsBackend) and b.type == "mps"
    assert (b.allocated(), b.reserved(), b.total_memory(), b.free_memory()) == (100, 400, 1000, 600)
    fake.mps.allocated = 300
    assert b.peak_allocated() == 300
    fake.mps.allocated = 50
    assert b.peak_allocated() == 300 and b.allocated() == 50
    b.reset_peaks()
    assert b.peak_allocated() == 50
    b.empty_cache()
    b.synchronize()
    b.manual_seed(3)
    b.seed()
    b.set_rng_state(b.get_rng_state())
    b.set_memory_fraction(0.25)
    assert fake.mps.calls == ["empty_cache", "synchronize", ("manual_seed", 3), "seed",
                              ("set_rng_state", "state"), ("fraction", 0.25)]
    assert b.timing_event(True) is None  # this fake torch.mps has no Event
    assert "MPS" in b.name()
