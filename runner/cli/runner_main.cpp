#include "runner/cli/runner_main.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "reports/fail_on.h"
#include "reports/report.h"
#include "reports/report_text.h"
#include "reports/write_reports.h"
#include "runner/cli/build_info.h"
#include "runner/cli/compare_command.h"
#include "runner/cli/devices_command.h"
#include "runner/cli/gaps_command.h"
#include "runner/cli/history_command.h"
#include "runner/cli/import_command.h"
#include "runner/cli/init_command.h"
#include "runner/cli/merge_command.h"
#include "runner/cli/number_options.h"
#include "runner/cli/process_environment.h"
#include "runner/cli/prune_command.h"
#include "runner/cli/report_command.h"
#include "runner/cli/runs_command.h"
#include "runner/cli/show_command.h"
#include "runner/cli/site_command.h"
#include "runner/cli/terminal_sink.h"
#include "runner/engine/discovery.h"
#include "runner/engine/install_layout.h"
#include "runner/engine/interrupt.h"
#include "runner/engine/run_steps.h"
#include "runner/engine/run_suite.h"
#include "runner/engine/suite_source.h"
#include "runner/results/store.h"

namespace {

using devshim::RunOptions;
namespace cli = devshim::cli;

namespace fs = std::filesystem;

// The largest values the numeric options take: beyond them a value is a typo, not a wish.
constexpr long long kMaxJobs = 4096;
constexpr long long kMaxReruns = 100;
constexpr long long kMaxShards = 100'000;
constexpr long long kMaxKeep = 1'000'000;
constexpr int kMaxRuns = 1'000'000'000;  // runner runs -n: also what 0 (all) means
constexpr double kMaxSeconds = 1e7;      // 115 days
constexpr double kMaxLogMiB = 1e9;
constexpr double kMaxDays = 1e5;

// Parses the command line into app. Returns the exit code when the command is done already:
// 0 after --help or --version, kExitUsage after an error (printed with the way to usage).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "runner: error: %s\nRun `runner --help` for usage.\n", e.what());
    return devshim::kExitUsage;
  }
  return std::nullopt;
}

// --fail-on: a comma-separated list of policies (reports/fail_on.h).
CLI::Validator fail_on_check() {
  return CLI::Validator(
      [](const std::string& text) {
        return devshim::parse_fail_on_list(text)
                   ? std::string()
                   : fmt::format("{}: give one or more of {}, comma-separated", text,
                                 devshim::kFailOnNames);
      },
      "POLICY[,POLICY]");
}
devshim::FailOnList fail_on_list(const std::string& text) {
  return devshim::parse_fail_on_list(text).value_or(devshim::FailOnList{devshim::FailOn::kAny});
}

// --db: the results database, or the default one (docs/cli.md).
CLI::Option* add_db_option(CLI::App& app, std::string& db) {
  return app.add_option("--db", db,
                        "results database (default: $DEVSHIM_DB, else .devshim/results.db in "
                        "this folder or one above, else $XDG_DATA_HOME/devshim/results.db)");
}
fs::path database(const std::string& db) {
  return db.empty() ? devshim::default_db_path(devshim::runner_environment()) : fs::path(db);
}

// What a run or a merge writes as it ends: the report, built once, in every format; kept for
// --fail-on when the policy needs it.
struct ReportsAtTheEnd {
  devshim::FailOnList policy{devshim::FailOn::kAny};
  std::optional<devshim::Report> verdict;  // the last recorded run's report

