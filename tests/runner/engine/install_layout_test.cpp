// Where the runner finds its own files (install_layout.h), and what run_device_probe says of a
// probe that cannot start (device_probe.h): real files and processes in a temporary folder.
#include "runner/engine/install_layout.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "runner/engine/device_probe.h"
#include "tests/support/test_support.h"

namespace devshim {
namespace {

namespace fs = std::filesystem;

TEST(InstallLayout, TheExecutableIsThisProgramAndItsDataLieBesideItsFolder) {
  const fs::path self = executable_path();
  ASSERT_FALSE(self.empty());
  EXPECT_TRUE(self.is_absolute());
  EXPECT_EQ(self.filename(), "runner_unit_tests");
  EXPECT_TRUE(fs::equivalent(self, fs::read_symlink("/proc/self/exe")));
  EXPECT_EQ(installed_data_dir(), (self.parent_path().parent_path() / "share" / "devshim"));
  EXPECT_EQ(default_shim_dir({}), installed_data_dir() / "shim");
  EXPECT_EQ(zygote_script({}), installed_data_dir() / "zygote" / "devshim_zygote.py");
}

TEST(InstallLayout, EnvironmentVariablesNameEachFileInstead) {
  const Environment env = {{"DEVSHIM_SHIM_DIR", "/opt/shim"},
                           {"DEVSHIM_ZYGOTE", "/opt/zygote.py"},
                           {"DEVSHIM_PROBE", "/opt/probe"}};
  EXPECT_EQ(default_shim_dir(env), "/opt/shim");
  EXPECT_EQ(zygote_script(env), "/opt/zygote.py");
  EXPECT_EQ(find_device_probe(env), "/opt/probe");
}

TEST(InstallLayout, TheProbeIsFoundOnPathWhenNotBesideTheRunner) {
  testing::TempDir dir;
  testing::write_file(dir.path() / "devshim-probe", "#!/bin/sh\nexit 0\n");
  fs::permissions(dir.path() / "devshim-probe", fs::perms::owner_all);
  const Environment env = {{"PATH", dir.path().string()}};
  EXPECT_EQ(find_device_probe(env), dir.path() / "devshim-probe");
}

TEST(DeviceProbe, AProbeThatCannotStartSaysWhyInItsOwnWords) {
  // As an installed probe does when the LibTorch it was built against is not there.
  testing::TempDir dir;
  const fs::path probe = dir.path() / "devshim-probe";
  testing::write_file(probe,
                      "#!/bin/sh\necho 'devshim-probe: error while loading shared libraries: "
                      "libtorch_cpu.so: cannot open shared object file' >&2\nexit 127\n");
  fs::permissions(probe, fs::perms::owner_all);
  const nlohmann::json result = run_device_probe({{"DEVSHIM_PROBE", probe.string()}});
  ASSERT_TRUE(result.contains("probe_error")) << result.dump();
  EXPECT_EQ(result["probe_error"],
            probe.string() +
                " exited with 127: devshim-probe: error while loading shared libraries: "
                "libtorch_cpu.so: cannot open shared object file");
  EXPECT_EQ(result["probe_path"], probe.string());
}

}  // namespace
}  // namespace devshim
