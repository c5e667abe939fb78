#include "parsers/gap_attribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "parsers/python_source.h"

namespace devshim {
namespace {

const std::string kGaps = std::string(PARSER_FIXTURES_DIR) + "/gaps/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Real failures of torch 2.13 (CPU build), with and without the shim, as pytest and unittest
// printed them; expected.json says which API each is the fault of.
TEST(GapAttribution, RealTorchFailuresAreAttributedToTheApiAtFault) {
  const auto expected = nlohmann::json::parse(read(kGaps + "expected.json"));
  ASSERT_GE(expected.size(), 14U);
  for (const auto& e : expected) {
    const std::string file = e["traceback"];
    SCOPED_TRACE(file);
    auto got = attribute_failure(e["exception"].get<std::string>(), e["message"].get<std::string>(),
                                 read(kGaps + file));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->api, e["api"].get<std::string>()) << got->why;
    EXPECT_EQ(got->kind, e["kind"].get<std::string>());
  }
}

TEST(GapAttribution, BothTracebackFormatsGiveTheSameFrames) {
  auto native = failure_frames(read(kGaps + "unittest-baseline-test_capability.txt"));
  auto pytest = failure_frames(read(kGaps + "pytest-baseline-test_capability.txt"));
  ASSERT_EQ(native.size(), 4U);
  ASSERT_EQ(pytest.size(), native.size());
  for (std::size_t i = 1; i < native.size(); ++i) {
    EXPECT_EQ(module_of_file(native[i].file), module_of_file(pytest[i].file)) << i;
    EXPECT_EQ(native[i].function, pytest[i].function) << i;
    EXPECT_EQ(native[i].line, pytest[i].line) << i;
  }
  EXPECT_EQ(native[0].code, "major, _ = torch.cuda.get_device_capability()");
  EXPECT_EQ(pytest[0].code, "major, minor = torch.cuda.get_device_capability()");
}

TEST(GapAttribution, MessagesOfEachKind) {
  auto mps = attribute_failure(
      "NotImplementedError",
      "The operator 'aten::_fft_r2c' is not currently implemented for the MPS device. If you "
      "want this op to be added in priority during the prototype phase of this feature, please "
      "comment on https://github.com/pytorch/pytorch/issues/77764.",
      "");
  ASSERT_TRUE(mps);
  EXPECT_EQ(mps->api, "aten::_fft_r2c");
  EXPECT_EQ(mps->kind, "unsupported_op");

  auto backend = attribute_failure(
      "NotImplementedError",
      "Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend.", "");
  ASSERT_TRUE(backend);
  EXPECT_EQ(backend->api, "aten::empty_strided");

  auto binding = attribute_failure("AttributeError",
                                   "module 'torch._C' has no attribute '_cuda_getDevice'", "");
  ASSERT_TRUE(binding);
  EXPECT_EQ(binding->api, "torch._C._cuda_getDevice");
  EXPECT_EQ(binding->kind, "failing");

  auto graph = attribute_failure(
      "NotImplementedError",
      "devshim: CUDA graphs (torch.cuda.make_graphed_callables) have no equivalent on mps", "");
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->api, "torch.cuda.make_graphed_callables");
  EXPECT_EQ(graph->kind, "cuda_only");
}

TEST(GapAttribution, AFailureOfTheTestItselfIsNoGap) {
  EXPECT_FALSE(attribute_failure("AssertionError", "1 != 2",
                                 "Traceback (most recent call last):\n"
                                 "  File \"/p/tests/test_x.py\", line 3, in test_x\n"
                                 "    self.assertEqual(1, 2)\n"
                                 "AssertionError: 1 != 2\n"));
}

