#include "parsers/pytest_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "parsers/gap_attribution.h"
#include "parsers/pytest_lines.h"
#include "parsers/text.h"
#include "parsers/traceback.h"

namespace devshim {

namespace {

using namespace pytest_lines;
using namespace pytest_report;

constexpr std::size_t kUnfinishedTailLines = 60;
constexpr std::size_t kMaxSkipEntries = 100000;

void merge_status(std::optional<CaseStatus>& into, CaseStatus s) {
  if (!into || outcome_rank(s) > outcome_rank(*into)) into = s;
}

class PytestTextParser {
 public:
  void line(std::string_view l) {
    auto title = equals_title(l);
    if (title) interrupt_report_ = false;
    if (title && section_title(*title)) return;
    if (l.starts_with("!!!")) {
      bang_line(l);
      return;
    }
    if (interrupt_report_) interrupt_->report.add(l);  // and read as ever: it may be output
    switch (section_) {
      case Section::kHeader:
        header_line(l);
        return;
      case Section::kProgress:
        progress_line(l);
        return;
      case Section::kErrors:
      case Section::kFailures:
      case Section::kPasses:
        block_line(l);
        return;
      case Section::kSummary:
        summary_line(l);
        return;
      case Section::kOther:
        return;
    }
  }

  ParsedFile finish() {
    end_block();
    attach_blocks();
    emit_cases();
    complete_skip_reasons();
    add_module_skips();
    emit_unfinished();
    return std::move(out_);
  }

 private:
  enum class Section { kHeader, kProgress, kErrors, kFailures, kPasses, kSummary, kOther };

  struct Node {
    std::string nodeid;
    std::optional<CaseStatus> progress;  // progress lines and report blocks, merged
    std::optional<CaseStatus> summary;   // short test summary lines, merged
    std::string reason;                  // "SKIPPED (reason)" on the progress line
    std::string summary_message;         // " - message" of the summary line that decided
    int failure_block = -1;
    int error_block = -1;
  };

  struct Block {
    std::string title;
    CaseStatus status = CaseStatus::kFailed;
    bool collection = false;
    bool capturing = true;  // until a "--- Captured stdout call ---" subsection
    CappedText text;
    FailureScanner scan;
    // In "--- Captured stderr call ---": the last Python traceback printed there (a child
    // process's, kept for subprocess.CalledProcessError), and whether it is being read.
    bool in_stderr = false;
    bool in_child = false;
    CappedText child;
  };

  struct Pending {
    std::string nodeid;
    std::deque<std::string> tail;  // its output, the last kUnfinishedTailLines lines
  };

  // An exception that ended the session during the test `nodeid`, from pytest's "!!! ... !!!"
  // banner.
  struct Interrupt {
    std::string nodeid, exception, message;
    bool counted_before = false;  // a closing counts line came before the banner
    CappedText report;            // what was printed under the banner, up to the next title
    bool report_in_tail = false;  // ...and read as the test's output (not in a summary section)
  };

  struct SkipEntry {
    std::string path;
    int line = 0;
    std::string reason;
    int remaining = 1;  // the "[n]": how many skipped tests it stands for
  };

  Node& node(std::string_view nodeid) {
    std::string key(nodeid);
    auto [it, inserted] = by_id_.emplace(key, nodes_.size());
    if (inserted) {
      nodes_.emplace_back();
      nodes_.back().nodeid = std::move(key);
    }
    return nodes_[it->second];
  }

  // A "= title =" line: true when it changes the section (or is the closing counts line).
  bool section_title(std::string_view title) {
    // The closing counts line, pytest's other sections (warnings summary, slowest durations,
    // rerun summary) and, once past the reports, any plugin's section: nothing to read there.
    Section next = Section::kOther;
    if (title == "test session starts") {
      next = Section::kHeader;
    } else if (title == "ERRORS") {
      next = Section::kErrors;
    } else if (title == "FAILURES") {
      next = Section::kFailures;
    } else if (title == "PASSES" || title == "XPASSES" || title == "XFAILURES") {
      next = Section::kPasses;
    } else if (title == "short test summary info") {
      next = Section::kSummary;
    } else if (!parse_counts(title, out_.reported) && title != "warnings summary" &&
               !title.starts_with("slowest ") && title != "rerun test summary info" &&
               section_ != Section::kSummary && section_ != Section::kOther) {
      return false;  // "=== x ===" printed by a test: content
    }
    end_block();
    section_ = next;
    return true;
  }