  std::vector<fs::path> operator()(devshim::Store& store, std::int64_t run_id,
                                   const fs::path& out_dir) {
    verdict.reset();
    devshim::Report report = devshim::build_and_store_report(store, run_id, out_dir);
    std::vector<fs::path> written =
        devshim::write_reports(report, out_dir, devshim::parse_report_formats(""));
    if (report.differential) {
      // The differential in one line: a shim run that lost tests never reads as harmless.
      const devshim::ReportDifferential& d = *report.differential;
      auto count = [&](const char* cls) { return devshim::class_count(d.counts, cls); };
      const int regressions = devshim::regressions_total(d);
      // Tests the baseline did not have: "N new under the shim (M pass)", after the unlocked.
      const int added = devshim::new_under_shim(d);
      const std::string new_tests =
          added > 0 ? fmt::format(", {} new under the shim ({} pass{})", added, count("new_passed"),
                                  count("new_passed") == 1 ? "es" : "")
                    : "";
      if (regressions == 0 && d.baseline_passed == 0) {
        std::printf(
            "runner: against baseline run %lld: nothing compared (the baseline passed no test), "
            "%d unlocked%s\n",
            static_cast<long long>(d.baseline_run), count("unlocked"), new_tests.c_str());
      } else {
        const std::string renumbered =
            d.renumbered_regressions > 0
                ? fmt::format(", at least {} renumbered", d.renumbered_regressions)
                : "";
        std::printf(
            "runner: against baseline run %lld: %d regression%s (%d failing, %d lost%s), %d "
            "unlocked%s\n",
            static_cast<long long>(d.baseline_run), regressions, regressions == 1 ? "" : "s",
            count("regression"), count("lost"), renumbered.c_str(), count("unlocked"),
            new_tests.c_str());
      }
      if (const std::string branches = devshim::cuda_branches_text(d); !branches.empty()) {
        std::printf("runner: %s\n", branches.c_str());
      }
    }
    if (report.cuda_path) {
      std::printf("runner: %s\n", devshim::cuda_path_text(*report.cuda_path).c_str());
    }
    if (policy != devshim::FailOnList{devshim::FailOn::kAny}) verdict = std::move(report);
    return written;
  }
  int exit_code(int rc) const {
    if (!verdict) return rc;
    // After "run N failed", a 0 (or after "passed", a 1) needs its reason on the next line.
    for (const std::string& why : devshim::fail_on_reasons(policy, *verdict, rc)) {
      std::printf("runner: %s\n", why.c_str());
    }
    return devshim::fail_on_exit_code(policy, *verdict, rc);
  }
};

// The commands, in the order --help lists them; the first word on the command line picks one,
// anything else is the default command, a run.
struct Command {
  const char* name;
  const char* usage;
  const char* summary;
  int (*main)(int argc, char** argv);
};
const std::vector<Command>& commands();

std::string usage_lines() {
  std::string text =
      "  runner SUITE_DIR [TARGET ...] [-k EXPR] [options]\n"
      "                                             run a suite (default command)\n"
      "  runner PATH [TARGET ...] [-k EXPR] [options]\n"
      "                                             run a project without a suite file: its "
      "folder,\n"
      "                                             tests folder or a test file (FILE::TEST)\n"
      "  runner SUITE_DIR --resume RUN              finish an interrupted run";
  for (const Command& c : commands()) text += fmt::format("\n  {:<42} {}", c.usage, c.summary);
  return text;
}

// After parsing a run's command line: -k joins the targets (recorded with them), and with
// --resume the options that must equal the run's are noted (plan_run checks them) and those
// without meaning for a run already started refused.
void settle_targets(const CLI::App& app, const std::string& keyword, RunOptions& o) {
  if (!o.resume.empty()) {
    for (const char* option : {"--differential", "--baseline", "--list", "--previous"}) {
      if (app.count(option) > 0) {
        throw devshim::UsageError(
            fmt::format("--resume continues a run as it was started: drop {}", option));
      }
    }
    for (const char* option : {"targets", "--no-shim", "--out", "--shard", "--shard-total"}) {
      if (app.count(option) > 0) o.given.insert(option);
    }
  }
  if (app.count("-k") > 0) {
    if (keyword.empty()) throw devshim::UsageError("-k: give an expression (e.g. -k cuda)");
    o.targets.push_back(std::string(devshim::kKeywordTarget) + keyword);
    o.given.insert("targets");
  }
}

// The run's suite: a suite file, or a project without one, its kept suite file or what is
// inferred, said first (on stderr with --list, whose stdout lists the files); PATH's targets join
// the command line's.
void open_run_suite(RunOptions& o) {
  devshim::OpenedSuite opened =
      devshim::open_suite(o.suite, o.python, devshim::runner_environment());
  std::fputs(devshim::opened_suite_text(opened, o.suite).c_str(), o.list_only ? stderr : stdout);
  o.opened_suite = std::move(opened.suite);
  o.targets.insert(o.targets.begin(), opened.targets.begin(), opened.targets.end());
}

