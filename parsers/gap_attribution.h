// Which torch API a failure under the shim is the fault of (the API gap log, docs/gaps.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/traceback.h"

namespace devshim {

/// Kinds of gap entries. Attribution yields failing, unsupported_op or cuda_only; `runner gaps
/// scan` yields unpatched.
inline constexpr std::string_view kGapFailing = "failing";
inline constexpr std::string_view kGapUnpatched = "unpatched";
inline constexpr std::string_view kGapUnsupportedOp = "unsupported_op";
inline constexpr std::string_view kGapCudaOnly = "cuda_only";
/// Kinds the gap log gives what no rule attributes (runner/results/gap_log.h): a failure that
/// points nowhere into torch or the shim; a test that passed without the shim and skips with it;
/// one that skips because the masquerade says a GPU is there (an expected effect).
inline constexpr std::string_view kGapUnattributed = "unattributed";
inline constexpr std::string_view kGapNewlySkipped = "newly_skipped";
inline constexpr std::string_view kGapMasqueradeSkip = "masquerade_skip";

/// The named semantic gap of device identity (docs/shim.md, "Device identity"): a tensor the
/// shim placed is on the device used, so `x.device == torch.device("cuda", 0)` is False.
inline constexpr std::string_view kGapDeviceIdentity = "tensor.device identity";
/// The named gap of device types: a test reads the type or the index of the device a tensor is on
/// (`x.device.type == "cuda"`, `x.device.index == 0`, `x.is_cuda`), which is the device used.
/// Unlike identity, no shim setting changes it: a tensor always reports where it is.
inline constexpr std::string_view kGapDeviceType = "tensor.device type check";
/// The named gap of a CUDA device object's type: a test compares the type of a device object
/// built for CUDA (`torch.device("cuda").type`) with the type of the device used.
/// `TORCHDEVICE_DEVICE_OBJECTS=redirect` builds such an object (no index, or one that exists) as
/// the device used, so the types agree; `keep` and `redirect-indexed` build `torch.device("cuda")`
/// as written.
inline constexpr std::string_view kGapCudaObjectType = "CUDA device object type check";
/// The named gap of one device: a test expects the error or warning given for tensors (or
/// parameters) on different devices ("Expected all tensors to be on the same device"), and under
/// the shim every tensor is on the one device used, so none comes.
inline constexpr std::string_view kGapCrossDevice = "cross-device error expected";
/// The named gap of errors only CUDA gives: a test expects an error or warning from a block that
/// puts tensors on CUDA (a check that an input is on the GPU, CUDA's non-determinism); on the
/// device used it never comes.
inline constexpr std::string_view kGapCudaOnlyError = "CUDA-only error expected";
/// The named gap of CUDA extensions: code that builds its CUDA sources with
/// torch.utils.cpp_extension once CUDA is there needs the CUDA toolkit (CUDA_HOME) and a CUDA
/// device to run the kernels; the device used has neither, and no torch function is to carry.
inline constexpr std::string_view kGapCudaExtension = "CUDA extension build";
/// The named gap of CUDA device objects under TORCHDEVICE_DEVICE_OBJECTS=redirect: library code
/// refuses the device object it built for CUDA ("Device should be CUDA, got cpu instead",
/// Lightning's CUDAAccelerator), which that setting builds as the device used; `keep` builds it
/// as written.
inline constexpr std::string_view kGapCudaDeviceRefused = "CUDA device object refused";
/// The named case of a test marked to fail that passed with the shim: pytest's strict xfail
/// (`xfail(strict=True)`, or `xfail_strict = true` in its configuration), whose failure is the
/// message "[XPASS(strict)]". What it expects to fail did not fail on the device used: a known
/// bug of CUDA's kernels, or a limit CUDA has and the device used has not. One whose parameters
/// name the CPU and a GPU (params_name_cpu_and_gpu) expects tensors on two devices to fail:
/// kGapCrossDevice (runner/results/gap_log.h, attribute_case).
inline constexpr std::string_view kGapStrictXpass = "strict xfail passed";
/// Not the shim's: the test bound a fixed port (`MASTER_PORT` of a process group, a server's)
/// that another process held (EADDRINUSE), as when two test files that use one port run at once
/// (`-j N`); the files belong in one of the suite's locks (docs/suites.md).
inline constexpr std::string_view kGapPortInUse = "port in use";
/// Not the shim's: the test reads from the network (the Hugging Face Hub, a download), which the
/// run could not reach (offline mode, `HF_HUB_OFFLINE=1`, a name that does not resolve). Whether
/// it passes under the shim is unknown until it runs where the network is.
inline constexpr std::string_view kGapNetworkUnreachable = "network unreachable";
/// Kind of the entries of files that reported no test (their import or collection failed, or
/// their process died before the first test): runner/results/gap_log.h.
inline constexpr std::string_view kGapFileError = "file_error";
/// Kind of the entries of files that reported no test with the same error without the shim: the
/// suite's environment (a module not installed), not a shim gap (runner/results/gap_log.h).
inline constexpr std::string_view kGapEnvironment = "environment";

/// The line the pytest parser puts between a subprocess.CalledProcessError's own traceback and
/// the Python traceback its test's "Captured stderr call" ends with: the child process's failure.
inline constexpr std::string_view kChildTracebackHeader =
    "The child process's traceback (pytest's Captured stderr call):";

/// Whether a test's exception says a child process it ran failed (subprocess.CalledProcessError).
inline bool is_child_process_failure(std::string_view exception) {
  return exception.ends_with("CalledProcessError");
}

/// Whether a test's exception says a process torch launched for it failed, with that process's
/// traceback in its own message: torchelastic's ChildFailedError (elastic_launch, torchrun's
/// API), torch.multiprocessing's ProcessRaisedException (mp.spawn).
inline bool is_process_launch_failure(std::string_view exception) {
  return exception.ends_with("ChildFailedError") || exception.ends_with("ProcessRaisedException");
}

/// The failure of the child process behind a subprocess.CalledProcessError, when its traceback
/// was captured (kChildTracebackHeader), or behind a process-launch failure
/// (is_process_launch_failure), from the last traceback of the exception's message: its
/// exception, message and traceback (as Python prints it).
struct ChildFailure {
  std::string exception, message, traceback;
};
std::optional<ChildFailure> child_failure(std::string_view exception, std::string_view traceback);

struct GapAttribution {
  std::string api;   ///< "torch.cuda.get_device_properties", "aten::_fft_r2c", "torch.zeros"
  std::string kind;  ///< failing, unsupported_op or cuda_only
  std::string why;   ///< which rule decided, for people ("message names the operator", ...)
};

/// The whole explanation of a failure: its message's first line followed by what the framework
/// printed after it. pytest: the last block of `E` lines (`assert False`, then `+  where False =
/// ...`, `+    where 'cpu' = device(type='cpu').type`); Python's traceback format (unittest):
/// the exception's lines after the last frame. The exception's name is left out of the first
/// line. message alone when the traceback has neither.
std::string failure_explanation(std::string_view message, std::string_view traceback);

/// The innermost frames of a traceback (failure_frames) that are not the test framework's or the
/// import machinery's (pytest, pluggy, unittest, importlib, runpy, the runner's zygote), innermost
/// first, at most n: where a file's import or collection error really happened.
std::vector<TracebackFrame> innermost_frames(std::string_view traceback, std::size_t n);

/// The API at fault for one failing test, from its exception, message and traceback text; nullopt
/// when nothing points into torch (an assertion of the test itself). Rules, first match wins:
///  0. pytest's strict XPASS (the message "[XPASS(strict)]", no exception) → kGapStrictXpass,
///     failing;
///  1. the shim's own NotImplementedError ("devshim: <feature> (torch.x.Y) have no equivalent")
///     → torch.x.Y, cuda_only;
///  2. "The operator 'aten::x' is not currently implemented for the MPS device", "Could not run
///     'aten::x' with arguments from the '…' backend" → aten::x, unsupported_op; a kernel
///     without the dtype (`"avg_pool3d_out_frame" not implemented for 'Half'`) →
///     "avg_pool3d_out_frame (Half)", unsupported_op;
///  3. "module 'torch._C' has no attribute '_cuda_getDevice'" → torch._C._cuda_getDevice;
///  3b. a port another process held: "EADDRINUSE" or "Address already in use" (any case) in the
///     message or the traceback (a process group's store in a child process) → kGapPortInUse,
///     failing;
///  3c. the network out of reach: the message, or an exception line of the traceback (one at
///     the first column: not source), says so ("offline mode is enabled", "outgoing traffic has
///     been disabled", "couldn't connect to 'https://huggingface.co'", "Name or service not
///     known", ...) → kGapNetworkUnreachable, failing;
///  4. an AssertionError whose explanation (failure_explanation: every line, not only the first)
///     compares device objects, the device used (cpu, mps) with a CUDA one (`device(type='cpu')
///     == device(type='cuda', index=0)`, `<class 'torch.device'>:cpu vs ... cuda:0`, on the first
///     line or on the `assert` line after the test's own message) → the
///     semantic gap kGapDeviceIdentity; one that compares device type strings (`'cpu' ==
///     'cuda'`, `'cpu' in ['cuda', ...]`) or reads a tensor's device type or index (`+ where
///     'cpu' = device(type='cpu').type`, `device(type='cpu').index`, `.is_cuda`), or asserts
///     that a device is not the one used (unittest's `device(type='cpu') == device(type='cpu')`)
///     → kGapDeviceType, but kGapCudaObjectType when the failing statement compares two types
///     read from objects and no literal 'cuda' (`assert get_device(d).type ==
///     model.policy.device.type`);
///     so is one that shows no value (`assert False`: the comparison sat inside `all([...])`)
///     (or unittest's `False is not true`, an `assertTrue`; or nothing: a bare `assert` in a
///     helper module pytest does not rewrite, peft's `testing_common.py`) whose failing statement,
///     the innermost frame's source line, asserts on `.device.type`,
///     `.device.index` or `.is_cuda`, or names a variable `is_cuda` (one comparing `.device ==`
///     itself is kGapDeviceIdentity); both failing; pytest's "DID NOT RAISE" or "DID NOT WARN"
///     whose `pytest.raises`/`pytest.warns` call says "device" (or whose `match=` names a
///     variable assigned such a text in the lines above) → kGapCrossDevice, failing; one whose
///     block puts tensors on CUDA (`.cuda(`, a literal 'cuda'; the block read from
///     failing_statement) → kGapCudaOnlyError, failing;
///  5. "Torch not compiled with CUDA enabled" (and the other CUDA initialisation failures) → the
///     torch function that called the initialisation (torch.cuda._lazy_init's caller); when torch
///     initialised CUDA from C (a factory called with device="cuda"), the torch API named on the
///     calling source line (torch.zeros);
///  6. the deepest frame inside torch's package (or the shim's own, devshim.*): module.function;
///     an AttributeError's frame in nn.Module's `__getattr__` is passed over (it raises for
///     whatever its caller asked for that the module lacks); none when a frame of the project
///     (is_project_frame) lies deeper than it: the failure was raised in the project's own code
///     that torch called (a module's `forward` under `nn.Module.__call__`, a dataset under the
///     DataLoader, a function a process launcher ran).
///
/// failing_statement: the whole statement of the innermost frame, read from its source file
/// (statement_at, parsers/python_source.h), where the log printed its first line only
/// (`self.assertTrue(` of a statement written over several lines: pytest's short tracebacks of
/// unittest tests; a `with pytest.raises(...)` whose block the log never prints); empty: the line
/// the log printed. Rule 4's statement checks read it.
std::optional<GapAttribution> attribute_failure(std::string_view exception,
                                                std::string_view message,
                                                std::string_view traceback,
                                                std::string_view failing_statement = {});

/// Whether rule 4 would read the whole failing statement and the log printed less: an
/// AssertionError that shows no value (`assert False`, unittest's `False is not true`) whose
/// innermost frame's printed line opens a bracket it does not close; or pytest's "DID NOT
/// RAISE"/"DID NOT WARN" whose printed line opens a `with pytest.raises(...)`/`pytest.warns(...)`
/// block. The frame is returned.
std::optional<TracebackFrame> frame_of_cut_statement(std::string_view exception,
                                                     std::string_view message,
                                                     std::string_view traceback);

/// Whether a test's parameters (the `[...]` of its id: "test_x[cpu-gpu]", "test_y[cuda:0-cpu-2]")
/// name both the CPU and a GPU: a part (between `-`, `_`, `,`, `:` and spaces) that is "cpu", and
/// one that is "cuda" or "gpu" (any case).
bool params_name_cpu_and_gpu(std::string_view test_name);

/// Whether a traceback frame is the project's (its code or its tests): a `.py` file outside
/// torch and the shim (module_of_file) and outside the interpreter's folders (`/lib/python`,
/// `site-packages/`, `dist-packages/`: the standard library and installed packages).
bool is_project_frame(const TracebackFrame& frame);

/// "site-packages/torch/cuda/__init__.py" → "torch.cuda"; ".../devshim/record.py" →
/// "devshim.record"; empty for a file outside torch and the shim.
std::string module_of_file(std::string_view file);

}  // namespace devshim