  void bang_line(std::string_view l) {
    std::size_t b = l.find_first_not_of('!');
    std::size_t e = l.find_last_not_of('!');
    if (b == std::string_view::npos) return;
    std::string_view t = trim(l.substr(b, e - b + 1));
    if (t.starts_with("Interrupted:") && t.find("during collection") != std::string_view::npos) {
      out_.import_error = true;
    }
    // An exception that ended the session in the middle of a test, which raised it: pytest
    // titles the banner with it ("KeyboardInterrupt", "_pytest.outcomes.Exit: reason") and, for
    // a KeyboardInterrupt, prints "path:line: message" under it (the whole traceback with
    // --full-trace), then its closing counts line. A test's own output can look the same: the
    // banner counts only if that test never gets a verdict and the counts line follows.
    std::string_view name, rest;
    if (pending_ && !t.starts_with("Interrupted:") && split_exception(t, name, rest) &&
        plausible_exception(name)) {
      Interrupt i;
      i.nodeid = pending_->nodeid;
      i.exception = std::string(name);
      i.message = capped_message(rest);
      i.counted_before = out_.reported.present;
      add_pending_output(l);
      interrupt_.emplace(std::move(i));
      interrupt_report_ = true;
    }
  }

  // The exception that ended the session in the pending test, if that is what happened.
  const Interrupt* session_ended_by_pending() const {
    if (!interrupt_ || !pending_ || interrupt_->nodeid != pending_->nodeid) return nullptr;
    if (interrupt_->counted_before || !out_.reported.present) return nullptr;
    return &*interrupt_;
  }

  void header_line(std::string_view l) {
    // A conftest.py that fails to import stops pytest before its session starts (exit code 4):
    // "ImportError while loading conftest '<path>'." and a short traceback follow. It is the
    // file's collection error: every test of the file is lost.
    if (l.starts_with("ImportError while loading conftest ")) {
      end_block();
      Block b;
      b.status = CaseStatus::kError;
      b.collection = true;
      b.title = std::string(l);
      block_.emplace(std::move(b));
      block_->text.add(l);
      section_ = Section::kErrors;
      return;
    }
    if (std::size_t c = l.find("collected "); c != std::string_view::npos) {
      collected_line(l.substr(c + 10));
      section_ = Section::kProgress;
      return;
    }
    if (nodeid_start(l)) {
      section_ = Section::kProgress;
      progress_line(l);
    }
  }

  // "30 items / 1 error / 2 skipped / 3 deselected / 27 selected"
  void collected_line(std::string_view s) {
    while (!s.empty()) {
      std::size_t sep = s.find(" / ");
      std::string_view item = trim(s.substr(0, sep));
      s = sep == std::string_view::npos ? std::string_view{} : s.substr(sep + 3);
      int n = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
      if (ec != std::errc()) continue;
      std::string_view word = trim(item.substr(static_cast<std::size_t>(ptr - item.data())));
      if ((word == "error" || word == "errors") && n > 0) out_.import_error = true;
      if (word == "skipped") collect_skipped_ += n;
      if ((word == "items" || word == "item") && n > 0 && nodes_.empty()) {
        const auto expect = static_cast<std::size_t>(std::min(n, 1 << 20));
        nodes_.reserve(expect);
        by_id_.reserve(expect);
      }
    }
  }

  void progress_line(std::string_view l) {
    if (auto p = nodeid_start(l)) {
      node_line(l, *p);
      return;
    }
    if (!pending_) return;
    if (auto v = trailing_verdict(l); v && (v->progress || !saw_progress_column_)) {
      std::string nodeid = std::move(pending_->nodeid);
      pending_.reset();
      complete(nodeid, *v);
      return;
    }
    add_pending_output(l);
  }