// Runs o with the services given, on the terminal, the reports at its end deciding the exit
// code with fail_on. differential: --differential or --baseline (the baseline run named, or
// empty: run one); nullopt: one run.
int start_run(RunOptions& o, const std::string& fail_on,
              const std::optional<std::string>& differential,
              const devshim::ServiceFactory& services) {
  ReportsAtTheEnd reports;
  reports.policy = fail_on_list(fail_on);
  o.on_recorded = std::ref(reports);
  o.environment = devshim::runner_environment();
  devshim::TerminalSink terminal(stdout, stderr, o.environment);
  const std::unique_ptr<devshim::ServiceSet> chosen = services(o.environment);
  if (!differential) return reports.exit_code(devshim::run_suite(o, chosen->get(terminal)));
  return reports.exit_code(
      devshim::run_differential(o, *differential, chosen->get(terminal)).exit_code);
}

int run_main(int argc, char** argv, const devshim::ServiceFactory& services) {
  // SIGINT, SIGTERM and SIGHUP end a run cleanly from here on; a closed stdout never ends it.
  devshim::catch_interrupts();
  CLI::App app{
      "devshim runner: runs a suite's test files, each in its own process, with the device "
      "redirection shim active, and records every result.\n\n" +
          usage_lines(),
      "runner"};
  app.set_version_flag("-V,--version", devshim::version_text(devshim::build_info()));
  app.footer(
      "Exit codes: 0 every file passed; 1 something failed (--fail-on says what counts); 2 bad "
      "command line, suite file or input (nothing ran); 70 a bug in the runner; 130, "
      "143, 129 interrupted by SIGINT, SIGTERM, SIGHUP (finished results kept; --resume finishes "
      "the run).\n"
      "Environment: DEVSHIM_DB (default database), DEVSHIM_OUT (root of output folders), "
      "DEVSHIM_SHIM_DIR, DEVSHIM_PROBE, DEVSHIM_DB_TIMEOUT (seconds to wait for a locked "
      "database), DEVSHIM_SHARD_TOTAL, NO_COLOR, CLICOLOR_FORCE; docs/cli.md lists them all.");
  RunOptions o;
  std::string out, db, shim_dir;
  double timeout = 0;
  app.add_option("suite", o.suite,
                 "suite folder holding suite.json (or the file); or, without one, a project's "
                 "folder, its tests folder or a test file (FILE::TEST too): what a suite file "
                 "would say is inferred")
      ->required();
  app.add_option("targets", o.targets,
                 "files or folders relative to the suite's tests folder, or tests of a file "
                 "(FILE::TEST, e.g. test_x.py::TestC::test_y); none: all");
  std::string keyword;
  app.add_option("-k", keyword,
                 "only tests matching EXPR (pytest's and unittest's -k; GoogleTest: names "
                 "holding it)");
  app.add_option("--out,-o", out,
                 "folder for this run's logs and reports "
                 "(default: $DEVSHIM_OUT, else .devshim/runs beside the project's database, "
                 "else ./devshim-out; then SUITE/STAMP)");
  add_db_option(app, db);
  app.add_option("-j,--jobs", o.jobs, "test files at once (default: number of cores)")
      ->check(cli::whole_number(0, kMaxJobs));
  app.add_option("--timeout", timeout, "seconds per file (default: suite.json's timeout_s)")
      ->check(cli::amount("seconds", false, kMaxSeconds));
  app.add_option("--kill-grace", o.kill_grace_s, "seconds between SIGTERM and SIGKILL")
      ->check(cli::amount("seconds", true, kMaxSeconds))
      ->capture_default_str();
  bool no_shim = false;
  app.add_flag("--no-shim", no_shim, "run without the shim (the baseline)");
  bool cold = false;
  app.add_flag("--cold", cold,
               "start every test file in a fresh interpreter (default for Python suites: fork "
               "each from a warm parent that imported torch and the framework once)");
  app.add_option("--python", o.python, "Python interpreter (default: suite.json's python)");
  app.add_option("--shim-dir", shim_dir, "folder with the shim's sitecustomize.py");
  app.add_option(
         "--max-log-mb", o.max_log_mb,
         "largest log of a test file: past it the file is killed and its log cut; 0: no limit")
      ->check(cli::amount("MiB", true, kMaxLogMiB))
      ->capture_default_str();
  app.add_flag("--list", o.list_only, "print the test files the targets select, run nothing");
  bool differential = false;
  std::string baseline;
  app.add_flag("--differential", differential,
               "run the files with the shim off (baseline) and on, and classify every test");
  app.add_option("--baseline", baseline,
                 "compare with this recorded baseline run (an id or \"latest\") instead of "
                 "running one; implies --differential");
  std::string fail_on = "any";
  app.add_option("--previous", o.previous,
                 "compare with this recorded run (an id or \"latest\"; default: the latest run "
                 "of the same suite, targets, mode, shard and shim policy)");
  app.add_option("--fail-on", fail_on,
                 "what makes the exit code 1, comma-separated: any (a file failed), new-failures "
                 "(a test fails that did not in the previous run), regressions (differential "
                 "regressions: code that ran both ways), cuda-branch-failures (tests that passed "
                 "without the shim and fail on a CUDA path)")
      ->check(fail_on_check())
      ->capture_default_str();
  app.add_option("--rerun-failures", o.rerun_failures,
                 "rerun failing files (their failing tests where the framework can name them) up "
                 "to N times; a test that then passes is flaky")
      ->check(cli::whole_number(0, kMaxReruns));
  app.add_option(
         "--continue-after-crash", o.continue_after_crash,
         "run a test file that crashed in the middle of a test (a signal: the OOM killer, "
         "a segfault) again without the tests it reported, up to N times (pytest, GoogleTest); "
         "0: never")
      ->check(cli::whole_number(0, kMaxReruns))
      ->capture_default_str();
  app.add_flag("--failed-first", o.failed_first, "start the previous run's failing files first");
  app.add_flag("--try-settings", o.try_settings,
               "shim runs (with --differential): rerun the tests of each gap-log entry whose "
               "action is a documented shim setting with that setting, and record in the entry "
               "how many pass");
  app.add_option("--shard", o.shard,
                 "run shard I of N (1-based, e.g. 2/4); also TEST_TOTAL_SHARDS/TEST_SHARD_INDEX "
                 "or JOB_COMPLETION_INDEX");
  app.add_option("--shard-total", o.shard_total,
                 "number of shards, with JOB_COMPLETION_INDEX (or DEVSHIM_SHARD_TOTAL)")
      ->check(cli::whole_number(1, kMaxShards));
  app.add_option("--heartbeat", o.heartbeat_s,
                 "off a terminal, print a \"still running\" line for each file running longer "
                 "than this many seconds, and again each as many seconds; 0: never")
      ->check(cli::whole_number(0, static_cast<long long>(kMaxSeconds)))
      ->capture_default_str();
  app.add_option("--resume", o.resume,
                 "finish this interrupted run (an id or \"latest\"): run only its files that "
                 "have no result, with its targets, mode and output folder");
  if (auto done = parse(app, argc, argv)) return *done;
  settle_targets(app, keyword, o);
  o.shim = !no_shim;
  o.warm = !cold;
  if (o.try_settings && no_shim) {
    throw devshim::UsageError("--try-settings tries the shim's settings: drop --no-shim");
  }
  if (!out.empty()) o.out_dir = out;
  if (!db.empty()) o.db_path = db;
  if (!shim_dir.empty()) o.shim_dir = shim_dir;
  if (app.count("--timeout") > 0) o.timeout_s = timeout;
  o.command_line.assign(argv, argv + argc);
  open_run_suite(o);
  const bool both = differential || !baseline.empty();
  return start_run(o, fail_on, both ? std::optional(baseline) : std::nullopt, services);
}

