"""CUDA graphs: a CUDA-only feature with no equivalent elsewhere, which must fail clearly.

The code below is the capture/replay code CUDA users write. What each test expects depends on
the hardware really present, not on what ``torch.cuda.is_available()`` says (the shim answers
that one for the device it redirects to):

* On a real CUDA (or ROCm) machine -- a torch build with CUDA/HIP and a driver that reports at
  least one device (``torch._C._cuda_getDeviceCount()``, which the shim does not answer) -- the
  graph is captured and replayed and the replayed values are checked. The shim does not redirect
  there, so this holds with or without it.
* Everywhere else the code must raise ``NotImplementedError`` whose message names the feature:
  the shim's contract for CUDA-only features (never a silent wrong answer). Without the shim on
  such a machine torch raises something else first (``Torch not compiled with CUDA enabled`` at
  the first cuda tensor, ``Tried to instantiate dummy base class CUDAGraph``), so these tests
  FAIL in a baseline run. That is deliberate: the shim is what turns them into passes (the
  differential run files them as ``unlocked``). They are not skipped there, because a skip would
  hide a shim that forgot the clear error.
"""
import copy

import pytest
import torch
from torch import nn

GRAPH_ERROR = r"(?i)cuda.?graph"


def real_cuda():
    built = torch.version.cuda is not None or getattr(torch.version, "hip", None) is not None
    count = getattr(torch._C, "_cuda_getDeviceCount", None)
    return bool(built and count is not None and count() > 0)


def capture_with_graph_context():
    static_in = torch.zeros(8, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up on a side stream, as the CUDA-graphs docs prescribe
            static_out = static_in * 2 + 1
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = static_in * 2 + 1
    static_in.copy_(torch.arange(8.0, device="cuda"))
    g.replay()
    torch.cuda.synchronize()
    return static_out.cpu()


def capture_with_begin_end():
    static_in = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        g.capture_begin()
        static_out = static_in + 5
        g.capture_end()
    torch.cuda.current_stream().wait_stream(s)
    static_in.fill_(10.0)
    g.replay()
    torch.cuda.synchronize()
    return static_out.cpu()


def graphed_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    reference = copy.deepcopy(model)
    model.cuda()
    sample = torch.randn(4, 8, device="cuda")
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    x = torch.randn(4, 8)
    with torch.no_grad():
        return graphed(x.cuda()).detach().cpu(), reference(x)


def test_capture_and_replay_with_graph_context():
    if real_cuda():
        assert torch.equal(capture_with_graph_context(), torch.arange(8.0) * 2 + 1)
    else:
        with pytest.raises(NotImplementedError, match=GRAPH_ERROR):
            capture_with_graph_context()


def test_capture_begin_end():
    if real_cuda():
        assert capture_with_begin_end().tolist() == [15.0] * 4
    else:
        with pytest.raises(NotImplementedError, match=GRAPH_ERROR):
            capture_with_begin_end()


def test_make_graphed_callables():
    if real_cuda():
        got, expected = graphed_model()
        assert torch.allclose(got, expected, atol=1e-5)
    else:
        with pytest.raises(NotImplementedError, match=r"(?i)(cuda.?graph|make_graphed_callables)"):
            graphed_model()


def test_device_still_usable_after_graph_attempt():
    try:
        capture_with_graph_context()
    except NotImplementedError:
        assert not real_cuda()
    # Whatever happened, ordinary CUDA work goes on, on the default stream.
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    x = torch.arange(5.0, device="cuda")
    assert (x * x).sum().item() == 30.0