  void node_line(std::string_view l, std::size_t sep) {
    // pytest 9 subtests: "tests/x.py::test_y SUBFAILED[msg] (i=1)  [100%]".
    std::size_t end = nodeid_end(l, sep + 2);
    if (end != std::string_view::npos && end < l.size()) {
      std::string_view rest = ltrim(l.substr(end + 1));
      if (rest.starts_with("SUB") && rest.size() > 3 && rest[3] >= 'A' && rest[3] <= 'Z') {
        if (rest.starts_with("SUBFAILED")) {
          merge_status(node(l.substr(0, end)).progress, CaseStatus::kFailed);
        }
        return;
      }
    }
    // Once pytest printed a progress column, a verdict without one is the test's own output.
    if (auto v = trailing_verdict(l); v && (v->progress || !saw_progress_column_)) {
      std::string_view cand = rtrim(v->before);
      std::size_t e = nodeid_end(cand, sep + 2);
      std::string_view nodeid = e == std::string_view::npos ? cand : cand.substr(0, e);
      pending_.reset();  // it finished (a line "id " before, as unittest subtests print)
      complete(nodeid, *v);
      return;
    }
    // The test started and has not finished yet (its verdict comes later, or never).
    std::string_view nodeid = end == std::string_view::npos ? rtrim(l) : l.substr(0, end);
    if (!pending_ || pending_->nodeid != nodeid) {
      pending_.emplace();
      pending_->nodeid = std::string(nodeid);
    }
    if (end != std::string_view::npos && end < l.size()) {
      std::string_view out = trim(l.substr(end + 1));
      if (!out.empty()) add_pending_output(out);
    }
  }

  void add_pending_output(std::string_view l) {
    if (interrupt_report_) interrupt_->report_in_tail = true;
    pending_->tail.emplace_back(cut_utf8(l, kMaxMessageBytes));
    if (pending_->tail.size() > kUnfinishedTailLines) pending_->tail.pop_front();
  }

  void complete(std::string_view nodeid, const Verdict& v) {
    if (v.progress) saw_progress_column_ = true;
    Node& n = node(nodeid);
    merge_status(n.progress, v.status);
    if (!v.reason.empty()) n.reason = capped_message(v.reason);
  }

  void block_line(std::string_view l) {
    if (auto title = block_title(l)) {
      end_block();
      if (section_ == Section::kPasses) return;
      Block b;
      std::string_view t = *title;
      if (section_ == Section::kErrors) {
        b.status = CaseStatus::kError;
        if (t.starts_with("ERROR at setup of ")) {
          t.remove_prefix(18);
        } else if (t.starts_with("ERROR at teardown of ")) {
          t.remove_prefix(21);
        } else if (t.starts_with("ERROR collecting ")) {
          t.remove_prefix(17);
          b.collection = true;
        }
      }
      b.title = std::string(t);
      block_.emplace(std::move(b));
      return;
    }
    if (!block_) return;
    if (l.starts_with("---") && l.find(" Captured ") != std::string_view::npos) {
      block_->capturing = false;
      block_->in_stderr = l.find(" Captured stderr call ") != std::string_view::npos;
      block_->in_child = false;
      return;
    }
    if (!block_->capturing) {
      child_traceback_line(*block_, l);
      return;
    }
    block_->text.add(l);
    block_->scan.feed(l);
  }

  // A line of the captured stderr: Python's traceback format, from its header to the exception
  // line (the first line not indented), the last one printed.
  static void child_traceback_line(Block& b, std::string_view l) {
    if (!b.in_stderr) return;
    if (l.starts_with("Traceback (most recent call last):")) {
      b.child = CappedText();
      b.in_child = true;
    } else if (!b.in_child) {
      return;
    } else if (!l.empty() && l[0] != ' ') {
      b.in_child = false;  // the exception's line ends it
    }
    b.child.add(l);
  }

  void end_block() {
    if (!block_) return;
    if (block_->collection) {
      out_.import_error = true;
      std::string text = block_->text.str();
      if (!out_.import_error_text.empty()) out_.import_error_text += "\n\n";
      out_.import_error_text += text;
    } else {
      blocks_.push_back(std::move(*block_));
    }
    block_.reset();
  }

  void summary_line(std::string_view l) {
    if (l.starts_with("SKIPPED ")) {
      skip_entry(l.substr(8));
      return;
    }
    std::size_t sp = l.find(' ');
    if (sp == std::string_view::npos) return;
    std::string_view word = l.substr(0, sp);
    if (word.starts_with("SUB")) {
      // "SUBFAILED(i=1) tests/x.py::T::test_y - msg", "SUBFAILED[m] (i=1) tests/x.py::t - msg"
      if (!word.starts_with("SUBFAILED")) return;
      std::size_t py = l.find(".py::");
      if (py == std::string_view::npos) return;
      std::size_t start = l.rfind(' ', py);
      if (start == std::string_view::npos) return;
      summary_result(l.substr(start + 1), CaseStatus::kFailed);
      return;
    }
    auto status = verdict_status(word);
    if (!status || *status == CaseStatus::kSkipped) return;
    summary_result(l.substr(sp + 1), *status);
  }