int init_main(int argc, char** argv) {
  CLI::App app{
      "Write the suite file a run of a project without one infers (docs/suites.md, \"Without a "
      "suite file\") into the project root, as devshim.json: later runs of the project read it, "
      "so that what differs (timeouts, env, locks, preload) is edited there.",
      "runner init"};
  devshim::InitOptions o;
  app.add_option("path", o.path,
                 "the project folder, its tests folder or a test file (default: .)");
  app.add_option("--python", o.python,
                 "interpreter (default: $VIRTUAL_ENV's, $CONDA_PREFIX's, the project's .venv, "
                 "python3 in PATH)");
  app.add_flag("--force", o.force, "write over the project's devshim.json");
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::init_command(o);
}

int runs_main(int argc, char** argv) {
  CLI::App app{"List recorded runs, newest first.", "runner runs"};
  std::string db;
  int limit = 20;
  bool as_json = false;
  add_db_option(app, db);
  app.add_option("-n,--limit", limit, "how many runs, newest first; 0: all")
      ->check(cli::whole_number(0, kMaxRuns))
      ->capture_default_str();
  app.add_flag("--json", as_json, "a JSON array instead of the table");
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::list_runs(database(db), limit == 0 ? kMaxRuns : limit, as_json);
}

int show_main(int argc, char** argv) {
  CLI::App app{
      "Print a recorded run's files and tests (those that did not pass, by default; "
      "passed files are counted).",
      "runner show"};
  std::string db, run = "latest", status;
  bool all = false;
  app.add_option("run", run, "run id, or \"latest\"")->capture_default_str();
  add_db_option(app, db);
  app.add_option("--status", status, "only files and tests with this status (e.g. failed)");
  app.add_flag("--all", all, "list passed files and passing tests too");
  bool as_json = false;
  app.add_flag("--json", as_json, "every file and test (or those of --status) as JSON");
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::show_run(database(db), run, status, all, as_json);
}