// Every failing test of real accelerate runs under the shim (accelerate @16cb6eb8, torch 2.13
// CPU, suites/accelerate; TORCHDEVICE_DEVICE_OBJECTS=redirect, and =keep for test_hooks and
// test_modeling_utils), as the runner stored them (exception, message, traceback). Device-identity
// assertions (device objects compared) and device-type checks (type strings compared) are the
// two named semantic gaps; the others point nowhere into torch or the shim.
TEST(GapAttribution, RealAccelerateFailuresUnderTheShim) {
  const std::string dir = kGaps + "accelerate/";
  const auto expected = nlohmann::json::parse(read(dir + "expected.json"));
  ASSERT_EQ(expected.size(), 21U);
  int identity = 0, type = 0;
  for (const auto& e : expected) {
    SCOPED_TRACE(e["test"].get<std::string>());
    const std::string exception = e["exception"];
    auto got = attribute_failure(exception, e["message"].get<std::string>(),
                                 read(dir + e["traceback"].get<std::string>()));
    if (e["api"].is_null()) {
      EXPECT_FALSE(got.has_value()) << got->api << ": " << got->why;
      continue;
    }
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->api, e["api"].get<std::string>()) << got->why;
    EXPECT_EQ(got->kind, e["kind"].get<std::string>());
    identity += got->api == kGapDeviceIdentity ? 1 : 0;
    type += got->api == kGapDeviceType ? 1 : 0;
  }
  EXPECT_EQ(identity, 11);
  EXPECT_EQ(type, 4) << "'cpu' == 'cuda', 'cpu' == 'cuda:64', 'cpu' in ['cuda', ...]";
}

TEST(GapAttribution, DeviceIdentityIsAnAssertionNamingBothDevices) {
  const std::string dir = kGaps + "accelerate/";
  const auto expected = nlohmann::json::parse(read(dir + "expected.json"));
  for (const auto& e : expected) {
    if (e["api"].is_null()) continue;
    const std::string message = e["message"];
    // The same message raised as something else is not an identity assertion.
    auto other = attribute_failure("RuntimeError", message, "");
    EXPECT_FALSE(other.has_value() &&
                 (other->api == kGapDeviceIdentity || other->api == kGapDeviceType))
        << message;
  }
  // The assertion decides what is compared: a device named in pytest's "where" lines, but not
  // as the type or index read, does not count.
  EXPECT_FALSE(attribute_failure("AssertionError",
                                 "assert 0 > 0\n +  where 0 = f(device(type='cpu'), 'cuda')", "")
                   .has_value());
}

