#include "parsers/gap_attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "parsers/python_source.h"
#include "parsers/text.h"

namespace devshim {

namespace {

// How code says a device must be CUDA (lower case): refuses_non_cuda_device. The last is
// torch._utils._get_device_index's, given a CPU device where it wants an accelerator's index.
constexpr std::array<std::string_view, 5> kWantsCuda = {"should be cuda", "should be gpu",
                                                        "must be cuda", "must be a cuda",
                                                        "expected a non cpu device"};

// How such a message names the device it got instead.
constexpr std::array<std::string_view, 4> kGotDeviceUsed = {"got cpu", "got mps", "got: cpu",
                                                            "got: mps"};

// The text between `open` and the next `close` after it, searching from the start of s.
std::optional<std::string_view> between(std::string_view s, std::string_view open,
                                        std::string_view close) {
  auto a = s.find(open);
  if (a == std::string_view::npos) return std::nullopt;
  a += open.size();
  auto b = s.find(close, a);
  if (b == std::string_view::npos) return std::nullopt;
  return s.substr(a, b - a);
}

bool is_torch_file(std::string_view file) { return module_of_file(file).rfind("torch", 0) == 0; }

std::string frame_api(const TracebackFrame& f) {
  std::string module = module_of_file(f.file);
  if (module.empty()) return "";
  if (f.function.empty() || f.function == "<module>") return module;
  return module + "." + f.function;
}

// The first `torch.a.b(` call named on a source line: "x = torch.zeros(2, device=...)" →
// "torch.zeros".
std::string torch_call_in(std::string_view code) {
  for (std::size_t p = code.find("torch."); p != std::string_view::npos;
       p = code.find("torch.", p + 1)) {
    if (p > 0 && (is_identifier_char(code[p - 1]) || code[p - 1] == '.')) continue;
    std::size_t e = p;
    while (e < code.size() && (is_identifier_char(code[e]) || code[e] == '.')) ++e;
    std::size_t after = e;
    while (after < code.size() && code[after] == ' ') ++after;
    if (after < code.size() && code[after] == '(') return std::string(code.substr(p, e - p));
  }
  return "";
}

// pytest's last block of `E` lines, each without its "E" and indentation; empty when none.
std::vector<std::string_view> pytest_e_lines(std::string_view traceback) {
  std::vector<std::string_view> block;
  bool in_block = false;
  for (std::string_view line : lines_of(traceback)) {
    const bool e_line =
        !line.empty() && line.front() == 'E' && (line.size() == 1 || line[1] == ' ');
    if (!e_line) {
      in_block = false;
      continue;
    }
    if (!in_block) block.clear();
    in_block = true;
    if (const std::string_view t = trim(line.substr(1)); !t.empty()) block.push_back(t);
  }
  return block;
}

// Python's traceback format: the exception's lines after the last frame ("  File ..." and the
// indented source lines under it); empty when there is no frame.
std::vector<std::string_view> python_exception_lines(std::string_view traceback) {
  const std::vector<std::string_view> lines = lines_of(traceback);
  std::size_t last_frame = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("  File \"", 0) == 0) last_frame = i;
  }
  std::vector<std::string_view> out;
  if (last_frame == lines.size()) return out;
  std::size_t i = last_frame + 1;
  while (i < lines.size() && (lines[i].empty() || lines[i].front() == ' ')) ++i;
  for (; i < lines.size(); ++i) out.push_back(lines[i]);
  while (!out.empty() && trim(out.back()).empty()) out.pop_back();
  return out;
}

// pytest's innermost failing statement: its last '>' line and the source lines after it, up to
// the `E` lines (a statement written over several lines); with the source lines of the same
// section above it. Both empty when the traceback has no '>' line.
struct PytestStatement {
  std::string statement;
  std::vector<std::string_view> above;
};
PytestStatement pytest_statement(std::string_view traceback) {
  const std::vector<std::string_view> lines = lines_of(traceback);
  std::size_t mark = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].empty() && lines[i].front() == '>') mark = i;
  }
  PytestStatement out;
  if (mark == lines.size()) return out;
  out.statement = std::string(trim(lines[mark].substr(1)));
  for (std::size_t i = mark + 1; i < lines.size() && !lines[i].empty() && lines[i].front() == ' ';
       ++i) {
    out.statement += " " + std::string(trim(lines[i]));
  }
  std::size_t start = mark;
  while (start > 0 && trim(lines[start - 1]).rfind("_ _ _", 0) != 0) --start;
  out.above.assign(lines.begin() + static_cast<std::ptrdiff_t>(start),
                   lines.begin() + static_cast<std::ptrdiff_t>(mark));
  return out;
}