int import_main(int argc, char** argv) {
  CLI::App app{"Import the logs of TorchDevice's run_transformer_tests.py as one run.",
               "runner import"};
  std::string db, dir, suite;
  app.add_option("logdir", dir, "folder with <series>_<timestamp>.log and <path>.py.log files")
      ->required();
  add_db_option(app, db);
  app.add_option("--suite", suite, "suite name for the run (default: the log's series name)");
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::import_logs(dir, database(db), suite);
}

int report_main(int argc, char** argv) {
  std::string files;
  for (const devshim::ReportFormat& f : devshim::report_formats()) {
    files += (files.empty() ? "" : ", ") + std::string(f.file);
  }
  CLI::App app{"Render a recorded run's reports (" + files + ").", "runner report"};
  std::string db, run = "latest", formats = devshim::report_format_names(","), out;
  app.add_option("run", run, "run id, or \"latest\"")->capture_default_str();
  add_db_option(app, db);
  app.add_option("--format", formats, "comma-separated: " + devshim::report_format_names())
      ->capture_default_str();
  app.add_option("-o,--out", out,
                 "folder to write to (default: the run's output folder; with --against, its "
                 "against-<id> subfolder)");
  std::string against;
  app.add_option("--against", against,
                 "compare with this recorded run instead of the run's previous run (an id, "
                 "\"latest\" or \"latest~N\")");
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::report_command(database(db), run, formats, out, against);
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
  if (auto done = parse(app, argc, argv)) return *done;
  if (!suite.empty()) o.suite = suite;
  return devshim::devices_command(o);
}