// Real failures captured for issue 32 (tests/parsers/fixtures/gaps/issue32/README.md): lightning
// and ignite under the shim with TORCHDEVICE_DEVICE_OBJECTS=keep. The rules read the whole
// explanation: ignite's identity failure says "<class 'torch.device'>:cpu vs ..." on its first
// line and "assert device(type='cpu') == device(type='cuda', index=0)" on the next; lightning's
// "assert False" and "assert None == 0" name the device's type and index only in "+ where" lines;
// ignite's `assert all([t.device.type == ...])` (TORCHDEVICE_DEVICE_OBJECTS=redirect) shows no
// value at all, only the statement that failed reads the device type; its "cpu vs cuda:0" (keep)
// is the test's own message, the assertion comparing device objects on the line after it;
// Lightning Fabric's `assert all(param.device == expected_device for ...)` shows no value either.
// torchmetrics puts its own message first: "Result not on correct device: cpu" above "assert
// 'cpu' == 'cuda'", and "forward cache was not moved ..." above "assert False" of `assert
// is_cuda`. ignite's and torchmetrics' `pytest.raises(RuntimeError, match="...same device...")`
// and Fabric's `pytest.warns(..., match=match)` (match assigned "...different devices..." above)
// expect what one device never gives; ignite's bare `pytest.raises(AssertionError)` names nothing.
// gpytorch's unittest `assertNotEqual(kernel.device, torch.device("cpu"))` after `.to("cuda")`
// says "device(type='cpu') == device(type='cpu')"; its test that reads an attribute a prior
// lacks fails inside nn.Module.__getattr__, which is not torch's fault. opacus' mixed-precision
// test runs a Conv3d model in half precision, which the CPU's avg_pool3d kernel lacks. MONAI's
// GMM test JIT-builds its CUDA extension once CUDA is "there" (no CUDA_HOME). Under
// TORCHDEVICE_DEVICE_OBJECTS=redirect, Fabric's CUDAAccelerator and torchtnt's
// get_nvidia_smi_gpu_stats (through torch._utils._get_device_index) refuse the CPU device that
// torch.device("cuda", 0) then is. stable-baselines3 under keep compares the type of the device
// object it built for "cuda" or "auto" with the placed model's (`get_device(device).type ==
// model.policy.device.type`; its buffer test through `desired_device = get_device(device).type`,
// assigned above the assertion), which redirect answers. torchrl prints native
// tracebacks (--tb=native): its `.device.type == "cuda"` is a type check; its memory helper
// refuses the device object redirect built as the CPU, and its `pytest.raises(RuntimeError)`
// that saw no cross-device error names no device in its line or its block, so neither is
// attributed. Kymatio's `pytest.raises(TypeError)` and ignite's `pytest.raises(AssertionError)`
// name nothing either, but their blocks (read from the source: the log never prints them) put
// tensors on CUDA (`.cuda()` on one operand of two; a helper given "cuda" that asserts CUDA's
// non-determinism): a CUDA-only error. peft's `assert {p.device.type for p in ...} ==
// {self.torch_device}` sits in a helper module pytest does not rewrite: a bare AssertionError,
// only its statement reads the device type. Its PVeRA test takes a looser tolerance when the
// device's name is not "cpu" (set above the assertion, which reads only `rtol`): not attributed.
// torchdata's test imported torch.testing._internal.common_cuda, whose module-level assertion
// (CUDA not initialised on import) failed: pytest lists that frame's source from the module's
// first line, so the frame is the module's, not the first function defined above the line.
TEST(GapAttribution, RealFailuresAreReadWhole) {
  const std::string dir = kGaps + "issue32/";
  const auto expected = nlohmann::json::parse(read(dir + "expected.json"));
  ASSERT_EQ(expected.size(), 44U);
  std::map<std::string, int> by_api;
  for (const auto& e : expected) {
    SCOPED_TRACE(e["test"].get<std::string>());
    const std::string exception = e["exception"].get<std::string>();
    const std::string message = e["message"].get<std::string>();
    const std::string traceback = read(dir + e["traceback"].get<std::string>());
    // The whole statement where the log printed its first line: the runner reads it from the
    // test's source (statement_in_source); the fixture holds those lines of the real file.
    std::string statement;
    if (e.contains("statement")) {
      ASSERT_TRUE(frame_of_cut_statement(exception, message, traceback).has_value());
      statement = statement_at(read(dir + e["statement"].get<std::string>()), 1);
      // The printed line alone says nothing, or what the whole statement says.
      if (auto alone = attribute_failure(exception, message, traceback)) {
        EXPECT_EQ(alone->api, e["api"].get<std::string>());
      }
    } else {
      EXPECT_FALSE(frame_of_cut_statement(exception, message, traceback).has_value());
    }
    auto got = attribute_failure(exception, message, traceback, statement);
    if (e["api"].is_null()) {
      EXPECT_FALSE(got.has_value()) << got->api << ": " << got->why;
      continue;
    }
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->api, e["api"].get<std::string>()) << got->why;
    EXPECT_EQ(got->kind, e["kind"].get<std::string>());
    ++by_api[got->api];
  }
  EXPECT_EQ(by_api[std::string(kGapDeviceIdentity)], 6);
  EXPECT_EQ(by_api[std::string(kGapDeviceType)], 12);
  EXPECT_EQ(by_api[std::string(kGapCudaObjectType)], 3);
  EXPECT_EQ(by_api[std::string(kGapCrossDevice)], 3);
  EXPECT_EQ(by_api[std::string(kGapCudaOnlyError)], 2);
  EXPECT_EQ(by_api[std::string(kGapCudaExtension)], 1);
  EXPECT_EQ(by_api[std::string(kGapCudaDeviceRefused)], 3);
  EXPECT_EQ(by_api[std::string(kGapPortInUse)], 1);
  EXPECT_EQ(by_api[std::string(kGapNetworkUnreachable)], 2);
}

// diffusers' hub test under HF_HUB_OFFLINE=1: its OSError names a missing config.json, and only
// the exception chained above it (huggingface_hub's OfflineModeIsEnabled, at the first column)
// says the hub was out of reach. The same words in the source pytest printed (a `raise` that
// never ran) say nothing: the traceback with its exception lines indented as source is not
// attributed so. transformers' own message says it alone.
TEST(GapAttribution, TheNetworkOutOfReachIsSaidByTheFailureNotByItsSource) {
  const std::string tb = read(kGaps + "issue32/diffusers-shim-test_from_pretrained_hub.txt");
  const std::string message =
      "fusing/autoencoder-kl-dummy does not appear to have a file named config.json.";
  auto got = attribute_failure("OSError", message, tb);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->api, kGapNetworkUnreachable) << got->why;

  std::string as_source;
  std::size_t indented = 0;
  for (std::size_t start = 0; start < tb.size();) {
    const std::size_t end = std::min(tb.find('\n', start), tb.size());
    std::string line = tb.substr(start, end - start);
    if (!line.empty() && line.front() != ' ' &&
        line.find("offline mode is enabled") != std::string::npos) {
      line = "    " + line;
      ++indented;
    }
    as_source += line + "\n";
    start = end + 1;
  }
  EXPECT_EQ(indented, 2U);  // the exception and the local that holds it
  EXPECT_NE(as_source.find("outgoing traffic has been disabled"), std::string::npos);
  got = attribute_failure("OSError", message, as_source);
  EXPECT_FALSE(got.has_value() && got->api == kGapNetworkUnreachable);

  got = attribute_failure(
      "OSError",
      "We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them "
      "in the cached files.",
      "");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->api, kGapNetworkUnreachable);
  EXPECT_EQ(got->kind, kGapFailing);
}