// pytest.raises/pytest.warns that saw nothing: "DID NOT RAISE <class ...>", "DID NOT WARN. ...".
bool did_not_raise(std::string_view exception, std::string_view message) {
  return (exception == "Failed" || exception.find(".Failed") != std::string_view::npos) &&
         (message.rfind("DID NOT RAISE", 0) == 0 || message.rfind("DID NOT WARN", 0) == 0);
}

// A device object of the device the shim used, as pytest and unittest print one.
bool names_used_device_object(std::string_view line) {
  return has(line, "device(type='cpu'") || has(line, "device(type='mps'") ||
         has(line, "torch.device'>:cpu") || has(line, "torch.device'>:mps");
}
bool names_cuda_device_object(std::string_view line) {
  return has(line, "device(type='cuda'") || has(line, "torch.device'>:cuda");
}

// The line of an explanation that holds the assertion: the first, or the `assert` line pytest
// prints after the test's own message ("cpu vs cuda:0" / "assert device(type='cpu') == ...").
std::string_view rewritten_assertion(const std::vector<std::string_view>& lines) {
  return lines.size() > 1 && lines[1].rfind("assert ", 0) == 0 ? lines[1] : lines.front();
}

// Which named device gap an AssertionError is, from its explanation (failure_explanation):
// kGapDeviceIdentity when its assertion compares device objects, the device used with a CUDA
// one, itself or through a call that pytest shows returning False with both as its arguments
// ("+  where False = device_eq(device(type='cpu'), device(type='cuda'))"); kGapDeviceType when
// it compares device type strings or reads the type or index of a device the shim used
// (pytest's "+ where" lines); empty otherwise.
std::string_view device_gap(std::string_view exception, std::string_view explanation) {
  if (!has(exception, "AssertionError")) return {};
  const std::vector<std::string_view> lines = lines_of(explanation);
  const std::string_view assertion = lines.front();
  const std::string_view rewritten = rewritten_assertion(lines);
  for (std::string_view line : {assertion, rewritten}) {
    if (names_used_device_object(line) && names_cuda_device_object(line)) {
      return kGapDeviceIdentity;
    }
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (has(l, "where False = ") && names_used_device_object(l) && names_cuda_device_object(l)) {
      return kGapDeviceIdentity;
    }
  }
  // unittest's assertNotEqual(x.device, torch.device("cpu")): "first == second", both the device
  // used. The test asserts that a tensor left it, and the shim placed it there.
  for (std::string_view used : {"device(type='cpu')", "device(type='mps')"}) {
    if (assertion == std::string(used) + " == " + std::string(used)) return kGapDeviceType;
  }
  for (std::string_view line : {assertion, rewritten}) {
    const bool used_string = has(line, "'cpu'") || has(line, "'mps'");
    const bool cuda_string = has(line, "'cuda'") || has(line, "'cuda:");
    if (used_string && cuda_string) return kGapDeviceType;
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (has(l, ").is_cuda")) return kGapDeviceType;  // "+  where False = tensor(...).is_cuda"
    if (names_used_device_object(l) && (has(l, ").type") || has(l, ").index"))) {
      return kGapDeviceType;
    }
  }
  return {};
}

// EADDRINUSE as torch.distributed's TCPStore says it, or the system's text for it.
bool says_port_in_use(std::string_view text) {
  if (has(text, "EADDRINUSE")) return true;
  return has(ascii_lower(text), "address already in use");
}

// What a failure to reach the network says (lower case): the Hugging Face Hub in offline mode
// (huggingface_hub's OfflineModeIsEnabled and LocalEntryNotFoundError, transformers' OSError), a
// host name that does not resolve, a network without a route.
constexpr std::array<std::string_view, 8> kNetworkUnreachable = {
    "offline mode is enabled",
    "outgoing traffic has been disabled",
    "couldn't connect to 'https://huggingface.co'",
    "name or service not known",
    "temporary failure in name resolution",
    "nodename nor servname provided",
    "network is unreachable",
    "failed to establish a new connection",
};