int gaps_main(int argc, char** argv) {
  CLI::App app{
      "The API gap log: torch APIs the shim does not carry well yet (docs/gaps.md).\n\n"
      "  runner gaps [list] [--suite S] [--status S] [--kind K]   every entry (of every suite)\n"
      "  runner gaps show API [--suite S]             its entries and their tests\n"
      "  runner gaps set API [--suite S] [--severity ...] [--status ...] [--action ...] "
      "[--note ...]\n"
      "  runner gaps scan [--python PY]               torch's CUDA surface vs the shim\n"
      "  runner gaps export --format md|json [-o F] [--suite S]   a status page",
      "runner gaps"};
  app.require_subcommand(0, 1);
  std::string db;
  add_db_option(app, db);
  // Each entry belongs to the suite whose runs showed it ("" for torch's surface, gaps scan).
  std::optional<std::string> suite;
  auto add_suite_option = [&](CLI::App& sub, const char* what) {
    sub.add_option("--suite", suite, what);
  };
  add_suite_option(app, "only this suite's entries (default: every suite's)");
  auto* list = app.add_subcommand("list", "every entry, biggest impact first");
  std::string status, kind;
  list->add_option("--status", status, "only entries with this status (open, fixed, wontfix)");
  list->add_option("--kind", kind,
                   "only this kind (failing, unpatched, unsupported_op, cuda_only, unattributed, "
                   "newly_skipped, masquerade_skip, file_error, environment)");
  add_suite_option(*list, "only this suite's entries (default: every suite's)");
  auto* show = app.add_subcommand("show", "one entry and its affected tests");
  std::string api;
  show->add_option("api", api, "the API, e.g. torch.cuda.get_device_properties")->required();
  add_suite_option(*show, "only this suite's entry (default: every suite's)");
  auto* set = app.add_subcommand("set", "set fields by hand; later runs never overwrite them");
  devshim::GapEdit edit;
  set->add_option("api", api, "the API")->required();
  set->add_option("--suite", edit.suite,
                  "the suite whose entry it is (needed when several suites have one)");
  set->add_option("--severity", edit.severity, "critical, high, medium, low, or auto");
  set->add_option("--status", edit.status, "open, fixed, wontfix, or auto");
  set->add_option("--kind", edit.kind,
                  "failing, unpatched, unsupported_op, cuda_only, unattributed, newly_skipped, "
                  "masquerade_skip, file_error, environment");
  set->add_option("--action", edit.action,
                  "what to do (replaces the runs' own action); auto: the runs' again");
  set->add_option("--note", edit.note, "free text");
  set->add_option("--equivalent", edit.equivalent,
                  "the equivalent on the device used (replaces the runs'); auto: the runs' again");
  auto* scan = app.add_subcommand("scan", "compare torch's public CUDA surface with the shim");
  std::string python = "python3", shim_dir;
  scan->add_option("--python", python, "interpreter with torch")->capture_default_str();
  scan->add_option("--shim-dir", shim_dir, "folder holding the devshim package");
  auto* exp = app.add_subcommand("export", "the log as Markdown or JSON");
  std::string format = "md", out;
  exp->add_option("--format", format, "md or json")->capture_default_str();
  exp->add_option("-o,--out", out, "file to write (default: stdout)");
  add_suite_option(*exp, "only this suite's entries (default: every suite's)");
  for (auto* sub : {list, show, set, scan, exp}) {
    add_db_option(*sub, db);
  }
  if (auto done = parse(app, argc, argv)) return *done;
  const fs::path db_path = database(db);
  if (*show) return devshim::gaps_show(db_path, api, suite);
  if (*set) return devshim::gaps_set(db_path, api, edit);
  if (*scan) {
    return devshim::gaps_scan(db_path, python,
                              shim_dir.empty()
                                  ? devshim::default_shim_dir(devshim::runner_environment())
                                  : std::filesystem::path(shim_dir));
  }
  if (*exp) return devshim::gaps_export(db_path, format, out, suite);
  return devshim::gaps_list(db_path, status, kind, suite);
}

int compare_main(int argc, char** argv) {
  CLI::App app{"Two recorded runs compared test by test.", "runner compare"};
  std::string db, a, b;
  bool as_json = false;
  app.add_option("a", a, "run A: an id, \"latest\" or \"latest~N\" (N runs before the newest)")
      ->required();
  app.add_option("b", b, "run B, the one compared with A")->required();
  add_db_option(app, db);
  app.add_flag("--json", as_json, "one JSON object instead of the text");
  std::string formats, out;
  app.add_option("-o,--out", out,
                 "write compare.md, compare.json and compare.html into this folder instead");
  app.add_option("--format", formats, "with -o: comma-separated, of md, json, html (default: all)");
  std::string fail_on = "regressions";
  app.add_option("--fail-on", fail_on,
                 "what makes the exit code 1, comma-separated: regressions (a test regressed or "
                 "was lost from A to B), cuda-branch-failures (one fails in B on a CUDA path A "
                 "could not take), new-failures (also a test new in B that fails), any (run B did "
                 "not pass)")
      ->check(fail_on_check())
      ->capture_default_str();
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::compare_command(database(db), a, b, as_json, formats, out, fail_on_list(fail_on));
}