// text with its first `from` replaced by `to`: a real traceback edited into a near miss.
std::string replaced_once(std::string text, std::string_view from, std::string_view to) {
  return text.replace(text.find(from), from.size(), to);
}

// stable-baselines3's real failure under keep, and near misses: only a comparison of two types
// read from objects, with no literal 'cuda', is the type of a CUDA device object.
TEST(GapAttribution, ATypeComparedWithAnObjectsTypeIsACudaDeviceObjects) {
  // The api a real failure gets with `from` in its traceback replaced by `to`.
  const auto edited_api = [](const std::string& tb, std::string_view message, std::string_view from,
                             std::string_view to) {
    auto got = attribute_failure("AssertionError", message, replaced_once(tb, from, to));
    return got ? got->api : std::string("none");
  };
  const std::string tb = read(kGaps + "issue32/sb3-keep-test_predict_auto-CartPole-v1-DQN.txt");
  const std::string_view statement = "get_device(device).type == model.policy.device.type";
  const auto api = [&](std::string_view to) {
    return edited_api(tb, "assert 'cuda' == 'cpu'", statement, to);
  };
  EXPECT_EQ(api(statement), kGapCudaObjectType);
  EXPECT_EQ(api("get_device(device).type != model.policy.device.type, f\"{device}, {x}\""),
            kGapCudaObjectType)
      << "the test's own message is not an operand";
  EXPECT_EQ(api("\"cuda\" == model.policy.device.type"), kGapDeviceType) << "a literal";
  EXPECT_EQ(api("get_device('cuda').type == model.policy.device.type"), kGapDeviceType)
      << "a literal 'cuda' anywhere in the statement may be where the type came from";
  EXPECT_EQ(api("expected == model.policy.device.type"), kGapDeviceType)
      << "a string the test holds";
  EXPECT_EQ(api("get_device(device).type == model.policy.device.type.upper()"), kGapDeviceType);
  // A name counts as an object's type where the test's lines above assign it one.
  const std::string buffers =
      read(kGaps + "issue32/sb3-keep-test_device_buffer_auto-ReplayBuffer.txt");
  const auto buffer_api = [&](std::string_view to) {
    return edited_api(buffers, "assert 'cpu' == 'cuda'", "get_device(device).type", to);
  };
  EXPECT_EQ(buffer_api("get_device(device).type"), kGapCudaObjectType);
  EXPECT_EQ(buffer_api("\"cuda\""), kGapDeviceType);
  EXPECT_EQ(buffer_api("get_device('cuda').type"), kGapDeviceType);
  EXPECT_EQ(buffer_api("str(get_device(device))"), kGapDeviceType);
  // The assertion decides: types of the device used alone are no CUDA type check.
  EXPECT_FALSE(
      attribute_failure("AssertionError", "assert 'cpu' == 'mps'",
                        replaced_once(tb, "assert 'cuda' == 'cpu'", "assert 'cpu' == 'mps'"))
          .has_value());
}

TEST(GapAttribution, NnModulesGetattrIsNotBlamedForWhatItsCallerAskedFor) {
  const auto traceback = [](const std::string& file) {
    return "Traceback (most recent call last):\n"
           "  File \"/p/test/test_prior.py\", line 16, in test_to_gpu\n"
           "    prior.concentration\n"
           "  File \"" +
           file +
           "\", line 1967, in __getattr__\n"
           "    raise AttributeError(\n"
           "AttributeError: 'HalfNormalPrior' object has no attribute 'concentration'\n";
  };
  const std::string message = "'HalfNormalPrior' object has no attribute 'concentration'";
  EXPECT_FALSE(attribute_failure("AttributeError", message,
                                 traceback("/v/site-packages/torch/nn/modules/module.py"))
                   .has_value());
  // The shim's own __getattr__ still counts: an API it does not carry.
  auto shim = attribute_failure("AttributeError", message,
                                traceback("/r/shim/python/devshim/cuda_masquerade.py"));
  ASSERT_TRUE(shim.has_value());
  EXPECT_EQ(shim->api, "devshim.cuda_masquerade.__getattr__");
}

