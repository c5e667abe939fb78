"""Streams and events as CUDA code uses them: side streams, ``wait_stream``, and timing with
``torch.cuda.Event(enable_timing=True)``.

Event timings are checked against real elapsed time: with an idle device, two events recorded
around a host ``time.sleep`` measure (at least) the sleep.
"""
import time

import torch


def test_work_on_a_side_stream_is_visible_after_wait_stream():
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = x * 2 + 1
    torch.cuda.current_stream().wait_stream(s)
    assert torch.equal(y.cpu(), torch.arange(1000, dtype=torch.float32) * 2 + 1)


def test_current_stream_inside_stream_context():
    s = torch.cuda.Stream()
    outer = torch.cuda.current_stream()
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
    assert torch.cuda.current_stream() == outer
    assert torch.cuda.current_stream() == torch.cuda.default_stream()


def test_stream_synchronize_and_query():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.randn(64, 64, device="cuda")
        b = a @ a.T
    s.synchronize()
    assert s.query()
    assert torch.allclose(b.cpu(), b.cpu().T, atol=1e-4)  # a @ a.T is symmetric


def test_event_elapsed_time_covers_a_host_sleep():
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    start.record()
    time.sleep(0.05)
    end.record()
    end.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1000.0
    elapsed = start.elapsed_time(end)
    assert isinstance(elapsed, float)
    assert 45.0 <= elapsed <= wall_ms + 5.0


def test_event_timing_of_device_work():
    a = torch.randn(256, 256, device="cuda")
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(5):
        a = torch.tanh(a @ a / 256.0)
    end.record()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1000.0
    elapsed = start.elapsed_time(end)
    assert 0.0 <= elapsed <= wall_ms + 5.0
    assert torch.isfinite(a).all().item()


def test_event_query_and_wait_event():
    s = torch.cuda.Stream()
    done = torch.cuda.Event()
    with torch.cuda.stream(s):
        x = torch.full((100,), 3.0, device="cuda")
        x.mul_(2)
        done.record(s)
    torch.cuda.current_stream().wait_event(done)
    done.synchronize()
    assert done.query()
    assert x.sum().item() == 600.0


def test_event_record_on_current_stream_by_default():
    e = torch.cuda.Event()
    y = torch.ones(10, device="cuda").cumsum(0)
    e.record()
    e.wait()  # current stream waits for the event: a no-op ordering constraint here
    torch.cuda.synchronize()
    assert e.query()
    assert y[-1].item() == 10.0


def test_synchronize_with_device_argument():
    x = torch.randn(32, device="cuda")
    expected = x.cpu().sum().item()
    torch.cuda.synchronize(0)
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize(torch.device("cuda", 0))
    assert abs(x.sum().item() - expected) < 1e-4


def test_record_stream_keeps_tensor_usable():
    s = torch.cuda.Stream()
    x = torch.arange(16.0, device="cuda")
    with torch.cuda.stream(s):
        y = x + 1
        x.record_stream(s)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert torch.equal(y.cpu(), torch.arange(16.0) + 1)


def test_high_priority_stream():
    s = torch.cuda.Stream(priority=-1)
    with torch.cuda.stream(s):
        z = torch.ones(4, device="cuda") * 5
    s.synchronize()
    assert z.cpu().tolist() == [5.0, 5.0, 5.0, 5.0]
