// Parse throughput of the unittest log parser on one core, against reading the same bytes, and
// peak memory while parsing a 1 GiB log (targets, issue 3: >= 200 MB/s, < 64 MB).
//
//   parse_throughput_bench [--size-mb N] [--big-gb G] [--keep]
//
// Generates a corpus of realistic `unittest -v` logs (passes, failures with tracebacks, skips,
// output between name and verdict, subtests), then prints:
//   read:  MB/s of reading the file with read(2)            (the baseline)
//   lines: MB/s of LineReader alone
//   parse: MB/s of parse_unittest_log, and the ratio to the baseline
//   peak memory of a child process that parses a 1 GiB log of one test file whose test floods
//   its output (ru_maxrss), against its RSS before.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "parsers/line_reader.h"
#include "parsers/unittest_parser.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// One module's worth of log: ~200 tests, 10% failing with a traceback.
std::string module_log(int module) {
  std::string out;
  std::string failures;
  const std::string cls =
      fmt::format("tests.models.m{}.test_modeling_m{}.ModelTest", module, module);
  for (int t = 0; t < 200; ++t) {
    const std::string name = fmt::format("test_case_{}", t);
    out += fmt::format("{} ({}.{}) ... ", name, cls, name);
    if (t % 10 == 3) {
      out += "FAIL\n";
      failures += fmt::format(
          "======================================================================\n"
          "FAIL: {} ({}.{})\n"
          "----------------------------------------------------------------------\n"
          "Traceback (most recent call last):\n"
          "  File \"/src/transformers/tests/models/m{}/test_modeling_m{}.py\", line {}, in {}\n"
          "    self.assertLessEqual(diff, 1e-05)\n"
          "AssertionError: 0.{} not less than or equal to 1e-05\n\n",
          name, cls, name, module, module, 100 + t, name, 1000 + t);
    } else if (t % 10 == 5) {
      out += "skipped 'test requires CUDA'\n";
    } else if (t % 10 == 7) {
      out +=
          "Some weights of the model checkpoint were not used when initializing the model\n"
          "- This IS expected if you are initializing from a checkpoint of another task.\nok\n";
    } else {
      out += "ok\n";
    }
  }
  out += failures;
  out +=
      "----------------------------------------------------------------------\n"
      "Ran 200 tests in 12.345s\n\nFAILED (failures=20, skipped=20)\n";
  return out;
}

// A corpus of one log per test module (as the runner keeps them), `bytes` in all.
std::vector<fs::path> write_corpus(const fs::path& dir, std::size_t bytes) {
  std::vector<fs::path> files;
  fs::create_directories(dir / "corpus");
  std::size_t written = 0;
  for (int m = 0; written < bytes; ++m) {
    files.push_back(dir / "corpus" / fmt::format("test_modeling_m{}.py.log", m));
    std::ofstream out(files.back(), std::ios::binary);
    std::string s = module_log(m);
    out << s;
    written += s.size();
  }
  return files;
}

// One test file's log of about `bytes`: a module's tests, one of which floods its output (the
// case a log of that size comes from), so that memory is measured against the log's size.
fs::path write_flooded(const fs::path& dir, std::size_t bytes, const std::string& name) {
  fs::path p = dir / name;
  std::ofstream out(p, std::ios::binary);
  std::string log = module_log(0);
  const std::size_t split = log.find("ok\n", log.find("test_case_7 "));
  out << log.substr(0, split);
  std::string block;
  for (int i = 0; i < 1024; ++i) {
    block += fmt::format("step {} loss=0.{} grad_norm=1.{} lr=1e-05 \r progress {}%\n", i, i, i,
                         i % 100);
  }
  for (std::size_t written = 0; written < bytes; written += block.size()) out << block;
  out << log.substr(split);
  return p;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Bytes read from all files with read(2).
std::size_t read_all(const std::vector<fs::path>& files) {
  std::string buf(1 << 20, '\0');
  std::size_t total = 0;
  for (const auto& p : files) {
    int fd = ::open(p.c_str(), O_RDONLY);
    ssize_t n = 0;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0) total += static_cast<std::size_t>(n);
    ::close(fd);
  }
  return total;
}

long max_rss_kb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t size_mb = 256;
  std::size_t big_gb = 1;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--size-mb" && i + 1 < argc) {
      size_mb = std::stoul(argv[++i]);
    } else if (a == "--big-gb" && i + 1 < argc) {
      big_gb = std::stoul(argv[++i]);
    } else if (a == "--keep") {
      keep = true;
    } else {
      fmt::print(stderr, "usage: parse_throughput_bench [--size-mb N] [--big-gb G] [--keep]\n");
      return 2;
    }
  }
  std::string templ = (fs::temp_directory_path() / "devshim-parse-bench-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return 1;
  const fs::path dir = templ;

  const std::vector<fs::path> corpus = write_corpus(dir, size_mb << 20);
  const double mb = static_cast<double>(read_all(corpus)) / 1e6;  // also warms the page cache

  auto t = Clock::now();
  read_all(corpus);
  const double read_rate = mb / seconds_since(t);

  t = Clock::now();
  std::size_t chars = 0;
  for (const auto& p : corpus) {
    devshim::LineReader lines(p);
    std::string_view line;
    while (lines.next(line)) chars += line.size();
  }
  const double lines_rate = mb / seconds_since(t);

  t = Clock::now();
  std::size_t cases = 0;
  for (const auto& p : corpus) {
    devshim::LineReader lines(p);
    cases += devshim::parse_unittest_log(lines, "tests/x.py").cases.size();
  }
  const double parse_rate = mb / seconds_since(t);
  if (chars == 0 || cases == 0) return 1;
  fmt::print("corpus: {:.0f} MB of unittest -v logs in {} files\n", mb, corpus.size());
  fmt::print("read:  {:8.0f} MB/s (baseline: read(2) of the same files)\n", read_rate);
  fmt::print("lines: {:8.0f} MB/s (LineReader alone), ratio to read {:.2f}\n", lines_rate,
             lines_rate / read_rate);
  fmt::print(
      "parse: {:8.0f} MB/s (parse_unittest_log, {} cases), ratio to read {:.2f}; target "
      ">= 200 MB/s\n",
      parse_rate, cases, parse_rate / read_rate);
  std::fflush(stdout);

  // Peak memory for a big log: in a child, so the corpus above does not count.
  const fs::path big = write_flooded(dir, big_gb << 30, "big.log");
  pid_t pid = ::fork();
  if (pid == 0) {
    const long before = max_rss_kb();
    devshim::LineReader lines(big);
    devshim::ParsedFile parsed = devshim::parse_unittest_log(lines, "tests/x.py");
    const long after = max_rss_kb();
    fmt::print(
        "peak memory parsing {:.2f} GB: {:.1f} MB (RSS before {:.1f} MB, {} cases kept); "
        "target < 64 MB\n",
        static_cast<double>(fs::file_size(big)) / 1e9, after / 1024.0, before / 1024.0,
        parsed.cases.size());
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!keep) fs::remove_all(dir);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
