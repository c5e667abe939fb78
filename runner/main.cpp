// The `runner` command line (docs/cli.md). Parses arguments, dispatches, and applies the error
// policy of runner/error.h: devshim::Error → "runner: error: ..." and its exit code.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "reports/write_reports.h"
#include "runner/devices_command.h"
#include "runner/error.h"
#include "runner/import_command.h"
#include "runner/run_command.h"
#include "runner/runs_command.h"
#include "runner/show_command.h"
#include "runner/store.h"

#ifndef DEVSHIM_VERSION
#define DEVSHIM_VERSION "0.0.0"
#endif

namespace {

using devshim::RunOptions;

int parse_error(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
  std::fprintf(stderr, "runner: error: %s\nRun `runner --help` for usage.\n", e.what());
  return devshim::kExitUsage;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "devshim runner: runs a suite's test files, each in its own process, with the device "
      "redirection shim active, and records every result.\n\n"
      "  runner SUITE_DIR [TARGET ...] [options]    run a suite (default command)\n"
      "  runner runs [--db PATH] [-n N]             list recorded runs\n"
      "  runner show [RUN] [--status S] [--all]     a run's files and tests\n"
      "  runner import LOGDIR [--suite NAME]        import TorchDevice test-runner logs\n"
      "  runner report [RUN] [--format F] [-o DIR]  render a run's reports again\n"
      "  runner devices [SUITE] [--json]            hardware, torch and the shim's policy here",
      "runner"};
  app.set_version_flag("--version", "runner " DEVSHIM_VERSION);
  RunOptions o;
  std::string out, db, shim_dir;
  double timeout = 0;
  app.add_option("suite", o.suite, "suite folder holding suite.json (or the file)")->required();
  app.add_option("targets", o.targets,
                 "files or folders relative to the suite's tests folder; none: all");
  app.add_option("--out,-o", out,
                 "folder for this run's logs and reports "
                 "(default: $DEVSHIM_OUT or ./devshim-out, then SUITE/STAMP)");
  app.add_option("--db", db,
                 "results database (default: $DEVSHIM_DB or "
                 "$XDG_DATA_HOME/devshim/results.db)");
  app.add_option("-j,--jobs", o.jobs, "test files at once (default: number of cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--timeout", timeout, "seconds per file (default: suite.json's timeout_s)")
      ->check(CLI::PositiveNumber);
  app.add_option("--kill-grace", o.kill_grace_s, "seconds between SIGTERM and SIGKILL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bool no_shim = false;
  app.add_flag("--no-shim", no_shim, "run without the shim (the baseline)");
  app.add_option("--python", o.python, "Python interpreter (default: suite.json's python)");
  app.add_option("--shim-dir", shim_dir, "folder with the shim's sitecustomize.py");
  app.add_option("--max-log-mb", o.max_log_mb,
                 "largest file a test process may write, its log included; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--list", o.list_only, "print the test files the targets select, run nothing");
  bool differential = false;
  std::string baseline;
  app.add_flag("--differential", differential,
               "run the files with the shim off (baseline) and on, and classify every test");
  app.add_option("--baseline", baseline,
                 "compare with this recorded baseline run (an id or \"latest\") instead of "
                 "running one; implies --differential");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e);
  }
  o.shim = !no_shim;
  if (!out.empty()) o.out_dir = out;
  if (!db.empty()) o.db_path = db;
  if (!shim_dir.empty()) o.shim_dir = shim_dir;
  if (app.count("--timeout") > 0) o.timeout_s = timeout;
  o.command_line.assign(argv, argv + argc);
  std::int64_t recorded = 0;
  o.on_recorded = [&recorded](devshim::Store& store, std::int64_t run_id,
                              const std::filesystem::path& out_dir) {
    recorded = run_id;
    return devshim::write_reports(store, run_id, out_dir, devshim::report_formats());
  };
  if (!differential && baseline.empty()) return devshim::run_suite(o);

  if (!o.shim)
    throw devshim::UsageError("--differential compares with the shim on: drop --no-shim");
  if (!baseline.empty()) {
    devshim::Store store(o.db_path.value_or(devshim::default_db_path()));
    const devshim::RunRecord b = store.resolve_run(baseline);
    if (b.mode != "baseline") {
      throw devshim::UsageError(
          fmt::format("run {} ran with the shim on; --baseline needs a run "
                      "made with --no-shim",
                      b.id));
    }
    o.baseline_run = b.id;
  } else {
    // First the baseline (shim off), into <out>/baseline when --out is given.
    devshim::RunOptions b = o;
    b.shim = false;
    if (o.out_dir) b.out_dir = *o.out_dir / "baseline";
    const int rc = devshim::run_suite(b);
    if (rc == devshim::kExitInterrupted) return rc;
    o.baseline_run = recorded;
  }
  return devshim::run_suite(o);
}

