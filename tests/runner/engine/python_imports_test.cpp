// imported_packages: what a Python file's text says it imports, which decides the warm start's
// preload and which files wait for it (runner/engine/python_imports.h).
#include "runner/engine/python_imports.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace devshim {
namespace {

TEST(ImportedPackages, ReadsEveryFormOfImportAtAnyIndentation) {
  testing::TempDir dir;
  testing::write_file(dir / "test_x.py",
                      "import os, torch.nn as nn\n"
                      "from numpy.linalg import norm\n"
                      "from . import sibling\n"
                      "from .helpers import thing\n"
                      "if True:\n"
                      "    import transformers  # comment\n"
                      "def f():\n"
                      "\tfrom accelerate import Accelerator\n"
                      "x = 'import notthis'\n"
                      "importlib = 1\n"
                      "fromage = 2\n"
                      "import a;import b\n");
  EXPECT_EQ(imported_packages(dir / "test_x.py"),
            (std::set<std::string>{"a", "accelerate", "numpy", "os", "torch", "transformers"}));
}

TEST(ImportedPackages, AnUnreadableFileImportsNothing) {
  EXPECT_TRUE(imported_packages("/nonexistent/test_x.py").empty());
}

TEST(TopLevelPackage, DropsSubmodulesAndTheOptionalMark) {
  EXPECT_EQ(top_level_package("?torch._dynamo"), "torch");
  EXPECT_EQ(top_level_package("accelerate.test_utils"), "accelerate");
  EXPECT_EQ(top_level_package("pytest"), "pytest");
}

}  // namespace
}  // namespace devshim