bool names_network_unreachable(std::string_view text) {
  const std::string lower = ascii_lower(text);
  return std::any_of(kNetworkUnreachable.begin(), kNetworkUnreachable.end(),
                     [&](std::string_view phrase) { return has(lower, phrase); });
}

// Whether the message, or an exception line of the traceback, says the network was out of
// reach. Exception lines start at the first column (Python's format; pytest's `E` lines): an
// indented or `>` line is source, where these phrases may stand in code that never ran.
bool says_network_unreachable(std::string_view message, std::string_view traceback) {
  if (names_network_unreachable(message)) return true;
  const std::vector<std::string_view> lines = lines_of(traceback);
  return std::any_of(lines.begin(), lines.end(), [](std::string_view line) {
    return !line.empty() && line.front() != ' ' && line.front() != '>' &&
           names_network_unreachable(line);
  });
}

// What the test's surroundings failed it with, not the device: a port held by another process
// (two files binding one MASTER_PORT at once; a lost peer process may trip the device rules'
// assertions too), or the network out of reach (the hub in offline mode: the test never got to
// the device).
std::optional<GapAttribution> environment_gap(std::string_view message,
                                              std::string_view traceback) {
  if (says_port_in_use(message) || says_port_in_use(traceback)) {
    return GapAttribution{std::string(kGapPortInUse), std::string(kGapFailing),
                          "a port the test bound was in use by another process"};
  }
  if (says_network_unreachable(message, traceback)) {
    return GapAttribution{std::string(kGapNetworkUnreachable), std::string(kGapFailing),
                          "the failure says the network was out of reach (offline mode, a "
                          "name that does not resolve)"};
  }
  return std::nullopt;
}

// A pytest.raises/pytest.warns that saw nothing (did_not_raise), as a named gap, or nullopt:
//  - kGapCrossDevice: the call says "device", or its `match=` names a variable assigned such a
//    text in the lines above it;
//  - kGapCudaOnlyError: what follows the call (the `with` statement's block, in failing_statement
//    read from the source) puts something on CUDA (`.cuda(`, a literal 'cuda'): the error it
//    expects is one CUDA gives, a device check or CUDA's own behaviour.
// failing_statement empty: pytest's '>' statement.
std::optional<GapAttribution> expectation_gap(std::string_view exception, std::string_view message,
                                              std::string_view traceback,
                                              std::string_view failing_statement) {
  if (!did_not_raise(exception, message)) return std::nullopt;
  const PytestStatement s = pytest_statement(traceback);
  const std::string_view statement = failing_statement.empty() ? s.statement : failing_statement;
  std::size_t at = statement.find("pytest.raises(");
  if (at == std::string_view::npos) at = statement.find("pytest.warns(");
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t end = statement.find('(', at);
  for (int depth = 0; end < statement.size(); ++end) {
    depth += bracket_step(statement[end]);
    if (depth == 0) break;
  }
  const std::string_view call = statement.substr(at, end - at);
  const std::string_view rest = statement.substr(std::min(end, statement.size()));
  const GapAttribution cross_device{std::string(kGapCrossDevice), std::string(kGapFailing),
                                    "the test expects an error or warning about devices"};
  if (has(call, "device")) return cross_device;
  if (has(rest, ".cuda(") || has(rest, "'cuda") || has(rest, "\"cuda")) {
    return GapAttribution{std::string(kGapCudaOnlyError), std::string(kGapFailing),
                          "the block the test expects to raise puts tensors on CUDA, and the "
                          "error or warning it expects is CUDA's: the device used gives none"};
  }
  const std::size_t m = call.find("match=");
  if (m == std::string_view::npos) return std::nullopt;
  std::size_t name_end = m + 6;
  while (name_end < call.size() && is_identifier_char(call[name_end])) ++name_end;
  const std::string name(call.substr(m + 6, name_end - m - 6));
  if (name.empty()) return std::nullopt;  // a literal that does not say "device"
  if (std::any_of(s.above.begin(), s.above.end(), [&](std::string_view line) {
        const std::string_view t = trim(line);
        return t.rfind(name + " =", 0) == 0 && has(t, "device");
      })) {
    return cross_device;
  }
  return std::nullopt;
}