TEST(GapAttribution, AnExpectedErrorIsAboutDevicesOnlyWhenItsStatementSaysSo) {
  const std::string tb =
      "    def test_x():\n"
      "        match = r\"parameters on different devices\"\n"
      ">       with pytest.raises(RuntimeError, match=match):\n"
      "E       Failed: DID NOT RAISE <class 'RuntimeError'>\n"
      "\n"
      "tests/test_x.py:7: Failed\n";
  const auto edited = [&tb](std::string_view from, std::string_view to) {
    return replaced_once(tb, from, to);
  };
  const std::string raised = "DID NOT RAISE <class 'RuntimeError'>";
  auto got = attribute_failure("Failed", raised, tb);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->api, kGapCrossDevice);
  // The variable match= names must be the one that says "device".
  EXPECT_FALSE(
      attribute_failure("Failed", raised, edited("match=match", "match=other")).has_value());
  EXPECT_FALSE(attribute_failure("Failed", raised, edited("devices", "dtypes")).has_value());
  // Said in the statement itself.
  EXPECT_TRUE(
      attribute_failure("Failed", raised, edited("match=match", "match=\"not on the same device\""))
          .has_value());
  // Another failure of the same statement is not this gap.
  EXPECT_FALSE(attribute_failure("Failed", "Timeout", tb).has_value());
}

// Kymatio's real failure: a `pytest.raises` whose block, below the line pytest shows, puts one
// operand on CUDA. The block decides, and only for an expectation that saw nothing.
TEST(GapAttribution, AnExpectedErrorWhoseBlockPutsTensorsOnCudaIsCudaOnly) {
  const std::string dir = kGaps + "issue32/";
  const std::string tb = read(dir + "kymatio-redirect-test_cdgmm_exceptions_TorchBackend2D.txt");
  const std::string source =
      read(dir + "kymatio-redirect-test_cdgmm_exceptions_TorchBackend2D.statement.txt");
  const std::string raised = "DID NOT RAISE TypeError";
  const auto frame = frame_of_cut_statement("Failed", raised, tb);
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->line, 241);
  EXPECT_EQ(frame->file, "tests/scattering2d/test_torch_backend_2d.py");
  const std::string block = statement_at(source, 1);
  EXPECT_EQ(block,
            "with pytest.raises(TypeError) as exc: backend.cdgmm(torch.empty(3, 4, 5, 2), "
            "torch.empty(4, 5, 1).cuda())");
  auto got = attribute_failure("Failed", raised, tb, block);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->api, kGapCudaOnlyError);
  // The expectation's own call decides first: one about devices is cross-device, whatever the
  // block does.
  auto about_devices =
      attribute_failure("Failed", raised, tb,
                        replaced_once(block, "(TypeError)", "(TypeError, match='same device')"));
  ASSERT_TRUE(about_devices.has_value());
  EXPECT_EQ(about_devices->api, kGapCrossDevice);
  // A device named in the block is not the expectation's: `device="cuda"` there is a CUDA
  // placement.
  auto placed = attribute_failure("Failed", raised, tb,
                                  replaced_once(block, ".cuda()", ".to(device=\"cuda\")"));
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->api, kGapCudaOnlyError);
  // Near misses: a block that moves nothing to CUDA; another failure of the same block.
  EXPECT_FALSE(
      attribute_failure("Failed", raised, tb, replaced_once(block, ".cuda()", ".double()")));
  EXPECT_FALSE(attribute_failure("Failed", raised, tb,
                                 replaced_once(block, ".cuda()", ".to(torch.float64)")));
  EXPECT_TRUE(
      attribute_failure("Failed", raised, tb, replaced_once(block, ".cuda()", ".to('cuda:0')")));
  EXPECT_FALSE(frame_of_cut_statement("AssertionError", "assert False", tb).has_value());
  // A `with` that is not pytest's expectation is read as one statement only.
  EXPECT_EQ(statement_at("with open(p) as f:\n    f.read().cuda()\n", 1), "with open(p) as f:");
}

