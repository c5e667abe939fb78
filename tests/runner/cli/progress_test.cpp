#include "runner/cli/progress.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace devshim {
namespace {

std::string drain(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  int c = 0;
  while ((c = std::fgetc(f)) != EOF) out += static_cast<char>(c);
  return out;
}

TerminalInfo smart_terminal(int width = 80) {
  TerminalInfo t;
  t.smart = true;
  t.width = width;
  return t;
}

TEST(Progress, DumbTerminalPrintsOneLinePerFinishedFile) {
  std::FILE* f = std::tmpfile();
  Progress p(f, TerminalInfo{}, 2);
  p.started("a.py");
  p.started("b.py");
  p.tick();
  p.finished("a.py", FileStatus::kPassed, 1.25, "/o/logs/a.py.log", "");
  p.finished("b.py", FileStatus::kCrashed, 2.0, "/o/logs/b.py.log", "killed by SIGSEGV");
  p.close();
  EXPECT_EQ(drain(f),
            "[1/2] passed a.py (1.2s)\n"
            "[2/2] crashed b.py (2.0s) killed by SIGSEGV\n"
            "    log: /o/logs/b.py.log\n");
  std::fclose(f);
}

TEST(Progress, TheEtaIsTheRecordedWorkLeftSpreadOverTheJobs) {
  std::FILE* f = std::tmpfile();
  Progress p(f, TerminalInfo{}, 3, {{{"a.py", 60}, {"b.py", 120}, {"c.py", 180}}, 2, {}});
  ASSERT_TRUE(p.eta_s());
  EXPECT_NEAR(*p.eta_s(), 180, 1) << "(60 + 120 + 180) s over 2 jobs";
  EXPECT_NE(p.status_line().find(", ETA 3:00"), std::string::npos) << p.status_line();
  p.started("c.py");
  p.finished("c.py", FileStatus::kPassed, 1, "", "");
  EXPECT_NEAR(*p.eta_s(), 90, 1);
  EXPECT_FALSE(Progress(f, TerminalInfo{}, 1).eta_s()) << "nothing recorded: no ETA";
  std::fclose(f);
}

TEST(Progress, ControlCharactersInNamesAreWrittenAsEscapes) {
  std::FILE* f = std::tmpfile();
  Progress p(f, TerminalInfo{}, 1);
  p.finished("x\x1b[2J\ny.py", FileStatus::kFailed, 1, "/o/x\x1b.log", "note\r");
  EXPECT_EQ(drain(f),
            "[1/1] failed x\\x1b[2J\\ny.py (1.0s) note\\r\n"
            "    log: /o/x\\x1b.log\n");
  std::fclose(f);
}

TEST(Progress, SmartTerminalRedrawsOneLineAndPrintsFailuresAbove) {
  std::FILE* f = std::tmpfile();
  Progress p(f, smart_terminal(60), 3);
  p.started("pipelines/test_a_very_long_file_name_that_needs_eliding.py");
  p.finished("pipelines/test_a_very_long_file_name_that_needs_eliding.py", FileStatus::kFailed, 1,
             "/l", "");
  p.close();
  std::string out = drain(f);
  EXPECT_NE(out.find("\r"), std::string::npos);
  EXPECT_NE(out.find("\x1b[K"), std::string::npos);
  EXPECT_NE(out.find("\r\x1b[K[1/3] failed pipelines/"), std::string::npos) << out;
  EXPECT_EQ(out.find("\x1b[3"), std::string::npos) << "no colour unless asked";
  // Every redrawn status line fits the width.
  std::size_t pos = 0;
  while ((pos = out.find("\r[", pos)) != std::string::npos) {
    std::size_t end = out.find("\x1b[K", pos);
    EXPECT_LE(end - pos - 1, 60U);
    pos = end;
  }
  std::fclose(f);
}

TEST(Progress, StatusLineCountsAndNamesRunningFiles) {
  Progress p(stdout, TerminalInfo{}, 5);
  p.started("x.py");
  p.started("y.py");
  std::string line = p.status_line();
  EXPECT_NE(line.find("[0/5] passed 0, failed 0"), std::string::npos) << line;
  EXPECT_NE(line.find("running: x.py (+1 more)"), std::string::npos) << line;
}

TEST(Progress, WhatHappensBeforeTheFirstFileIsOnTheStatusLineOfASmartTerminalOnly) {
  std::FILE* f = std::tmpfile();
  Progress p(f, smart_terminal(), 2);
  p.preparing("warm start: importing torch, pytest");
  EXPECT_NE(drain(f).find("\r[0/2] passed 0, failed 0, 0:00 warm start: importing torch, pytest"),
            std::string::npos);
  p.started("x.py");
  EXPECT_EQ(p.status_line().find("warm start"), std::string::npos) << p.status_line();
  EXPECT_NE(p.status_line().find("running: x.py"), std::string::npos) << p.status_line();
  std::fclose(f);

  std::FILE* log = std::tmpfile();
  Progress plain(log, TerminalInfo{}, 2);
  plain.preparing("warm start: importing torch");
  plain.tick();
  EXPECT_EQ(drain(log), "") << "off a terminal, lines are for finished files";
  std::fclose(log);
}

TEST(Progress, ANoteGetsALineOfItsOwnAboveTheStatusLine) {
  std::FILE* f = std::tmpfile();
  Progress p(f, smart_terminal(), 2);
  p.preparing("warm start: importing torch");
  p.note("runner: warm start unavailable (x): every file starts cold");
  const std::string out = drain(f);
  EXPECT_NE(out.find("importing torch\x1b[K\r\x1b[Krunner: warm start unavailable (x): every file "
                     "starts cold\n\r[0/2]"),
            std::string::npos)
      << out;
  std::fclose(f);

  std::FILE* log = std::tmpfile();
  Progress plain(log, TerminalInfo{}, 2);
  plain.note("runner: a\x1b[31mb");
  EXPECT_EQ(drain(log), "runner: a\\x1b[31mb\n");
  std::fclose(log);
}

TEST(FormatElapsed, MinutesAndHours) {
  EXPECT_EQ(format_elapsed(65), "1:05");
  EXPECT_EQ(format_elapsed(3723), "1:02:03");
}

}  // namespace
}  // namespace devshim