bool shows_no_value(std::string_view exception, std::string_view explanation) {
  if (!has(exception, "AssertionError")) return false;
  // "assert False", first or after the test's own message ("forward cache was not moved...");
  // unittest's assertTrue: "False is not true", perhaps followed by " : <the test's message>".
  const std::vector<std::string_view> lines = lines_of(explanation);
  // A bare `assert` in a module pytest does not rewrite (a helper beside the tests) says nothing:
  // no message, and pytest's E line is the exception's name alone.
  if (lines.size() == 1 &&
      (trim(lines.front()).empty() || trim(lines.front()) == "AssertionError")) {
    return true;
  }
  return lines.front() == "assert False" || rewritten_assertion(lines) == "assert False" ||
         lines.front().rfind("False is not true", 0) == 0;
}

// Whether source code holds the literal 'cuda' (or "cuda", "cuda:0", ...).
bool says_cuda(std::string_view code) { return has(code, "'cuda") || has(code, "\"cuda"); }

// Whether an operand of a comparison is a type read from an object: it reads `.type`, or it is a
// name the lines above it (pytest's source of the test) last assign such a read, neither with a
// literal 'cuda' (`desired_device = get_device(device).type`).
bool is_object_type(std::string_view operand, const std::vector<std::string_view>& above) {
  operand = trim(operand);
  if (operand.ends_with(".type")) return true;
  if (operand.empty() || !std::all_of(operand.begin(), operand.end(), is_identifier_char))
    return false;
  const std::string assignment = std::string(operand) + " = ";
  for (auto line = above.rbegin(); line != above.rend(); ++line) {
    const std::string_view t = trim(*line);
    if (t.rfind(assignment, 0) == 0) {
      return t.ends_with(".type") && !says_cuda(t);
    }
  }
  return false;
}

// Whether a failing statement compares two types read from objects, neither a literal:
// `assert get_device(device).type == model.policy.device.type`. Under the shim no tensor is on
// CUDA, so the 'cuda' such a comparison saw is the type of a device object the code built, not of
// a tensor's device. pytest shows a string comparison as a diff, without "where" lines, so the
// statement is what tells it from a comparison with the literal 'cuda'.
bool compares_object_types(std::string_view statement, const std::vector<std::string_view>& above) {
  if (statement.rfind("assert ", 0) != 0 || says_cuda(statement)) return false;
  statement.remove_prefix(7);
  for (std::string_view op : {" == ", " != "}) {
    const std::size_t at = statement.find(op);
    if (at == std::string_view::npos) continue;
    std::string_view right = statement.substr(at + op.size());
    // The test's own message after a comma outside brackets is not an operand.
    int depth = 0;
    for (std::size_t i = 0; i < right.size(); ++i) {
      depth += bracket_step(right[i]);
      if (depth == 0 && right[i] == ',') {
        right = right.substr(0, i);
        break;
      }
    }
    return is_object_type(statement.substr(0, at), above) && is_object_type(right, above);
  }
  return false;
}

// For an AssertionError that shows no value (pytest's "assert False": the comparison sat inside
// all([...]) or a generator; unittest's "False is not true"; a bare AssertionError: an assert in a
// module pytest does not rewrite), what its failing statement (the
// innermost frame's source line, or failing_statement when given) asserts on: kGapDeviceType for
// the type or index of a tensor's device, kGapDeviceIdentity for the device object itself
// (`param.device == expected`); empty otherwise.
std::string_view device_gap_of_statement(std::string_view exception, std::string_view explanation,
                                         const std::vector<TracebackFrame>& frames,
                                         std::string_view failing_statement) {
  if (frames.empty() || !shows_no_value(exception, explanation)) return {};
  const std::string_view statement =
      failing_statement.empty() ? std::string_view(frames.back().code) : failing_statement;
  if (statement.rfind("assert ", 0) != 0 && statement.rfind("self.assertTrue(", 0) != 0) return {};
  for (std::string_view reads : {".device.type", ".device.index", ".is_cuda"}) {
    if (has(statement, reads)) return kGapDeviceType;
  }
  if (has_word(statement, "is_cuda")) return kGapDeviceType;  // `assert is_cuda, "..."`
  for (std::string_view compares : {".device ==", ".device !="}) {
    if (has(statement, compares)) return kGapDeviceIdentity;
  }
  return {};
}