TEST(GapAttribution, AnExpectationBlockIsReadToItsEnd) {
  const std::string source =
      "    def test_x(self):\n"
      "        with pytest.raises(\n"
      "                TypeError) as exc:\n"
      "            f(x,\n"
      "\n"
      "              y.cuda())\n"
      "            g()\n"
      "        assert 'GPU' in str(exc.value)\n";
  EXPECT_EQ(statement_at(source, 2), "with pytest.raises( TypeError) as exc: f(x, y.cuda()) g()");
  // At most 40 lines in all.
  std::string long_block = "with pytest.warns(UserWarning):\n";
  for (int i = 0; i < 100; ++i) long_block += "    b()\n";
  const std::string cut = statement_at(long_block, 1);
  EXPECT_EQ(std::count(cut.begin(), cut.end(), 'b'), 39);
}

TEST(GapAttribution, AnAssertionShowingNoValueIsReadFromItsStatement) {
  const std::string tb =
      "    def test_x():\n"
      ">       assert all([t.device.type == 'cuda' for t in ts])\n"
      "E       assert False\n"
      "E        +  where False = all([False, False])\n"
      "\n"
      "tests/test_x.py:7: AssertionError\n";
  const auto edited = [&tb](std::string_view from, std::string_view to) {
    return replaced_once(tb, from, to);
  };
  auto got = attribute_failure("AssertionError", "assert False", tb);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->api, kGapDeviceType);
  // A statement that reads the device type but whose assertion shows values is decided by them.
  EXPECT_FALSE(attribute_failure("AssertionError", "assert 3 == 4",
                                 edited("E       assert False", "E       assert 3 == 4"))
                   .has_value());
  // One that compares device objects is identity.
  auto compared = attribute_failure("AssertionError", "assert False",
                                    edited("t.device.type == 'cuda'", "t.device == expected"));
  ASSERT_TRUE(compared.has_value());
  EXPECT_EQ(compared->api, kGapDeviceIdentity);
  // A statement that reads no device says nothing.
  EXPECT_FALSE(
      attribute_failure("AssertionError", "assert False", edited("t.device.type", "t.dtype.is_fp"))
          .has_value());
}

TEST(GapAttribution, AStatementIsReadUntilItsBracketsClose) {
  const std::string source =
      "def test_x(self):\n"
      "    self.assertTrue(\n"
      "        all(p.device.type == 'cuda'\n"
      "            for p in ps))\n"
      "    x = [1,\n"
      "         2]\n";
  EXPECT_EQ(statement_at(source, 2), "self.assertTrue( all(p.device.type == 'cuda' for p in ps))");
  EXPECT_EQ(statement_at(source, 1), "def test_x(self):");
  EXPECT_EQ(statement_at(source, 5), "x = [1, 2]");
  EXPECT_EQ(statement_at(source, 7), "");
  EXPECT_EQ(statement_at(source, 0), "");
  // A statement never closed stops after 40 lines.
  std::string open = "f(\n";
  for (int i = 0; i < 100; ++i) open += "a,\n";
  const std::string cut = statement_at(open, 1);
  EXPECT_EQ(std::count(cut.begin(), cut.end(), 'a'), 39);
}

TEST(GapAttribution, FailureExplanationIsEveryLineOfTheAssertion) {
  const std::string dir = kGaps + "issue32/";
  // pytest: the E lines, the exception's name off the first.
  const std::string ignite =
      failure_explanation("<class 'torch.device'>:cpu vs <class 'torch.device'>:cuda:0",
                          read(dir + "ignite-keep-test_accumulator_device_gloo-False.txt"));
  EXPECT_EQ(ignite.substr(0, ignite.find('\n')),
            "<class 'torch.device'>:cpu vs <class 'torch.device'>:cuda:0");
  EXPECT_NE(ignite.find("\nassert device(type='cpu') == device(type='cuda', index=0)\n"),
            std::string::npos)
      << ignite;
  const std::string lightning = failure_explanation(
      "assert None == 0", read(dir + "lightning-keep-test_single_gpu_batch_parse.txt"));
  EXPECT_NE(lightning.find("+  where None = device(type='cpu').index"), std::string::npos)
      << lightning;
  // Python's format (unittest): the exception's lines after the last frame.
  EXPECT_EQ(failure_explanation("Torch not compiled with CUDA enabled",
                                read(kGaps + "unittest-baseline-test_capability.txt")),
            "Torch not compiled with CUDA enabled");
  // Without a traceback: the message.
  EXPECT_EQ(failure_explanation("assert 1 == 2", ""), "assert 1 == 2");
}