  // "tests/x.py::test_b[a - b] - AssertionError: msg" → node id and message, preferring a split
  // that gives a known node id.
  void summary_result(std::string_view rest, CaseStatus status) {
    std::string_view nodeid, message;
    bool known = false;
    for (std::size_t p = rest.find(" - "); p != std::string_view::npos;
         p = rest.find(" - ", p + 1)) {
      if (by_id_.count(std::string(rest.substr(0, p)))) {
        nodeid = rest.substr(0, p);
        message = rest.substr(p + 3);
        known = true;
        break;
      }
    }
    if (!known) {
      std::size_t sep = rest.find("::");
      std::size_t e = nodeid_end(rest, sep == std::string_view::npos ? 0 : sep + 2);
      if (e == std::string_view::npos) e = std::min(rest.find(" - "), rest.size());
      nodeid = rtrim(rest.substr(0, e));
      std::string_view after = rest.substr(e);
      if (after.starts_with(" - ")) message = after.substr(3);
    }
    if (nodeid.empty()) return;
    if (nodeid.find("::") == std::string_view::npos && status == CaseStatus::kError) {
      out_.import_error = true;  // "ERROR tests/x.py": a collection error
      if (out_.import_error_text.empty()) out_.import_error_text = capped_message(message);
      return;
    }
    Node& n = node(nodeid);
    std::optional<CaseStatus> before = n.summary;
    merge_status(n.summary, status);
    if (n.summary != before || (*n.summary == status && n.summary_message.empty())) {
      n.summary_message = capped_message(message);
    }
  }

  // "[1] tests/x.py:23: reason"
  void skip_entry(std::string_view s) {
    if (skips_.size() >= kMaxSkipEntries) return;
    s = ltrim(s);
    SkipEntry e;
    if (s.starts_with('[')) {
      std::size_t rb = s.find("] ");
      if (rb != std::string_view::npos) {
        std::from_chars(s.data() + 1, s.data() + rb, e.remaining);
        s = ltrim(s.substr(rb + 2));
      }
    }
    e.reason = capped_message(s);
    for (std::size_t i = s.find(':'); i != std::string_view::npos; i = s.find(':', i + 1)) {
      std::size_t j = i + 1;
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j > i + 1 && j < s.size() && s[j] == ':') {
        e.path = std::string(s.substr(0, i));
        std::from_chars(s.data() + i + 1, s.data() + j, e.line);
        std::string_view reason = trim(s.substr(j + 1));
        if (reason.starts_with("Skipped: ")) reason.remove_prefix(9);
        e.reason = capped_message(reason);
        break;
      }
    }
    skips_.push_back(std::move(e));
  }