constexpr std::array<std::string_view, 4> kCudaInitFailures = {
    "Torch not compiled with CUDA enabled", "Found no NVIDIA driver on your system",
    "CUDA driver initialization failed", "No CUDA GPUs are available"};

// Code that refuses a device for not being CUDA, naming the device used: Fabric's "Device should
// be CUDA, got cpu instead.", Lightning's "Device should be GPU, got cpu instead". Under
// TORCHDEVICE_DEVICE_OBJECTS=redirect the device object it built for CUDA is the device used.
bool refuses_non_cuda_device(std::string_view message) {
  const std::string lower = ascii_lower(message);
  const bool wants_cuda =
      std::any_of(kWantsCuda.begin(), kWantsCuda.end(),
                  [&](std::string_view w) { return lower.find(w) != std::string::npos; });
  // "device": a check of a device object, not of a tensor ("x must be a CUDA tensor, got cpu").
  return wants_cuda && lower.find("device") != std::string::npos &&
         std::any_of(kGotDeviceUsed.begin(), kGotDeviceUsed.end(),
                     [&](std::string_view g) { return lower.find(g) != std::string::npos; });
}

}  // namespace

std::string module_of_file(std::string_view file) {
  std::string f(file);
  std::replace(f.begin(), f.end(), '\\', '/');
  std::size_t start = std::string::npos;
  for (std::string_view root : {"/torch/", "/devshim/"}) {
    // The last occurrence: site-packages/torch/..., shim/python/devshim/...
    std::size_t p = f.rfind(root);
    if (p != std::string::npos && (start == std::string::npos || p > start)) start = p + 1;
  }
  if (start == std::string::npos) {
    if (f.rfind("torch/", 0) == 0 || f.rfind("devshim/", 0) == 0) {
      start = 0;
    } else {
      return "";
    }
  }
  std::string rel = f.substr(start);
  if (rel.size() < 3 || rel.compare(rel.size() - 3, 3, ".py") != 0) return "";
  rel.resize(rel.size() - 3);
  if (rel.size() > 9 && rel.compare(rel.size() - 9, 9, "/__init__") == 0)
    rel.resize(rel.size() - 9);
  std::replace(rel.begin(), rel.end(), '/', '.');
  return rel;
}

bool is_project_frame(const TracebackFrame& frame) {
  std::string file = frame.file;
  std::replace(file.begin(), file.end(), '\\', '/');
  if (!file.ends_with(".py") || !module_of_file(file).empty()) return false;
  for (std::string_view interpreters : {"/lib/python", "site-packages/", "dist-packages/"}) {
    if (file.find(interpreters) != std::string::npos) return false;
  }
  return true;
}

std::string failure_explanation(std::string_view message, std::string_view traceback) {
  std::vector<std::string_view> lines = pytest_e_lines(traceback);
  if (lines.empty()) lines = python_exception_lines(traceback);
  if (lines.empty()) return std::string(message);
  // The exception's name off the first line: "AssertionError: assert x", or "AssertionError:"
  // alone with the message on the lines below.
  std::string_view& first = lines.front();
  if (const std::string_view name = exception_prefix(first); !name.empty()) {
    first.remove_prefix(name.size() + 2);
  } else if (!first.empty() && first.back() == ':' &&
             exception_prefix(std::string(first) + " ").size() + 1 == first.size()) {
    lines.erase(lines.begin());
  }
  std::string out;
  for (std::string_view line : lines) {
    if (out.empty() && line.empty()) continue;
    out += (out.empty() ? "" : "\n") + std::string(line);
  }
  return out.empty() ? std::string(message) : out;
}

namespace {

// The test framework's and the import machinery's own files: not where an error happened.
bool is_framework_file(std::string_view file) {
  static constexpr std::array<std::string_view, 9> kFramework = {
      "/_pytest/", "/pluggy/",       "/unittest/",          "<frozen ", "/importlib/", "/runpy.py",
      "/pytest/",  "devshim_zygote", "/site-packages/py.py"};
  return std::any_of(kFramework.begin(), kFramework.end(),
                     [&](std::string_view f) { return file.find(f) != std::string_view::npos; }) ||
         file.rfind("<frozen", 0) == 0;
}

}  // namespace

