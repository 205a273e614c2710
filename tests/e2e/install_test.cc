// `cmake --install` (what `make install PREFIX=...` runs) puts the binary, the man page and the
// bash completion under the prefix, and the man page renders with groff (and man, when present).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

namespace fs = std::filesystem;

// The build tree these tests belong to and the cmake that configured it (tests/CMakeLists.txt).
#ifndef ORDO_BUILD_DIR
#error "tests/CMakeLists.txt defines ORDO_BUILD_DIR for the e2e tests"
#endif

class InstallTest : public ::testing::Test {
 protected:
  // One installation for every test here.
  static void SetUpTestSuite() {
    prefix_ = new TempDir();
    install_ = new CliResult(RunProgram(
        ORDO_CMAKE_COMMAND, {"--install", ORDO_BUILD_DIR, "--prefix", prefix_->path().string()}));
  }
  static void TearDownTestSuite() {
    delete install_;
    delete prefix_;
  }
  static fs::path Installed(const std::string& relative) { return prefix_->path() / relative; }

  static TempDir* prefix_;
  static CliResult* install_;
};

TempDir* InstallTest::prefix_ = nullptr;
CliResult* InstallTest::install_ = nullptr;

TEST_F(InstallTest, BinaryManPageAndCompletionUnderThePrefix) {
  ASSERT_EQ(install_->exit_code, 0) << install_->out << install_->err;
  const fs::path binary = Installed("bin/ordo");
  const fs::path man = Installed("share/man/man1/ordo.1");
  const fs::path completion = Installed("share/bash-completion/completions/ordo");
  ASSERT_TRUE(fs::exists(binary));
  ASSERT_TRUE(fs::exists(man));
  ASSERT_TRUE(fs::exists(completion));
  EXPECT_NE(fs::status(binary).permissions() & fs::perms::owner_exec, fs::perms::none);
  // The installed binary runs, and the files are what it generates from its usage texts.
  const CliResult version = RunProgram(binary.string(), {"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("ordo ", 0), 0u) << version.out;
  EXPECT_EQ(ReadWhole(man), RunOrdo({"help", "--man"}).out);
  EXPECT_EQ(ReadWhole(completion), RunOrdo({"help", "--bash-completion"}).out);
}

TEST_F(InstallTest, ManPageRendersWithGroff) {
  ASSERT_EQ(install_->exit_code, 0) << install_->out << install_->err;
  if (RunProgram("groff", {"--version"}).exit_code != 0) {
    GTEST_SKIP() << "groff is not installed (Debian: apt-get install groff-base): the installed "
                    "man page was not rendered";
  }
  // -ww: every warning (a bad request, an unknown escape) on stderr; -P-cbou: plain text.
  const CliResult page = RunProgram(
      "groff", {"-man", "-Tascii", "-ww", "-P-cbou", Installed("share/man/man1/ordo.1").string()});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_EQ(page.err, "");
  for (const char* expected :
       {"NAME", "ordo - constraint-aware GPU allocator", "SYNOPSIS", "DESCRIPTION", "COMMANDS",
        "ordo compare SCENARIO...", "[--policies a,b,...]", "--no-bound", "ordo slurm"}) {
    EXPECT_NE(page.out.find(expected), std::string::npos) << expected << " not in:\n" << page.out;
  }
  // man-db reads the page's first line for preprocessors and warns about what it does not know.
  if (RunProgram("man", {"--version"}).exit_code == 0) {
    const CliResult man =
        RunProgram("man", {"-P", "cat", "-l", Installed("share/man/man1/ordo.1").string()});
    EXPECT_EQ(man.exit_code, 0) << man.err;
    EXPECT_EQ(man.err, "");
    EXPECT_NE(man.out.find("ordo compare"), std::string::npos) << man.out;
  }
}

}  // namespace
}  // namespace ordo::testing