int runs_main(int argc, char** argv) {
  CLI::App app{"List recorded runs, newest first.", "runner runs"};
  std::string db;
  int limit = 20;
  app.add_option("--db", db, "results database");
  app.add_option("-n,--limit", limit, "how many runs")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e);
  }
  return devshim::list_runs(db.empty() ? devshim::default_db_path() : std::filesystem::path(db),
                            limit);
}

int show_main(int argc, char** argv) {
  CLI::App app{"Print a recorded run's files and tests (those that did not pass, by default).",
               "runner show"};
  std::string db, run = "latest", status;
  bool all = false;
  app.add_option("run", run, "run id, or \"latest\"")->capture_default_str();
  app.add_option("--db", db, "results database");
  app.add_option("--status", status, "only files and tests with this status (e.g. failed)");
  app.add_flag("--all", all, "list passing tests too");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e);
  }
  return devshim::show_run(db.empty() ? devshim::default_db_path() : std::filesystem::path(db), run,
                           status, all);
}

int import_main(int argc, char** argv) {
  CLI::App app{"Import the logs of TorchDevice's run_transformer_tests.py as one run.",
               "runner import"};
  std::string db, dir, suite;
  app.add_option("logdir", dir, "folder with <series>_<timestamp>.log and <path>.py.log files")
      ->required();
  app.add_option("--db", db, "results database");
  app.add_option("--suite", suite, "suite name for the run (default: the log's series name)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e);
  }
  return devshim::import_logs(
      dir, db.empty() ? devshim::default_db_path() : std::filesystem::path(db), suite);
}

int report_main(int argc, char** argv) {
  CLI::App app{"Render a recorded run's reports (report.md, report.json, junit.xml, report.html).",
               "runner report"};
  std::string db, run = "latest", formats = "md,json,junit,html", out;
  app.add_option("run", run, "run id, or \"latest\"")->capture_default_str();
  app.add_option("--db", db, "results database");
  app.add_option("--format", formats, "comma-separated: md, json, junit, html")
      ->capture_default_str();
  app.add_option("-o,--out", out, "folder to write to (default: the run's output folder)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e);
  }
  return devshim::report_command(
      db.empty() ? devshim::default_db_path() : std::filesystem::path(db), run, formats, out);
}

int devices_main(int argc, char** argv) {
  CLI::App app{
      "What a run would use here: the LibTorch device probe (devshim-probe), the Python "
      "interpreter's torch, the shim's policy, and recommendations.",
      "runner devices"};
  devshim::DevicesOptions o;
  std::string suite;
  app.add_option("suite", suite, "suite whose python and environment to probe (optional)");
  app.add_option("--python", o.python, "Python interpreter (default: the suite's, or python3)");
  app.add_flag("--json", o.json, "print JSON (for tools) instead of text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e);
  }
  if (!suite.empty()) o.suite = suite;
  return devshim::devices_command(o);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "runs") return runs_main(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "show") return show_main(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "import") return import_main(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "report") return report_main(argc - 1, argv + 1);
    if (argc > 1 && std::string(argv[1]) == "devices") return devices_main(argc - 1, argv + 1);
    return run_main(argc, argv);
  } catch (const devshim::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "runner: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "runner: internal error: %s\n", e.what());
    return devshim::kExitInternal;
  }
}