std::vector<TracebackFrame> innermost_frames(std::string_view traceback, std::size_t n) {
  const std::vector<TracebackFrame> frames = failure_frames(traceback);
  std::vector<TracebackFrame> out;
  for (auto it = frames.rbegin(); it != frames.rend() && out.size() < n; ++it) {
    if (!is_framework_file(it->file)) out.push_back(*it);
  }
  return out;
}

namespace {

// The last Python traceback of a process-launching exception's own message (torchelastic's
// ChildFailedError: "traceback : Traceback (most recent call last):" in its root cause;
// torch.multiprocessing's ProcessRaisedException: "-- Process 0 terminated with the following
// error:" then the traceback), as Python prints it: pytest's `E` marks off, and indented back to
// the column of its exception line (two left of its first frame's `File`). Empty when none.
std::string embedded_traceback(std::string_view traceback) {
  constexpr std::string_view kHeader = "Traceback (most recent call last):";
  const std::vector<std::string_view> all = lines_of(traceback);
  std::size_t header = all.size();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (has(all[i], kHeader)) header = i;
  }
  if (header == all.size()) return "";
  const auto unmarked = [](std::string_view line) {
    if (line.starts_with("E ") || line == "E") line.remove_prefix(1);
    return line;
  };
  std::size_t base = std::string_view::npos;
  for (std::size_t i = header + 1; i < all.size() && base == std::string_view::npos; ++i) {
    const std::string_view line = unmarked(all[i]);
    const std::size_t at = line.find_first_not_of(' ');
    if (at != std::string_view::npos && line.substr(at).starts_with("File \"")) {
      base = at >= 2 ? at - 2 : 0;
    }
  }
  if (base == std::string_view::npos) return "";
  std::string out(kHeader);
  for (std::size_t i = header + 1; i < all.size(); ++i) {
    std::string_view line = unmarked(all[i]);
    line.remove_prefix(std::min(base, line.find_first_not_of(' ') == std::string_view::npos
                                          ? line.size()
                                          : line.find_first_not_of(' ')));
    out += '\n';
    out += line;
  }
  return out;
}

}  // namespace

std::optional<ChildFailure> child_failure(std::string_view exception, std::string_view traceback) {
  if (is_process_launch_failure(exception)) {
    const std::string child = embedded_traceback(traceback);
    ParsedTraceback tb = parse_traceback(child);
    if (tb.exception.empty() || tb.frames.empty()) return std::nullopt;
    return ChildFailure{std::move(tb.exception), std::move(tb.message), child};
  }
  if (!is_child_process_failure(exception)) return std::nullopt;
  const std::size_t at = traceback.rfind(kChildTracebackHeader);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view child = traceback.substr(at + kChildTracebackHeader.size());
  ParsedTraceback tb = parse_traceback(child);
  if (tb.exception.empty()) return std::nullopt;
  return ChildFailure{std::move(tb.exception), std::move(tb.message), std::string(child)};
}

std::optional<TracebackFrame> frame_of_cut_statement(std::string_view exception,
                                                     std::string_view message,
                                                     std::string_view traceback) {
  const bool expected_raise = did_not_raise(exception, message);
  if (!expected_raise && !shows_no_value(exception, failure_explanation(message, traceback))) {
    return std::nullopt;
  }
  std::vector<TracebackFrame> frames = failure_frames(traceback);
  if (expected_raise) {
    // The test's frame: Python's own traceback format (--tb=native) shows pytest's below it.
    while (!frames.empty() && has(frames.back().file, "_pytest/")) frames.pop_back();
    if (frames.empty() || frames.back().line <= 0 || !opens_expectation_block(frames.back().code)) {
      return std::nullopt;
    }
    return std::move(frames.back());
  }
  if (frames.empty() || frames.back().line <= 0) return std::nullopt;
  const std::string& code = frames.back().code;
  if (bracket_depth(code) <= 0 && !(!code.empty() && code.back() == '\\')) return std::nullopt;
  return std::move(frames.back());
}

