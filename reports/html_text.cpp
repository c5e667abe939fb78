#include "reports/html_text.h"

#include <cstddef>
#include <string>

#include "reports/site_assets.h"

namespace devshim {

namespace html {

namespace {

bool needs_percent_encoding(unsigned char c) {
  return c <= 0x20 || c == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\' ||
         c == '`';
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  append_escaped(out, text);
  return out;
}

std::string safe_href(std::string_view link) {
  // Browsers strip leading and trailing spaces and control characters, and drop tabs and
  // newlines anywhere, before they parse a URL; encoding them first leaves that clean-up nothing
  // to join ("java\tscript:" stays the relative path "java%09script:", which is then refused).
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(link.size());
  for (char ch : link) {
    const auto c = static_cast<unsigned char>(ch);
    if (needs_percent_encoding(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
  if (out.empty()) return "";
  const auto end = out.find_first_of(":/?#");
  if (end != std::string::npos && out[end] == ':') {
    // A scheme (or something a browser might read as one): only http(s), with a host.
    const std::string scheme = lower_ascii(std::string_view(out).substr(0, end));
    if (scheme != "http" && scheme != "https") return "";
    if (out.compare(end + 1, 2, "//") != 0 || out.size() <= end + 3) return "";
    return out;
  }
  if (out.starts_with("//")) return "";  // a network-path reference: another host
  return out;
}

void append_escaped(std::string& out, std::string_view text) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::string_view replacement;
    switch (c) {
      case '&':
        replacement = "&amp;";
        break;
      case '<':
        replacement = "&lt;";
        break;
      case '>':
        replacement = "&gt;";
        break;
      case '"':
        replacement = "&quot;";
        break;
      case '\'':
        replacement = "&#39;";
        break;
      default:
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
          replacement = "\xEF\xBF\xBD";  // U+FFFD
        }
    }
    if (!replacement.empty()) {
      out.append(text.substr(start, i - start));
      out.append(replacement);
      start = i + 1;
    }
  }
  out.append(text.substr(start));
}

std::string page_head(std::string_view title, std::string_view extra_style) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; "
      "form-action 'none'\">\n"
      "<meta name=\"referrer\" content=\"no-referrer\">\n"
      "<meta name=\"generator\" content=\"devshim runner\">\n<title>";
  append_escaped(out, title);
  out += "</title>\n<style>";
  out += assets::report_css;
  out += extra_style;
  out += "</style>\n</head>\n";
  return out;
}

}  // namespace html

}  // namespace devshim