int history_main(int argc, char** argv) {
  CLI::App app{"One test's outcomes across recorded runs, newest first.", "runner history"};
  std::string db, test;
  devshim::HistoryFilter filter;
  bool as_json = false;
  app.add_option("test", test,
                 "the test: classname::name (as `runner show` prints it), file::classname::name, "
                 "classname.name, or a bare name")
      ->required();
  add_db_option(app, db);
  app.add_option("--suite", filter.suite, "only runs of this suite");
  app.add_option("--mode", filter.mode, "only shim runs or only baseline (--no-shim) runs")
      ->check(CLI::IsMember({"shim", "baseline"}));
  app.add_option("-n,--limit", filter.limit, "how many runs")->capture_default_str();
  app.add_flag("--json", as_json, "a JSON array, one object per run, instead of the table");
  if (auto done = parse(app, argc, argv)) return *done;
  return devshim::history_command(database(db), test, filter, as_json);
}

int merge_main(int argc, char** argv) {
  CLI::App app{
      "Merge shard databases (runner --shard I/N, each into its own --db) into one run of the "
      "output database, and render its reports.",
      "runner merge"};
  devshim::MergeOptions o;
  std::string into, output, out, fail_on = "any";
  app.add_option("inputs", o.inputs, "the shard databases; the newest run of each is merged")
      ->required();
  app.add_option("--into", into, "the database to add the merged run to (created)");
  app.add_option("-o,--output", output,
                 "deprecated name of --into (in every other command -o names a folder)");
  app.add_option("--out", out,
                 "folder for the merged run's reports and logs (default: $DEVSHIM_OUT or "
                 "./devshim-out, then SUITE/STAMP-merged)");
  app.add_option(
         "--fail-on", fail_on,
         std::string("what makes the exit code 1, comma-separated: ") + devshim::kFailOnNames)
      ->check(fail_on_check())
      ->capture_default_str();
  if (auto done = parse(app, argc, argv)) return *done;
  if (into.empty() == output.empty()) {
    throw devshim::UsageError(
        into.empty() ? "runner merge: give --into DB, the database to add the "
                       "merged run to"
                     : "runner merge: give --into alone (-o/--output is its old name)");
  }
  if (!output.empty()) {
    std::fprintf(stderr,
                 "runner: warning: merge -o/--output DB is deprecated: say --into DB (every other "
                 "command's -o names a folder)\n");
  }
  o.output = into.empty() ? output : into;
  if (!out.empty()) o.out_dir = out;
  o.command_line = {"runner"};
  o.command_line.insert(o.command_line.end(), argv, argv + argc);
  ReportsAtTheEnd reports;
  reports.policy = fail_on_list(fail_on);
  o.on_recorded = std::ref(reports);
  const devshim::MergeResult merged = devshim::merge_command(o);
  return reports.exit_code(merged.status == "passed" ? devshim::kExitOk : devshim::kExitFailures);
}

int prune_main(int argc, char** argv) {
  CLI::App app{"Delete old runs from the database, with their logs and reports.", "runner prune"};
  devshim::PruneOptions o;
  std::string db;
  app.add_option("--keep", o.keep, "keep the newest N runs of each suite")
      ->check(cli::whole_number(1, kMaxKeep));
  app.add_option("--older-than", o.older_than_days, "delete runs started more than DAYS ago")
      ->check(cli::amount("days", false, kMaxDays));
  app.add_option("--suite", o.suite, "only runs of this suite");
  app.add_flag("--dry-run", o.dry_run, "print what would be deleted, delete nothing");
  add_db_option(app, db);
  if (auto done = parse(app, argc, argv)) return *done;
  o.db = database(db);
  return devshim::prune_command(o);
}

