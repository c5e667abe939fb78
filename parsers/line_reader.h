// Reading a test process's log as clean text lines, in bounded memory, whatever bytes it holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace devshim {

/// Reads a file line by line with a fixed-size buffer. Each line is returned cleaned:
/// - the line ending ("\n", "\r\n") is removed;
/// - a line redrawn with "\r" (a progress bar) keeps the text before the first "\r" and after
///   the last one, joined: what was printed before the bar (a test's name) and the bar's final
///   state (after which a verdict may follow); trailing "\r"s are ignored;
/// - ANSI escape sequences (CSI "\x1b[...m", OSC "\x1b]...\x07") and NUL bytes are removed;
/// - bytes that are not valid UTF-8 become U+FFFD;
/// - a line longer than max_line_bytes is cut there (truncated() says so) and the rest of it is
///   skipped without being kept in memory.
/// Memory use is O(buffer + max_line_bytes) whatever the file size.
class LineReader {
 public:
  static constexpr std::size_t kDefaultMaxLine = std::size_t{64} * 1024;

  /// Opens path; throws RuntimeError when it cannot be read.
  explicit LineReader(const std::filesystem::path& path,
                      std::size_t max_line_bytes = kDefaultMaxLine);
  /// Reads from text in memory (tests, fuzzing).
  static LineReader from_string(std::string text, std::size_t max_line_bytes = kDefaultMaxLine);
  ~LineReader();
  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;

  /// Next line, valid until the following call; false at end of input.
  bool next(std::string_view& line);
  /// The line just returned was longer than max_line_bytes and was cut.
  bool truncated() const { return truncated_; }
  /// 1-based number of the line just returned.
  std::uint64_t line_number() const { return line_number_; }
  /// Bytes consumed so far.
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  LineReader() = default;
  bool fill();

  int fd_ = -1;
  std::string memory_;  // from_string input
  bool from_memory_ = false;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0, begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::size_t max_line_ = kDefaultMaxLine;
  std::string line_;  // assembled / cleaned line
  bool truncated_ = false;
  std::uint64_t line_number_ = 0;
  std::uint64_t bytes_read_ = 0;
};

/// The cleaning LineReader applies to one line (without its ending): "\r" redraws, escapes and
/// NULs removed, invalid UTF-8 → U+FFFD. Returns text unchanged (no copy) when it is clean.
std::string_view clean_line(std::string_view text, std::string& scratch);

/// Valid UTF-8 with invalid sequences replaced by U+FFFD, control characters other than
/// "\t\n\r" removed (for storing and rendering text from logs).
std::string sanitize_text(std::string_view text);

}  // namespace devshim
