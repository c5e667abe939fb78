#include "runner/results/gap_actions.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>

#include "parsers/text.h"

namespace devshim {

namespace {

// One row of the table of actions: the entries it is for (their kind; their api exactly, or a
// prefix ending in '*'; empty: any), what to do, the equivalent on the device used, and the
// setting of docs/shim.md that may fix them (variable=value; empty: none), with the action
// when no setting is suggested: the run used it already, or, where value lists values
// ("keep|redirect": the first the run did not use: keep after redirect-indexed too, which
// answers index reads and the CUDA type of torch.device("cuda") alike), the run does not say
// which it used; whether the entries are beyond the shim (GapAction::beyond_the_shim); and whether
// they are the tests' own (gap_tests_own: what they check or raise, no shim or setting changes it,
// so they weigh least). First match wins. Placeholders: {api}, {device}, {setting}, {carry} (carry
// a file error's torch API, or read its error when it names none), {module} (the module a "No
// module named" error names), {equivalent} (kEquivalents).
struct ActionRule {
  std::string_view kind;
  std::string_view api;
  std::string_view action;
  std::string_view equivalent;
  std::string_view variable;
  std::string_view value;
  std::string_view action_when_set;
  bool beyond_the_shim = false;
  bool tests_own = false;
};

constexpr bool kBeyondTheShim = true;
constexpr bool kTestsOwn = true;

constexpr std::string_view kReadTheFailure =
    "read the failure: it names no torch API and has no frame in torch or the shim, so it is the "
    "test's own check (of the device's name, count or memory) or the project under test's";

// A test that raised KeyboardInterrupt (or got a SIGINT) or called pytest.exit(): the session
// ended there (docs/parsers.md), whatever the device.
constexpr std::string_view kSessionEnded =
    "not the shim's: the test ended pytest's session itself (it raised KeyboardInterrupt, got a "
    "SIGINT, or called pytest.exit()), as it would on any device, and the tests after it in its "
    "file did not run; a test that does so on purpose (of an interrupt handler) is best run in a "
    "file of its own or deselected with -k";

constexpr std::array<ActionRule, 32> kActions = {{
    {"failing", "tensor.device identity",
     "set {setting} (docs/shim.md, \"Device identity\"): torch.device(\"cuda\", 0) is then built "
     "as the device used, so the test's identity assertion holds",
     "torch.device(\"{device}\")", "TORCHDEVICE_DEVICE_OBJECTS", "redirect",
     "the run used TORCHDEVICE_DEVICE_OBJECTS=redirect already, which builds CUDA device objects "
     "with no index or one that exists as the device used: the test compares with one it leaves "
     "as written (an index beyond the devices seen, cuda:1); compare with the device the tensors "
     "were placed on"},
    {"failing", "CUDA device object refused",
     "set {setting} (docs/shim.md, \"Device identity\"): torch.device(\"cuda\", 0) is then built "
     "as written, so the code's check that its device is CUDA holds (Lightning's CUDAAccelerator); "
     "identity assertions against such objects then fail instead",
     "", "TORCHDEVICE_DEVICE_OBJECTS", "keep",
     "the run used TORCHDEVICE_DEVICE_OBJECTS=keep already: the code checks the device a tensor is "
     "on ({device}), which no setting changes; skip the test where CUDA is absent"},
    {"failing", "tensor.device type check",
     "no shim setting changes a tensor's device type when the test compares it with the literal "
     "'cuda': a tensor reports the device it is on ({device}); compare with "
     "torch.accelerator.current_accelerator().type (or the device the test asked for through "
     "it), or skip the test where CUDA is absent. When the type compared is a device object's "
     "that the code built for CUDA and kept (torcheval's Metric.to(\"cuda\") keeps "
     "torch.device(\"cuda\"), and its tests assert that the object's type is 'cuda'), {setting} "
     "builds that object as written, which --try-settings tries",
     "'{device}'", "TORCHDEVICE_DEVICE_OBJECTS", "keep",
     "no shim setting changes it when the test compares with the literal 'cuda': a tensor "
     "reports the device it is on ({device}); compare with "
     "torch.accelerator.current_accelerator().type (or the device the test asked for through "
     "it), or skip the test where CUDA is absent. A comparison with the type of a device object "
     "the test built (torch.device(\"cuda\").type) that the failure does not show as one (a "
     "statement comparing two objects' types is \"CUDA device object type check\") holds under "
     "TORCHDEVICE_DEVICE_OBJECTS=redirect, the default",
     !kBeyondTheShim, kTestsOwn},
    {"failing", "CUDA device object type check",
     "set {setting} (docs/shim.md, \"Devices without an index\"): torch.device(\"cuda\") is "
     "then built as the device used, so its type is the type of the device the tensors were "
     "placed on ({device})",
     "", "TORCHDEVICE_DEVICE_OBJECTS", "redirect",
     "the run used TORCHDEVICE_DEVICE_OBJECTS=redirect already, which builds CUDA device objects "
     "with no index or one that exists as the device used: the test's has an index beyond the "
     "devices seen (cuda:1); compare with the type of the device the tensors were placed on"},
    {"failing", "cross-device error expected",
     "none on one device: the test expects the error or warning given for tensors on different "
     "devices, and the shim puts every tensor on the device used ({device}); skip the test where "
     "CUDA is absent",
     "", "", "", "", kBeyondTheShim, kTestsOwn},
    {"failing", "strict xfail passed",
     "none for the shim: the test is marked to fail (pytest's xfail, strict) and passes on "
     "{device}, so what it expects to fail does not: read the mark's reason (a bug of CUDA's "
     "kernels, a limit CUDA has) and make the mark hold only where CUDA is, or skip the test "
     "where CUDA is absent",
     "", "", "", "", kBeyondTheShim, kTestsOwn},
    {"failing", "CUDA-only error expected",
     "none on one device: the block the test expects to raise puts tensors on CUDA, and the "
     "error or warning it expects is one CUDA gives (a check that an input is on the GPU, "
     "CUDA's own behaviour); on {device} it never comes: skip the test where CUDA is absent",
     "", "", "", "", kBeyondTheShim, kTestsOwn},
    {"failing", "port in use",
     "not the shim's: another test process held a port the test bound (EADDRINUSE); files that "
     "bind one fixed port (MASTER_PORT, a server's) must not run at once: name them in one of the "
     "suite's locks (docs/suites.md, \"Locks\"), or run with -j 1",
     "", "", "", "", kBeyondTheShim},
    {"failing", "network unreachable",
     "not the shim's: the test reads from the network (the Hugging Face Hub, a download), which "
     "this run could not reach (offline mode, HF_HUB_OFFLINE=1, no route); it never got to the "
     "device, so how it fares under the shim is unknown: run it where the network is, or fill "
     "the cache it reads first (HF_HOME)",
     "", "", "", "", kBeyondTheShim},
    {"failing", "CUDA extension build",
     "none on {device}: the code compiles CUDA sources with torch.utils.cpp_extension once CUDA "
     "is there, and their kernels need the CUDA toolkit and a CUDA device; skip the test where "
     "CUDA is absent, or build the extension's CPU sources if it has any",
     "", "", "", "", kBeyondTheShim, kTestsOwn},
    {"environment", "environment: *No module named *",
     "not the shim's: the file fails to import without the shim too, for want of the module "
     "{module}; install it into the suite's interpreter (its test extras), or leave the file out "
     "of the suite",
     "", "", "", "", kBeyondTheShim},
    {"environment", "",
     "not the shim's: the file reports no test without the shim either, with the same error; fix "
     "the suite's environment or the file (its error names what it lacks)",
     "", "", "", "", kBeyondTheShim},
    {"file_error", "file error: *No module named *",
     "make the file import under the shim: it lacks the module {module} there and loses every "
     "test of it; if the baseline lacks it too (--differential tells: an environment entry), "
     "install it into the suite's interpreter; if only the shim's run imports it (a CUDA-only "
     "package chosen because CUDA is \"available\"), {carry}",
     "", "", "", ""},
    {"file_error", "",
     "make the file import under the shim: its import or collection fails there and loses every "
     "test of it; {carry}",
     "", "", "", ""},
    {"cuda_only", "",
     "none on {device}: the shim raises NotImplementedError on purpose; skip the test where "
     "CUDA is absent",
     "", "", "", "", kBeyondTheShim, kTestsOwn},
    {"unsupported_op", "",
     "carry {api} on {device}: the backend lacks the operator (on MPS, "
     "PYTORCH_ENABLE_MPS_FALLBACK=1, which the runner sets, runs it on the CPU)",
     "", "", "", ""},
    {"masquerade_skip", "",
     "none: expected under the CUDA masquerade (the test wants no GPU, and the shim says one is "
     "there)",
     "", "", "", "", kBeyondTheShim},
    {"newly_skipped", "",
     "read the skip condition: the test passed without the shim and skips with it, so its "
     "condition sees the masquerade (a GPU, CUDA, a device count)",
     "", "", "", ""},
    {"unattributed", "test's own error in a CUDA-only branch: *",
     "not the shim's: the test's CUDA branch raises an error its own code raises on any device, "
     "a real GPU included (an attribute its object lacks, a name never defined), so no setting "
     "of the shim changes it; fix the test, or report it upstream",
     "", "", "", "", kBeyondTheShim, kTestsOwn},
    {"unattributed", "numeric difference in a CUDA-only branch: *",
     "compare with a tolerance that holds on {device}, or with a reference computed there: the "
     "CUDA branch's values differ from what the test expects beyond its tolerance (CUDA's "
     "kernels and TF32 round otherwise); no setting of the shim changes the arithmetic",
     "", "", "", "", kBeyondTheShim},
    {"unattributed", "unattributed * in a CUDA-only branch: *",
     "run the test where CUDA is: the failing code runs only when CUDA is available, so the run "
     "without the shim never ran it, and a failure there too is the test's own (or the "
     "project's); else {setting}, another device-object setting, builds torch.device(\"cuda\", "
     "0) and torch.device(\"cuda\") otherwise (docs/shim.md, \"Device identity\"), which "
     "--try-settings tries",
     "", "TORCHDEVICE_DEVICE_OBJECTS", "keep|redirect",
     "run the test where CUDA is: the failing code runs only when CUDA is available, so the run "
     "without the shim never ran it, and a failure there too is the test's own (or the "
     "project's)"},
    {"unattributed", "unattributed KeyboardInterrupt*", kSessionEnded, "", "", "", "",
     kBeyondTheShim},
    {"unattributed", "unattributed _pytest.outcomes.Exit*", kSessionEnded, "", "", "", "",
     kBeyondTheShim},
    {"unattributed", "lost:*", kReadTheFailure, "", "", "", ""},
    {"unattributed", "unattributed ModuleNotFoundError*", kReadTheFailure, "", "", "", ""},
    {"unattributed", "unattributed ImportError*", kReadTheFailure, "", "", "", ""},
    {"unattributed", "",
     "read the failure: it names no torch API and has no frame in torch or the shim, so it is "
     "the test's own check (of a device's index, name, count or memory) or the project under "
     "test's; {setting}, another device-object setting, builds torch.device(\"cuda\", 0) and "
     "torch.device(\"cuda\") otherwise (their index, their type: docs/shim.md, \"Device "
     "identity\"), which --try-settings tries",
     "", "TORCHDEVICE_DEVICE_OBJECTS", "keep|redirect", kReadTheFailure},
    {"unpatched", "",
     "carry {api} in the shim, or declare it in raising_apis() when it has no equivalent on "
     "{device}",
     "{equivalent}", "", "", ""},
    {"failing", "devshim.*", "fix the shim's {api}: the failure is raised inside it", "", "", "",
     ""},
    {"failing", "torch._C.*",
     "carry {api} in the shim: a binding this build of torch lacks, called from Python", "", "", "",
     ""},
    {"failing", "",
     "carry {api} in the shim (shim/python/devshim): the failure is raised inside it",
     "{equivalent}", "", "", ""},
    {"", "", "read the failure: no rule knows this kind of entry", "", "", "", ""},
}};

// What a CUDA API is on the device used: device "cpu", "mps", or empty for any accelerator
// (torch.accelerator). First match of api and device wins.
struct Equivalent {
  std::string_view api;
  std::string_view device;
  std::string_view equivalent;
};

constexpr std::array<Equivalent, 37> kEquivalents = {{
    {"torch.cuda.synchronize", "cpu", "torch.cpu.synchronize()"},
    {"torch.cuda.synchronize", "mps", "torch.mps.synchronize()"},
    {"torch.cuda.synchronize", "", "torch.accelerator.synchronize()"},
    {"torch.cuda.current_device", "cpu", "torch.cpu.current_device()"},
    {"torch.cuda.current_device", "", "torch.accelerator.current_device_index()"},
    {"torch.cuda.device_count", "cpu", "torch.cpu.device_count()"},
    {"torch.cuda.device_count", "mps", "torch.mps.device_count()"},
    {"torch.cuda.device_count", "", "torch.accelerator.device_count()"},
    {"torch.cuda.is_available", "cpu", "torch.cpu.is_available()"},
    {"torch.cuda.is_available", "", "torch.accelerator.is_available()"},
    {"torch.cuda.set_device", "cpu", "torch.cpu.set_device()"},
    {"torch.cuda.set_device", "", "torch.accelerator.set_device_index()"},
    {"torch.cuda.current_stream", "cpu", "torch.cpu.current_stream()"},
    {"torch.cuda.current_stream", "", "torch.accelerator.current_stream()"},
    {"torch.cuda.stream", "cpu", "torch.cpu.stream()"},
    {"torch.cuda.Stream", "", "torch.Stream(\"{device}\")"},
    {"torch.cuda.Event", "", "torch.Event(\"{device}\")"},
    {"torch.cuda.memory_allocated", "mps", "torch.mps.current_allocated_memory()"},
    {"torch.cuda.memory_allocated", "", "torch.accelerator.memory_allocated()"},
    {"torch.cuda.max_memory_allocated", "", "torch.accelerator.max_memory_allocated()"},
    {"torch.cuda.memory_reserved", "mps", "torch.mps.driver_allocated_memory()"},
    {"torch.cuda.memory_reserved", "", "torch.accelerator.memory_reserved()"},
    {"torch.cuda.reset_peak_memory_stats", "", "torch.accelerator.reset_peak_memory_stats()"},
    {"torch.cuda.empty_cache", "mps", "torch.mps.empty_cache()"},
    {"torch.cuda.empty_cache", "", "torch.accelerator.empty_cache()"},
    {"torch.cuda.mem_get_info", "", "torch.accelerator.get_memory_info()"},
    {"torch.cuda.get_device_capability", "cpu", "torch.cpu.get_capabilities()"},
    {"torch.cuda.get_device_capability", "", "torch.accelerator.get_device_capability()"},
    {"torch.cuda.manual_seed", "mps", "torch.mps.manual_seed()"},
    {"torch.cuda.manual_seed", "", "torch.manual_seed()"},
    {"torch.cuda.manual_seed_all", "", "torch.manual_seed()"},
    {"torch.cuda.get_rng_state", "mps", "torch.mps.get_rng_state()"},
    {"torch.cuda.get_rng_state", "cpu", "torch.get_rng_state()"},
    {"torch.cuda.amp.autocast", "", "torch.autocast(\"{device}\")"},
    {"torch.cuda.amp.GradScaler", "", "torch.amp.GradScaler(\"{device}\")"},
    {"torch.Tensor.cuda", "", "Tensor.to(\"{device}\")"},
    {"torch.nn.Module.cuda", "", "Module.to(\"{device}\")"},
}};

bool api_matches(std::string_view pattern, std::string_view api) {
  if (pattern.empty()) return true;
  if (pattern.find('*') == std::string_view::npos) return pattern == api;
  return fnmatch(std::string(pattern).c_str(), std::string(api).c_str(), 0) == 0;
}

// The module of "... No module named 'x.y'": "x.y" (as the message names it); else "it names".
std::string missing_module(std::string_view api) {
  constexpr std::string_view kNamed = "No module named ";
  const std::size_t at = api.find(kNamed);
  if (at == std::string_view::npos) return "it names";
  std::string_view rest = api.substr(at + kNamed.size());
  if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
    const char quote = rest.front();
    rest.remove_prefix(1);
    rest = rest.substr(0, rest.find(quote));
  } else {
    rest = rest.substr(0, rest.find(' '));
  }
  return rest.empty() ? std::string("it names") : std::string(rest);
}

std::string replaced(std::string_view text, std::string_view key, std::string_view value) {
  std::string out(text);
  for (std::size_t at = out.find(key); at != std::string::npos;
       at = out.find(key, at + value.size())) {
    out.replace(at, key.size(), value);
  }
  return out;
}

std::string equivalent_of(std::string_view api, std::string_view device) {
  for (const Equivalent& e : kEquivalents) {
    if (e.api != api) continue;
    if (e.device.empty() && device == "cpu") continue;  // torch.accelerator has no CPU
    if (!e.device.empty() && e.device != device) continue;
    return std::string(e.equivalent);
  }
  return "";
}

}  // namespace

