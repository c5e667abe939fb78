#include "parsers/line_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace devshim {

namespace {

constexpr std::size_t kBufferSize = 1 << 20;
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

bool is_cont(unsigned char c) { return (c & 0xC0U) == 0x80U; }

// Length of the valid UTF-8 sequence starting at p (1..4), or 0 when it is invalid.
std::size_t utf8_sequence(const unsigned char* p, std::size_t n) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && is_cont(p[1]) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || !is_cont(p[1]) || !is_cont(p[2])) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong
    if (c == 0xED && p[1] > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || !is_cont(p[1]) || !is_cont(p[2]) || !is_cont(p[3])) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;
    if (c == 0xF4 && p[1] > 0x8F) return 0;
    return 4;
  }
  return 0;
}

// Skips an escape sequence starting at text[i] == ESC; returns the index after it.
std::size_t skip_escape(std::string_view text, std::size_t i) {
  ++i;
  if (i >= text.size()) return i;
  if (text[i] == '[') {  // CSI: parameters, then one final byte 0x40..0x7E
    for (++i; i < text.size(); ++i) {
      auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x40 && c <= 0x7E) return i + 1;
    }
    return i;
  }
  if (text[i] == ']') {  // OSC: until BEL or ESC '\'
    for (++i; i < text.size(); ++i) {
      if (text[i] == '\x07') return i + 1;
      if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '\\') return i + 2;
    }
    return i;
  }
  return i + 1;  // two-byte escape
}

// True when text holds a byte other than printable ASCII and tab. The hot path of every log
// line: branch-free over 32-byte blocks so that the compiler vectorises it.
bool needs_cleaning(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    unsigned bad = 0;
    for (std::size_t k = 0; k < 32; ++k) {
      const unsigned c = p[i + k];
      bad |= static_cast<unsigned>((c < 0x20U) & (c != 0x09U)) | static_cast<unsigned>(c >= 0x7FU);
    }
    if (bad != 0) return true;
  }
  unsigned bad = 0;
  for (; i < n; ++i) {
    const unsigned c = p[i];
    bad |= static_cast<unsigned>((c < 0x20U) & (c != 0x09U)) | static_cast<unsigned>(c >= 0x7FU);
  }
  return bad != 0;
}

// Appends text to out with escapes and control characters removed and invalid UTF-8 replaced.
// keep_newlines keeps "\n" (and drops "\r"); otherwise both are removed.
void clean_into(std::string_view text, std::string& out, bool keep_newlines) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = p[i];
    if (c == 0x1B) {
      i = skip_escape(text, i);
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      if (c == '\t' || (keep_newlines && c == '\n')) out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    std::size_t len = utf8_sequence(p + i, text.size() - i);
    if (len == 0) {
      out.append(kReplacement);
      ++i;
    } else {
      out.append(text.data() + i, len);
      i += len;
    }
  }
}

}  // namespace

std::string_view clean_line(std::string_view text, std::string& scratch) {
  if (!needs_cleaning(text)) return text;
  while (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  std::string cleaned;
  cleaned.reserve(text.size());
  if (auto first = text.find('\r'); first != std::string_view::npos) {
    // A progress bar: keep what was printed before it (a test's name) and its final state (a
    // verdict may follow it on the same line); the intermediate frames go.
    clean_into(text.substr(0, first), cleaned, /*keep_newlines=*/false);
    clean_into(text.substr(text.rfind('\r') + 1), cleaned, /*keep_newlines=*/false);
  } else {
    clean_into(text, cleaned, /*keep_newlines=*/false);
  }
  scratch = std::move(cleaned);
  return scratch;
}

std::string sanitize_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  if (!needs_cleaning(text)) {
    out.assign(text);
    return out;
  }
  clean_into(text, out, /*keep_newlines=*/true);
  return out;
}

LineReader::LineReader(const std::filesystem::path& path, std::size_t max_line_bytes)
    : max_line_(max_line_bytes) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw RuntimeError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  }
  // A small file needs no 1 MiB buffer (the runner reads thousands of short logs).
  struct stat st {};
  cap_ = kBufferSize;
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0) {
    cap_ = std::clamp<std::size_t>(static_cast<std::size_t>(st.st_size) + 1, 4096, kBufferSize);
  }
  buf_ = std::make_unique_for_overwrite<char[]>(cap_);
}

LineReader LineReader::from_string(std::string text, std::size_t max_line_bytes) {
  LineReader r;
  r.max_line_ = max_line_bytes;
  r.from_memory_ = true;
  r.memory_ = std::move(text);
  r.end_ = r.memory_.size();
  r.eof_ = true;
  return r;
}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

LineReader::LineReader(LineReader&& o) noexcept { *this = std::move(o); }

LineReader& LineReader::operator=(LineReader&& o) noexcept {
  if (this == &o) return *this;
  if (fd_ >= 0) ::close(fd_);
  fd_ = o.fd_;
  o.fd_ = -1;
  memory_ = std::move(o.memory_);
  from_memory_ = o.from_memory_;
  buf_ = std::move(o.buf_);
  cap_ = o.cap_;
  begin_ = o.begin_;
  end_ = o.end_;
  eof_ = o.eof_;
  max_line_ = o.max_line_;
  line_ = std::move(o.line_);
  truncated_ = o.truncated_;
  line_number_ = o.line_number_;
  bytes_read_ = o.bytes_read_;
  return *this;
}

bool LineReader::fill() {
  if (from_memory_ || eof_) return false;
  ssize_t n = 0;
  do {
    n = ::read(fd_, buf_.get(), cap_);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = static_cast<std::size_t>(n);
  return true;
}

bool LineReader::next(std::string_view& line) {
  truncated_ = false;
  line_.clear();
  bool partial = false;
  std::string scratch;
  while (true) {
    if (begin_ == end_ && !fill()) {
      if (!partial) return false;
      break;  // last line without a newline
    }
    const char* data = from_memory_ ? memory_.data() : buf_.get();
    const char* start = data + begin_;
    const std::size_t avail = end_ - begin_;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', avail));
    const std::size_t take = nl != nullptr ? static_cast<std::size_t>(nl - start) : avail;
    const std::size_t consumed = take + (nl != nullptr ? 1 : 0);
    begin_ += consumed;
    bytes_read_ += consumed;
    if (!partial && nl != nullptr && take <= max_line_) {
      // Fast path: the whole line is in the buffer.
      ++line_number_;
      std::string_view raw(start, take);
      std::string_view cleaned = clean_line(raw, line_);
      line = cleaned.data() == raw.data() ? raw : std::string_view(line_);
      return true;
    }
    partial = true;
    const std::size_t room = max_line_ > line_.size() ? max_line_ - line_.size() : 0;
    if (take > room) truncated_ = true;
    line_.append(start, std::min(take, room));
    if (nl != nullptr) break;
  }
  ++line_number_;
  std::string_view cleaned = clean_line(line_, scratch);
  if (cleaned.data() != line_.data()) line_ = std::string(cleaned);
  line = line_;
  return true;
}

}  // namespace devshim
