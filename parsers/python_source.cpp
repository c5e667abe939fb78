#include "parsers/python_source.h"

#include <algorithm>
#include <vector>

#include "parsers/text.h"

namespace devshim {

namespace {

// Whether an `if`/`elif` header's condition holds only where CUDA is there: it asks for CUDA's
// availability or device count (`torch.cuda.is_available()`, `torch.cuda.device_count() > 1`,
// a flag named so: TEST_CUDA, HAS_CUDA, USE_CUDA, CUDA_AVAILABLE, any case) and neither negates
// it nor offers another way in (`not`, `or`). `negated`: the condition must be negated instead
// (`if not torch.cuda.is_available():`).
bool asks_for_cuda(std::string_view header, bool negated) {
  std::string_view cond;
  if (header.starts_with("if ")) {
    cond = header.substr(3);
  } else if (header.starts_with("elif ") && !negated) {
    cond = header.substr(5);
  } else {
    return false;
  }
  if (!cond.ends_with(':')) return false;
  const std::string lower = ascii_lower(cond);
  const bool asks = has(lower, "cuda.is_available(") || has(lower, "cuda.device_count(") ||
                    has_word(lower, "test_cuda") || has_word(lower, "has_cuda") ||
                    has_word(lower, "use_cuda") || has_word(lower, "cuda_available");
  if (!asks || has_word(lower, "or")) return false;
  return negated ? lower.starts_with("not ") && !has(lower.substr(4), "not ")
                 : !has_word(lower, "not");
}

// Whether a statement leaves its block: returns, continues, raises or skips the test.
bool leaves_block(std::string_view statement) {
  return statement == "return" || statement.starts_with("return ") || statement == "continue" ||
         statement.starts_with("raise ") || statement.starts_with("self.skipTest(") ||
         statement.starts_with("pytest.skip(");
}

std::size_t indent_of(std::string_view line) {
  const std::size_t n = line.find_first_not_of(" \t");
  return n == std::string_view::npos ? line.size() : n;
}

}  // namespace

int bracket_step(char c) {
  if (c == '(' || c == '[' || c == '{') return 1;
  if (c == ')' || c == ']' || c == '}') return -1;
  return 0;
}

bool opens_def(std::string_view source) {
  return source.starts_with("def ") || source.starts_with("async def ");
}

int bracket_depth(std::string_view text) {
  int depth = 0;
  for (char c : text) depth += bracket_step(c);
  return depth;
}

bool opens_expectation_block(std::string_view code) {
  const std::string_view t = trim(code);
  return t.rfind("with ", 0) == 0 && (has(t, "pytest.raises(") || has(t, "pytest.warns(")) &&
         (t.back() == ':' || bracket_depth(t) > 0);
}

std::string statement_at(std::string_view source, int line) {
  constexpr int kMaxLines = 40;
  std::string out;
  if (line < 1) return out;
  std::size_t pos = 0;
  for (int i = 1; i < line; ++i) {
    pos = source.find('\n', pos);
    if (pos == std::string_view::npos) return out;
    ++pos;
  }
  if (pos >= source.size()) return out;
  const std::size_t indent = source.find_first_not_of(" \t", pos) - pos;
  int depth = 0;
  int n = 0;
  for (; n < kMaxLines && pos < source.size(); ++n) {
    const std::size_t end = std::min(source.find('\n', pos), source.size());
    const std::string_view text = trim(source.substr(pos, end - pos));
    if (!text.empty()) {
      if (!out.empty()) out += ' ';
      out += text;
    }
    depth += bracket_depth(text);
    pos = end + 1;
    if (depth <= 0 && !(!text.empty() && text.back() == '\\')) break;
  }
  if (!opens_expectation_block(out)) return out;
  // The block's body: the lines after the header indented deeper than it (blank ones skipped).
  for (++n; n < kMaxLines && pos < source.size(); ++n) {
    const std::size_t end = std::min(source.find('\n', pos), source.size());
    const std::string_view line = source.substr(pos, end - pos);
    const std::string_view text = trim(line);
    if (!text.empty()) {
      if (line.find_first_not_of(" \t") <= indent) break;
      out += ' ';
      out += text;
    }
    pos = end + 1;
  }
  return out;
}

int cuda_branch_at(std::string_view source, int line) {
  const std::vector<std::string_view> lines = lines_of(source);
  if (line < 1 || static_cast<std::size_t>(line) > lines.size()) return 0;
  std::size_t indent = indent_of(lines[static_cast<std::size_t>(line) - 1]);
  if (trim(lines[static_cast<std::size_t>(line) - 1]).empty()) return 0;
  for (std::size_t j = static_cast<std::size_t>(line) - 1; j-- > 0;) {
    const std::string_view text = trim(lines[j]);
    if (text.empty() || text.front() == '#') continue;
    const std::size_t at = indent_of(lines[j]);
    if (at < indent) {
      // The header of a block the line is in.
      if (asks_for_cuda(text, false)) return static_cast<int>(j) + 1;
      if (opens_def(text) || text.starts_with("class ")) return 0;
      indent = at;
    } else if (at == indent && asks_for_cuda(text, true)) {
      // An earlier statement of the same block: `if not torch.cuda.is_available(): return`
      // (or a skip, a raise, a continue): its body's last statement leaves the block.
      std::string_view last;
      for (std::size_t k = j + 1; k < lines.size(); ++k) {
        const std::string_view next = trim(lines[k]);
        if (next.empty() || next.front() == '#') continue;
        if (indent_of(lines[k]) <= at) break;
        last = next;
      }
      if (leaves_block(last)) return static_cast<int>(j) + 1;
    }
  }
  return 0;
}

}  // namespace devshim