  // Report blocks are titled by the test's head line ("TestC.test_y[1]", subtests adding
  // " (i=1)" or " [msg] (i=1)"): give each to its node. A head line turns back into a node id
  // (file + "::" + head with "." → "::" before any "["), which is looked up directly; a map of
  // every node's head line is built only when that fails (doctest names hold dots).
  void attach_blocks() {
    if (blocks_.empty()) return;
    std::vector<std::string> files;  // of the tests seen: one for a per-file run
    for (const Node& n : nodes_) {
      std::string_view file = std::string_view(n.nodeid).substr(0, n.nodeid.find("::"));
      if (std::find(files.begin(), files.end(), file) == files.end()) {
        if (files.size() >= 64) {
          files.clear();  // too many files to try each: use the map
          break;
        }
        files.emplace_back(file);
      }
    }
    auto by_node_id = [&](std::string_view head) -> std::optional<std::size_t> {
      std::size_t br = head.find('[');
      std::string tail;
      for (char c : head.substr(0, br)) {
        if (c == '.') {
          tail += "::";
        } else {
          tail.push_back(c);
        }
      }
      if (br != std::string_view::npos) tail.append(head.substr(br));
      std::string id;
      for (const std::string& file : files) {
        id.assign(file).append("::").append(tail);
        if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
      }
      return std::nullopt;
    };
    std::unordered_map<std::string, std::size_t> by_head;
    auto by_head_line = [&](std::string_view head) -> std::optional<std::size_t> {
      if (by_head.empty()) {
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
          by_head.emplace(head_line(nodes_[i].nodeid), i);
        }
      }
      if (auto it = by_head.find(std::string(head)); it != by_head.end()) return it->second;
      return std::nullopt;
    };
    // The title, then shorter and shorter prefixes ending before a space (subtest suffixes).
    auto find_node = [](std::string_view title, auto&& lookup) -> std::optional<std::size_t> {
      std::optional<std::size_t> i = lookup(title);
      for (std::size_t sp = title.rfind(' '); !i && sp != std::string_view::npos;
           sp = sp == 0 ? std::string_view::npos : title.rfind(' ', sp - 1)) {
        i = lookup(title.substr(0, sp));
      }
      return i;
    };
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      std::string_view title = blocks_[b].title;
      std::optional<std::size_t> i = find_node(title, by_node_id);
      if (!i) i = find_node(title, by_head_line);
      if (!i) continue;
      Node& n = nodes_[*i];
      int& slot = blocks_[b].status == CaseStatus::kFailed ? n.failure_block : n.error_block;
      if (slot < 0) slot = static_cast<int>(b);
      merge_status(n.progress, blocks_[b].status);
    }
  }

  void emit_cases() {
    for (const Node& n : nodes_) {
      std::optional<CaseStatus> status = n.summary ? n.summary : n.progress;
      if (!status) continue;
      PytestName id = split_pytest_nodeid(n.nodeid);
      TestCase c;
      c.classname = std::move(id.classname);
      c.name = std::move(id.name);
      c.status = *status;
      c.source = SourceLocation{id.file, 0};
      if (*status == CaseStatus::kFailed || *status == CaseStatus::kError) {
        int b = *status == CaseStatus::kFailed
                    ? (n.failure_block >= 0 ? n.failure_block : n.error_block)
                    : (n.error_block >= 0 ? n.error_block : n.failure_block);
        if (b >= 0) {
          const Block& blk = blocks_[static_cast<std::size_t>(b)];
          c.traceback = blk.text.str();
          PytestFailure f = blk.scan.finish(c.traceback, id.file);
          c.exception = std::move(f.exception);
          c.message = std::move(f.message);
          if (f.location) c.source = std::move(*f.location);
          if (is_child_process_failure(c.exception)) {
            if (std::string child = blk.child.str(); !child.empty()) {
              c.traceback += "\n" + std::string(kChildTracebackHeader) + "\n" + child;
            }
          }
        }
        if (c.exception.empty() && c.message.empty()) {
          std::string_view name, rest;
          std::string_view msg = n.summary_message;
          if (split_exception(msg, name, rest) && plausible_exception(name) && !rest.empty()) {
            c.exception = std::string(name);
            c.message = std::string(rest);
          } else {
            c.message = n.summary_message;
            if (c.message.starts_with("assert ")) c.exception = "AssertionError";
          }
        }
      } else if (*status == CaseStatus::kXfailed || *status == CaseStatus::kXpassed) {
        c.message = n.summary_message.empty() ? n.reason : n.summary_message;
      } else if (*status == CaseStatus::kSkipped) {
        c.message = n.reason;
      }
      out_.cases.push_back(std::move(c));
    }
  }

  // pytest -v cuts a long skip reason to the terminal width ("(needs a GPU wi...)", "(...)", or
  // drops it), while the summary has it whole but names no test: "SKIPPED [n] path:line: reason",
  // one line per (location, reason) in the order the skips happened. Hand the entries out in
  // order to the skipped tests whose progress reason they are consistent with.
  void complete_skip_reasons() {
    for (TestCase& c : out_.cases) {
      if (c.status != CaseStatus::kSkipped) continue;
      std::string_view shown = c.message;
      bool cut = shown.empty() || shown.ends_with("...");
      std::string_view prefix = cut && !shown.empty() ? shown.substr(0, shown.size() - 3) : shown;
      for (SkipEntry& e : skips_) {
        if (e.remaining <= 0) continue;
        if (!e.path.empty() && !path_matches(e.path, c.source.path)) continue;
        std::string_view reason = e.reason;
        if (cut ? !reason.starts_with(prefix) : reason != shown) continue;
        --e.remaining;
        c.message = e.reason;
        break;
      }
    }
  }

  // `pytest.skip(..., allow_module_level=True)`: no test ran; the JUnit XML has one skipped
  // testcase with classname "" and the module as its name.
  void add_module_skips() {
    if (collect_skipped_ == 0) return;
    std::unordered_set<std::string> files;  // that have tests
    for (const Node& n : nodes_) files.insert(n.nodeid.substr(0, n.nodeid.find("::")));
    std::unordered_set<std::string> seen;
    for (const SkipEntry& e : skips_) {
      if (e.path.empty() || seen.count(e.path)) continue;
      bool has_tests = false;
      for (const std::string& f : files) has_tests = has_tests || path_matches(f, e.path);
      if (has_tests) continue;
      seen.insert(e.path);
      TestCase c;
      c.name = dotted_module(e.path);
      c.status = CaseStatus::kSkipped;
      c.message = e.reason;
      c.source = SourceLocation{e.path, e.line};
      out_.cases.push_back(std::move(c));
    }
  }

  void emit_unfinished() {
    if (!pending_) return;
    if (auto it = by_id_.find(pending_->nodeid); it != by_id_.end() && nodes_[it->second].summary) {
      return;  // it did finish: the summary lists it
    }
    PytestName id = split_pytest_nodeid(pending_->nodeid);
    TestCase c;
    c.classname = std::move(id.classname);
    c.name = std::move(id.name);
    c.status = CaseStatus::kError;
    c.source = SourceLocation{id.file, 0};
    CappedText text;
    for (const auto& l : pending_->tail) text.add(l);
    c.traceback = text.str();
    ParsedTraceback tb = parse_traceback(c.traceback);
    c.exception = tb.exception;
    c.message = capped_message(tb.message);
    if (auto loc = location_in_file(tb, id.file)) c.source = *loc;
    if (const Interrupt* i = session_ended_by_pending()) {
      // Its verdict is the exception it ended the session with, raised where pytest says.
      c.exception = i->exception;
      c.message = i->message;
      const std::string report = i->report.str();
      for_each_line(report, [&](std::string_view l) {  // the deepest line of its file
        if (auto f = py_location_line(l); f && path_matches(f->path, id.file)) {
          c.source = SourceLocation{id.file, f->line};
        }
      });
      if (!i->report_in_tail && !report.empty()) c.traceback += "\n" + report;
      out_.unfinished_ended_session = true;
    }
    out_.unfinished = std::move(c);
    pending_.reset();
  }

  ParsedFile out_;
  Section section_ = Section::kHeader;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, std::size_t> by_id_;
  std::optional<Pending> pending_;
  std::optional<Interrupt> interrupt_;
  bool interrupt_report_ = false;  // reading the lines under that banner
  bool saw_progress_column_ = false;
  std::optional<Block> block_;
  std::deque<Block> blocks_;  // a deque: Block (std::deque inside) would be copied on growth
  std::vector<SkipEntry> skips_;
  int collect_skipped_ = 0;
};

}  // namespace

PytestName split_pytest_nodeid(std::string_view nodeid) {
  std::size_t br = nodeid.find('[');
  std::string_view base = nodeid.substr(0, br);
  std::string_view params = br == std::string_view::npos ? std::string_view{} : nodeid.substr(br);
  std::vector<std::string_view> parts;
  for (std::size_t p = base.find("::"); p != std::string_view::npos; p = base.find("::")) {
    parts.push_back(base.substr(0, p));
    base.remove_prefix(p + 2);
  }
  parts.push_back(base);
  PytestName n;
  n.file = std::string(parts.front());
  std::string first = dotted_module(parts.front());
  if (parts.size() == 1) {
    n.name = first + std::string(params);
    return n;
  }
  n.classname = first;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    n.classname.push_back('.');
    n.classname.append(parts[i]);
  }
  n.name = std::string(parts.back()) + std::string(params);
  return n;
}

ParsedFile parse_pytest_text(LineReader& lines) {
  PytestTextParser parser;
  std::string_view line;
  while (lines.next(line)) parser.line(line);
  return parser.finish();
}

}  // namespace devshim