int site_main(int argc, char** argv) {
  CLI::App app{
      "A static site of the database's runs: trend charts per suite, a table of every run, each "
      "run's reports, a page per failing or flaky test, search, the API gap log. Works from "
      "file:// and on any static host.",
      "runner site"};
  std::string db, out;
  devshim::SiteOptions o;
  app.add_option("-o,--out", out, "folder to write the site to (created; updated in place)")
      ->required();
  app.add_option("--suite", o.suite, "only this suite's runs (default: every suite)");
  app.add_flag("--full", o.full, "render every run's pages again (default: only what changed)");
  app.add_flag("--copy-files", o.copy_files,
               "copy the logs and sources the pages link to into DIR/files, so that DIR can be "
               "moved or published as it is (GitHub Pages)");
  add_db_option(app, db);
  if (auto done = parse(app, argc, argv)) return *done;
  o.dir = out;
  return devshim::site_command(database(db), o);
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table{
      {"runs", "runner runs [--db PATH] [-n N] [--json]", "list recorded runs", runs_main},
      {"show", "runner show [RUN] [--status S] [--all] [--json]", "a run's files and tests",
       show_main},
      {"import", "runner import LOGDIR [--suite NAME]", "import TorchDevice test-runner logs",
       import_main},
      {"report", "runner report [RUN] [--against R] [-o DIR]", "render a run's reports again",
       report_main},
      {"compare", "runner compare A B [--json] [-o DIR] [--fail-on F]",
       "two runs compared test by test", compare_main},
      {"site", "runner site -o DIR [--suite S] [--copy-files]",
       "a static site of every run, with trends", site_main},
      {"devices", "runner devices [SUITE] [--json]", "hardware, torch and the shim's policy here",
       devices_main},
      {"history", "runner history TEST [--suite S] [--mode M] [--json]",
       "one test's outcomes across runs", history_main},
      {"merge", "runner merge A.db B.db ... --into ALL.db", "merge shard databases into one run",
       merge_main},
      {"prune", "runner prune --keep N | --older-than DAYS", "delete old runs and their logs",
       prune_main},
      {"gaps", "runner gaps [list|show|set|scan|export]", "the API gap log", gaps_main},
      {"init", "runner init [PATH] [--force]", "write the suite file a project's run infers",
       init_main},
  };
  return table;
}

// Edits that turn a into b (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A first argument that is neither a command nor a path to a suite: a mistyped command, named
// as one with the commands it may have meant. Paths (a slash, suite.json, anything that exists)
// stay the run's to judge.
void refuse_unknown_command(const std::string& first) {
  std::error_code ec;
  if (first.empty() || first[0] == '-' || first.find('/') != std::string::npos ||
      first.find("::") != std::string::npos || first.ends_with(".json") || fs::exists(first, ec)) {
    return;
  }
  std::string close, all;
  for (const Command& c : commands()) {
    all += (all.empty() ? "" : ", ") + std::string(c.name);
    const std::string name = c.name;
    if (edit_distance(first, name) <= 2 || (first.size() >= 3 && name.starts_with(first))) {
      close += (close.empty() ? "'" : ", '") + name + "'";
    }
  }
  throw devshim::UsageError(fmt::format(
      "unknown command '{}'; did you mean {}? (a run takes a suite file, a folder holding "
      "suite.json, or a project's folder or test file: there is none of that name here; `runner "
      "--help` lists the commands)",
      first, close.empty() ? "one of " + all : close));
}

}  // namespace

int devshim::runner_main(int argc, char** argv, const ServiceFactory& services) {
  // Each line out as soon as it is complete, on a pipe or a file too (CI logs, cron mail,
  // `| tee`): a run of hours shows its progress as it goes, and a kill -9 loses no line printed.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  try {
    devshim::apply_process_settings(devshim::runner_environment());
    if (argc > 1) {
      const std::string first = argv[1];
      for (const Command& c : commands()) {
        if (first == c.name) return c.main(argc - 1, argv + 1);
      }
      refuse_unknown_command(first);
    }
    return run_main(argc, argv, services);
  } catch (const devshim::Interrupted& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "runner: %s\n", e.what());
    return e.exit_code();
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