std::string ShimSettings::value(std::string_view variable) const {
  auto it = values.find(std::string(variable));
  return it == values.end() ? std::string() : it->second;
}

ShimSettings shim_settings_of(const nlohmann::json& environment) {
  ShimSettings out;
  if (!environment.is_object()) return out;
  // The variables as the test processes had them, then what the shim itself says it used.
  if (auto vars = environment.find("shim_settings");
      vars != environment.end() && vars->is_object()) {
    for (const auto& [name, value] : vars->items()) {
      if (value.is_string()) out.values[name] = ascii_lower(value.get<std::string>());
    }
  }
  auto shim = environment.find("shim");
  if (shim == environment.end() || !shim->is_object()) return out;
  if (auto d = shim->find("cuda_lands_on"); d != shim->end() && d->is_string()) {
    out.device = d->get<std::string>();
  }
  if (auto objects = shim->find("device_objects"); objects != shim->end() && objects->is_string()) {
    out.values["TORCHDEVICE_DEVICE_OBJECTS"] = ascii_lower(objects->get<std::string>());
  }
  return out;
}

namespace {

// The first rule of kActions for an entry of kind and api (the last matches any).
const ActionRule& rule_for(std::string_view kind, std::string_view api) {
  return *std::find_if(kActions.begin(), kActions.end(), [&](const ActionRule& r) {
    return (r.kind.empty() || r.kind == kind) && api_matches(r.api, api);
  });
}

}  // namespace