TEST(GapAttribution, InnermostFramesSkipTheFrameworkAndTheImportMachinery) {
  const std::string dir = kGaps + "issue32/";
  for (const char* file : {"lightning-keep-collection.txt", "ignite-oldshim-collection.txt"}) {
    SCOPED_TRACE(file);
    const auto frames = innermost_frames(read(dir + file), 3);
    ASSERT_EQ(frames.size(), 3U);
    EXPECT_EQ(frames[0].function, "getfile");
    EXPECT_EQ(module_of_file(frames[1].file), "torch.package.package_importer");
    EXPECT_EQ(frames[1].function, "_patched_getfile");
    EXPECT_EQ(frames[2].function, "getsourcefile");
  }
}

// The shapes of CUDA-only code in real suites: torcheval's `if torch.cuda.is_available():` after
// its CPU check (test_binned_auprc.py), gpytorch's whole test body under one, a flag, an early
// return when CUDA is absent.
TEST(GapAttribution, ALineInABranchThatAsksForCudaIsFound) {
  const std::string source =
      "def test(self):\n"                          // 1
      "    check(x)\n"                             // 2
      "    # Also test for cuda\n"                 // 3
      "    if torch.cuda.is_available():\n"        // 4
      "        y = f(x.to(\"cuda\"))\n"            // 5
      "\n"                                         // 6
      "        for c in y:\n"                      // 7
      "            torch.testing.assert_close(\n"  // 8
      "                c,\n"                       // 9
      "            )\n"                            // 10
      "    else:\n"                                // 11
      "        check(y)\n"                         // 12
      "    if TEST_CUDA and n > 1:\n"              // 13
      "        check(z)\n"                         // 14
      "    elif torch.cuda.device_count() > 1:\n"  // 15
      "        check(w)\n";                        // 16
  EXPECT_EQ(cuda_branch_at(source, 5), 4);
  EXPECT_EQ(cuda_branch_at(source, 8), 4);   // nested in a loop of the branch
  EXPECT_EQ(cuda_branch_at(source, 2), 0);   // before it
  EXPECT_EQ(cuda_branch_at(source, 12), 0);  // its else
  EXPECT_EQ(cuda_branch_at(source, 14), 13);
  EXPECT_EQ(cuda_branch_at(source, 16), 15);
  EXPECT_EQ(cuda_branch_at(source, 6), 0);   // a blank line
  EXPECT_EQ(cuda_branch_at(source, 99), 0);  // past the end
  EXPECT_EQ(cuda_branch_at(source, 0), 0);
}

TEST(GapAttribution, AnEarlyReturnWithoutCudaMakesTheRestOfTheBlockCudaOnly) {
  const std::string source =
      "def test_cuda(self):\n"                        // 1
      "    if not torch.cuda.is_available():\n"       // 2
      "        return\n"                              // 3
      "    m = Model().cuda()\n"                      // 4
      "    with torch.no_grad():\n"                   // 5
      "        self.assertEqual(m(x).shape, (2,))\n"  // 6
      "def test_other(self):\n"                       // 7
      "    self.assertTrue(ok)\n";                    // 8
  EXPECT_EQ(cuda_branch_at(source, 4), 2);
  EXPECT_EQ(cuda_branch_at(source, 6), 2);
  EXPECT_EQ(cuda_branch_at(source, 8), 0);  // another function
}

TEST(GapAttribution, ABranchOpenToOtherCasesIsNotCudaOnly) {
  for (const char* header :
       {"if not torch.cuda.is_available():", "if torch.cuda.is_available() or cpu_ok:",
        "if device == \"cuda\":", "while torch.cuda.is_available():",
        "if torch.backends.mps.is_available():"}) {
    SCOPED_TRACE(header);
    EXPECT_EQ(cuda_branch_at(std::string("def t():\n    ") + header + "\n        f()\n", 3), 0);
  }
  // An early exit is the body's last statement: a skip, a raise, a return after a print. A body
  // that goes on does not make the rest CUDA-only.
  for (const char* body : {"self.skipTest('no CUDA')", "print('no CUDA')\n        return",
                           "raise unittest.SkipTest('no CUDA')"}) {
    SCOPED_TRACE(body);
    EXPECT_EQ(cuda_branch_at(std::string("def t():\n    if not torch.cuda.is_available():\n"
                                         "        ") +
                                 body + "\n    f()\n",
                             body[0] == 'p' ? 5 : 4),
              2);
  }
  EXPECT_EQ(cuda_branch_at("def t():\n    if not torch.cuda.is_available():\n        "
                           "x = 'cpu'\n    f(x)\n",
                           4),
            0);
}