// Rule 4's assertions (attribute_failure): the named semantic gap of an AssertionError that
// compares a tensor's (or the program's) device with CUDA; nullopt when it is none.
std::optional<GapAttribution> device_assertion_gap(std::string_view exception,
                                                   std::string_view message,
                                                   std::string_view traceback,
                                                   const std::vector<TracebackFrame>& frames,
                                                   std::string_view failing_statement) {
  const std::string explanation = failure_explanation(message, traceback);
  if (const std::string_view gap = device_gap(exception, explanation); !gap.empty()) {
    const auto statement = [&] {
      if (!failing_statement.empty()) return failing_statement;
      return frames.empty() ? std::string_view() : std::string_view(frames.back().code);
    };
    if (gap == kGapDeviceType &&
        compares_object_types(statement(), pytest_statement(traceback).above)) {
      return GapAttribution{std::string(kGapCudaObjectType), std::string(kGapFailing),
                            "the failing assertion compares the type of a device object built "
                            "for CUDA with the device used's"};
    }
    return GapAttribution{std::string(gap), std::string(kGapFailing),
                          gap == kGapDeviceIdentity
                              ? "an assertion compares a device object of the device used with "
                                "a CUDA one"
                              : "an assertion reads the type or index of the device used"};
  }
  if (const std::string_view gap =
          device_gap_of_statement(exception, explanation, frames, failing_statement);
      !gap.empty()) {
    return GapAttribution{std::string(gap), std::string(kGapFailing),
                          gap == kGapDeviceIdentity
                              ? "the failing assertion compares a tensor's device object"
                              : "the failing assertion reads the type of a tensor's device"};
  }
  return std::nullopt;
}