bool gap_beyond_the_shim(std::string_view kind, std::string_view api) {
  return rule_for(kind, api).beyond_the_shim;
}

bool gap_tests_own(std::string_view kind, std::string_view api) {
  return rule_for(kind, api).tests_own;
}

GapAction gap_action(std::string_view kind, std::string_view api, std::string_view attributed,
                     const ShimSettings& settings) {
  const ActionRule& rule = rule_for(kind, api);
  const std::string device = settings.device.empty() ? "the device used" : settings.device;
  std::string setting;
  bool used_already = false;
  if (!rule.variable.empty()) {
    const std::string used = settings.value(rule.variable);
    std::string_view value = rule.value;
    if (const std::size_t bar = value.find('|'); bar != std::string_view::npos) {
      // The other of the listed values: none when the run does not say which it used.
      const std::string_view first = value.substr(0, bar), second = value.substr(bar + 1);
      if (used.empty()) {
        value = {};
      } else {
        value = used == first ? second : first;
      }
    }
    used_already = value.empty() || used == value;
    if (!used_already) setting = std::string(rule.variable) + "=" + std::string(value);
  }
  std::string action(used_already ? rule.action_when_set : rule.action);
  std::string equivalent(rule.equivalent);
  equivalent = replaced(equivalent, "{equivalent}", equivalent_of(api, settings.device));
  for (std::string* text : {&action, &equivalent}) {
    *text = replaced(*text, "{api}", api);
    *text = replaced(*text, "{device}", device);
    *text = replaced(*text, "{setting}", setting);
    *text = replaced(*text, "{carry}",
                     attributed.empty()
                         ? std::string("read its error: it names no torch API (no frame in torch "
                                       "or the shim), so the innermost frames of the file or its "
                                       "imports say what fails")
                         : "carry " + std::string(attributed) +
                               ", where the error is raised (the innermost frames)");
    *text = replaced(*text, "{module}", missing_module(api));
  }
  if (settings.device.empty() && equivalent.find("the device used") != std::string::npos) {
    equivalent.clear();  // "torch.device(\"the device used\")" names nothing
  }
  return {std::move(action), std::move(equivalent), std::move(setting), rule.beyond_the_shim};
}

}  // namespace devshim