// torcheval's fbgemm test calls its metric, which `@torch.inference_mode()` wraps
// (torch.utils._contextlib.decorate_context), and the metric's own check raises "Tensors have to
// be on GPU" (a real failure under the shim): the project's code raised it, not the torch frame
// that called it. The same traceback cut after the torch frame is torch's.
TEST(GapAttribution, AFailureRaisedInTheProjectsCodeThatTorchCalledIsNotTorchs) {
  const std::string tb = read(kGaps + "issue32/torcheval-redirect-test_auroc_fbgemm.txt");
  EXPECT_FALSE(attribute_failure("AssertionError", "Tensors have to be on GPU", tb));
  const std::string in_torch =
      replaced_once(tb, "torcheval/metrics/functional/classification/auroc.py:163: AssertionError",
                    "/work/venv-te/lib/python3.11/site-packages/torch/utils/_contextlib.py:124: "
                    "AssertionError");
  const auto got = attribute_failure("AssertionError", "Tensors have to be on GPU",
                                     in_torch.substr(0, in_torch.find("torcheval/metrics/")) +
                                         in_torch.substr(in_torch.rfind("/work/venv-te/")));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->api.rfind("torch.utils._contextlib", 0), 0U) << got->api;
  for (std::string_view file : {"torcheval/metrics/functional/classification/auroc.py",
                                "tests/metrics/test_x.py", "/tmp/sbi/sbi/utils.py"}) {
    EXPECT_TRUE(is_project_frame({std::string(file), 1, "f", ""})) << file;
  }
  for (std::string_view file :
       {"/work/venv-te/lib/python3.11/site-packages/torch/utils/_contextlib.py",
        "/usr/lib/python3.11/copy.py", "/opt/venv/lib/python3.11/site-packages/numpy/core.py",
        "<frozen importlib._bootstrap>", "/work/main/shim/python/devshim/tensors.py"}) {
    EXPECT_FALSE(is_project_frame({std::string(file), 1, "f", ""})) << file;
  }
}

// pytest's strict XPASS is a failure with no exception whose message says so (sbi's, captured
// under the shim); an exception's message that only quotes it is not one.
TEST(GapAttribution, AStrictXpassIsAMarkThatDidNotHold) {
  const std::string tb =
      read(kGaps + "issue32/sbi-shim-test_boxuniform_device_handling_cpu-gpu.txt");
  const auto got = attribute_failure("", "[XPASS(strict)]", tb);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->api, kGapStrictXpass);
  EXPECT_EQ(got->kind, kGapFailing);
  const auto quoted = attribute_failure("AssertionError", "[XPASS(strict)] in the summary", tb);
  EXPECT_FALSE(quoted && quoted->api == kGapStrictXpass);
}

TEST(GapAttribution, ParametersThatNameTheCpuAndAGpu) {
  for (std::string_view name :
       {"test_x[cpu-gpu]", "test_x[gpu-cpu]", "test_x[gaussian-cpu-gpu-NPE_C-maf-direct]",
        "test_y[cuda:0-CPU]", "test_z[cpu_cuda]", "test_w[cuda, cpu]"}) {
    EXPECT_TRUE(params_name_cpu_and_gpu(name)) << name;
  }
  for (std::string_view name : {"test_cpu_to_gpu", "test_x[cpu]", "test_x[gpu-gpu]",
                                "test_x[cuda:0]", "test_x[cpus-gpus]", "test_x[mps-cpu]", ""}) {
    EXPECT_FALSE(params_name_cpu_and_gpu(name)) << name;
  }
}

TEST(GapAttribution, ModulesComeFromTheTorchOrShimPackagePath) {
  EXPECT_EQ(module_of_file("/venv/lib/python3.11/site-packages/torch/cuda/__init__.py"),
            "torch.cuda");
  EXPECT_EQ(module_of_file("../venv/lib/python3.11/site-packages/torch/nn/modules/module.py"),
            "torch.nn.modules.module");
  EXPECT_EQ(module_of_file("/src/devshim/shim/python/devshim/cuda_masquerade.py"),
            "devshim.cuda_masquerade");
  EXPECT_EQ(module_of_file("tests/test_x.py"), "");
}

}  // namespace
}  // namespace devshim