bool params_name_cpu_and_gpu(std::string_view test_name) {
  const std::size_t open = test_name.find('[');
  if (open == std::string_view::npos) return false;
  const std::string params = ascii_lower(test_name.substr(open + 1));
  bool cpu = false;
  bool gpu = false;
  std::size_t start = 0;
  while (start <= params.size()) {
    const std::size_t end = params.find_first_of("-_,: ]", start);
    const std::string_view part =
        std::string_view(params).substr(start, end == std::string::npos ? end : end - start);
    cpu = cpu || part == "cpu";
    gpu = gpu || part == "cuda" || part == "gpu";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return cpu && gpu;
}

std::optional<GapAttribution> attribute_failure(std::string_view exception,
                                                std::string_view message,
                                                std::string_view traceback,
                                                std::string_view failing_statement) {
  // 0. A test marked to fail (strictly) that passed.
  if (exception.empty() && message.starts_with("[XPASS(strict)]")) {
    return GapAttribution{std::string(kGapStrictXpass), std::string(kGapFailing),
                          "the test is marked to fail (pytest's strict xfail) and passed with "
                          "the shim"};
  }
  // 1. The shim's own NotImplementedError names the CUDA-only feature.
  if (exception.find("NotImplementedError") != std::string_view::npos &&
      message.rfind("devshim: ", 0) == 0) {
    if (auto api = between(message, "(", ")"); api && api->rfind("torch.", 0) == 0) {
      return GapAttribution{std::string(*api), std::string(kGapCudaOnly),
                            "the shim raised NotImplementedError for a CUDA-only feature"};
    }
  }
  // 2. An operator the backend lacks.
  for (std::string_view open : {"The operator '", "Could not run '"}) {
    if (auto op = between(message, open, "'"); op && op->find("::") != std::string_view::npos) {
      return GapAttribution{std::string(*op), std::string(kGapUnsupportedOp),
                            "the message names the operator"};
    }
  }
  // A kernel the backend has, but not for this dtype: `"avg_pool3d_out_frame" not implemented
  // for 'Half'` (torch's dtype dispatch), where CUDA code ran in half precision.
  if (const std::size_t at = message.find("\" not implemented for '");
      at != std::string_view::npos) {
    const std::size_t open = message.rfind('"', at == 0 ? 0 : at - 1);
    const auto dtype = between(message.substr(at), "for '", "'");
    if (open != std::string_view::npos && open < at && dtype && !dtype->empty()) {
      return GapAttribution{fmt::format("{} ({})", message.substr(open + 1, at - open - 1), *dtype),
                            std::string(kGapUnsupportedOp),
                            "the message names the kernel and the dtype it lacks"};
    }
  }
  // 3. A binding torch lacks in this build.
  if (auto module = between(message, "module '", "' has no attribute '");
      module && module->rfind("torch", 0) == 0) {
    const std::string_view rest = message.substr(message.find("' has no attribute '") + 20);
    const std::string_view attr = rest.substr(0, rest.find('\''));
    if (!attr.empty()) {
      return GapAttribution{std::string(*module) + "." + std::string(attr),
                            std::string(kGapFailing), "the message names the missing attribute"};
    }
  }
  // Not the shim's (a port in use, the network out of reach): before the device rules.
  if (auto gap = environment_gap(message, traceback)) return gap;
  // 4. A named semantic gap: the test compares a tensor's (or the program's) device with CUDA.
  const std::vector<TracebackFrame> frames = failure_frames(traceback);
  if (auto gap = device_assertion_gap(exception, message, traceback, frames, failing_statement)) {
    return gap;
  }
  if (auto gap = expectation_gap(exception, message, traceback, failing_statement)) return gap;
  // A CUDA extension built at run time (torch.utils.cpp_extension.load with CUDA sources, which
  // code builds once CUDA is "there") needs the CUDA toolkit: no torch function to carry.
  if (message.find("CUDA_HOME environment variable is not set") != std::string_view::npos &&
      std::any_of(frames.begin(), frames.end(), [](const TracebackFrame& f) {
        return module_of_file(f.file) == "torch.utils.cpp_extension";
      })) {
    return GapAttribution{std::string(kGapCudaExtension), std::string(kGapFailing),
                          "torch.utils.cpp_extension builds CUDA sources, which need the CUDA "
                          "toolkit (CUDA_HOME)"};
  }
  if (refuses_non_cuda_device(message)) {
    return GapAttribution{std::string(kGapCudaDeviceRefused), std::string(kGapFailing),
                          "the code refuses a device that is not CUDA, and names the device "
                          "used"};
  }
  // 5. CUDA initialisation: blame the caller of torch.cuda._lazy_init.
  const bool cuda_init =
      std::any_of(kCudaInitFailures.begin(), kCudaInitFailures.end(),
                  [&](std::string_view m) { return message.find(m) != std::string_view::npos; });
  if (cuda_init) {
    for (std::size_t i = frames.size(); i-- > 0;) {
      if (frames[i].function != "_lazy_init" || !is_torch_file(frames[i].file)) continue;
      if (i > 0 && is_torch_file(frames[i - 1].file)) {
        return GapAttribution{frame_api(frames[i - 1]), std::string(kGapFailing),
                              "the torch function that initialised CUDA"};
      }
      const std::string call = i > 0 ? torch_call_in(frames[i - 1].code) : "";
      if (!call.empty()) {
        return GapAttribution{call, std::string(kGapFailing),
                              "the torch call on the line that initialised CUDA"};
      }
      return GapAttribution{"torch.cuda._lazy_init", std::string(kGapFailing),
                            "CUDA initialised from outside Python"};
    }
  }
  // 6. The deepest frame in torch or in the shim. An AttributeError raised by nn.Module's
  // __getattr__ ("'X' object has no attribute 'y'") is its caller asking for what the module
  // lacks, not the fault of the __getattr__ (the shim's own __getattr__ still counts). The
  // frame in which torch's process launchers call the test's function in a child process
  // (torchelastic's `wrapper`, mp.spawn's `_wrap`) is the launcher's, as pytest's are pytest's.
  const bool attribute_error = has(exception, "AttributeError");
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    // Raised in the project's own code that torch called (a module's forward under
    // nn.Module.__call__, a dataset under the DataLoader): not the calling frame's fault.
    if (is_project_frame(*it)) return std::nullopt;
    if (attribute_error && it->function == "__getattr__" &&
        module_of_file(it->file) == "torch.nn.modules.module") {
      continue;
    }
    if ((it->function == "wrapper" &&
         module_of_file(it->file) == "torch.distributed.elastic.multiprocessing.errors") ||
        (it->function == "_wrap" && module_of_file(it->file) == "torch.multiprocessing.spawn")) {
      continue;
    }
    std::string api = frame_api(*it);
    if (!api.empty()) {
      return GapAttribution{std::move(api), std::string(kGapFailing),
                            "the deepest traceback frame inside torch or the shim"};
    }
  }
  return std::nullopt;
}

}  // namespace devshim
