#include "devshim/record.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>
#include <tuple>
#include <unordered_map>

namespace devshim {

namespace fs = std::filesystem;

namespace {

using RowKey = std::tuple<std::string, std::string, std::string, std::string, int>;

RowKey row_key(const RecordEntry& e) {
  return {e.api, e.requested, e.used, e.call_site.file, e.call_site.line};
}

bool row_less(const RecordEntry& a, const RecordEntry& b) { return row_key(a) < row_key(b); }

/// The hot-path key: the call site as the compiler's static strings (no copy), the api literal,
/// the request and where it landed.
struct HotKey {
  const char* file;
  const char* function;
  std::uint_least32_t line;
  std::uint_least32_t column;
  const char* api;
  std::string requested;
  std::string used;
  friend bool operator==(const HotKey&, const HotKey&) = default;
};

struct HotKeyHash {
  std::size_t operator()(const HotKey& k) const {
    std::size_t h = std::hash<const void*>()(k.file);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<const void*>()(k.function));
    mix(k.line);
    mix(k.column);
    mix(std::hash<const void*>()(k.api));
    mix(std::hash<std::string>()(k.requested));
    mix(std::hash<std::string>()(k.used));
    return h;
  }
};

/// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

struct Recorder::State {
  mutable std::mutex mutex;
  std::unordered_map<HotKey, RecordEntry*, HotKeyHash> sites;
  std::map<RowKey, RecordEntry*> rows;
  std::deque<RecordEntry> storage;  // stable addresses
};

std::string bare_function_name(std::string_view pretty) {
  std::string s(pretty.substr(0, pretty.find(" [with ")));
  for (std::string_view anon : {"(anonymous namespace)", "{anonymous}"}) {
    for (auto at = s.find(anon); at != std::string::npos; at = s.find(anon)) {
      s.replace(at, anon.size(), "anon");
    }
  }
  // The parameter list starts at the first '(' outside angle brackets ("operator()" aside).
  int depth = 0;
  std::size_t paren = s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0) {
      const bool call_operator =
          i >= 8 && s.compare(i - 8, 8, "operator") == 0 && s.compare(i, 2, "()") == 0;
      paren = call_operator ? i + 2 : i;
      break;
    }
  }
  std::string head = s.substr(0, paren);
  // Template arguments at the end of the name: f<int> -> f.
  if (!head.empty() && head.back() == '>' && head.find("operator") == std::string::npos) {
    depth = 0;
    for (std::size_t i = head.size(); i-- > 0;) {
      if (head[i] == '>') ++depth;
      if (head[i] == '<' && --depth == 0) {
        head.resize(i);
        break;
      }
    }
  }
  const auto cut = head.find_last_of(" :");
  return cut == std::string::npos ? head : head.substr(cut + 1);
}

Recorder::Recorder() : state_(std::make_unique<State>()) {}
Recorder::~Recorder() = default;

bool Recorder::hit(const char* api, std::string_view requested, std::string_view used,
                   const std::source_location& site) {
  HotKey key{site.file_name(),       site.function_name(), site.line(), site.column(), api,
             std::string(requested), std::string(used)};
  std::lock_guard lock(state_->mutex);
  if (auto it = state_->sites.find(key); it != state_->sites.end()) {
    ++it->second->count;
    return false;
  }
  RecordEntry fresh{api, key.requested, key.used, 0,
                    CallSite{site.file_name(), static_cast<int>(site.line()),
                             bare_function_name(site.function_name())}};
  const RowKey rk = row_key(fresh);
  bool created = false;
  RecordEntry* row = nullptr;
  if (auto it = state_->rows.find(rk); it != state_->rows.end()) {
    row = it->second;
  } else {
    row = &state_->storage.emplace_back(std::move(fresh));
    state_->rows.emplace(rk, row);
    created = true;
  }
  ++row->count;
  state_->sites.emplace(std::move(key), row);
  return created;
}

std::vector<RecordEntry> Recorder::entries() const {
  std::lock_guard lock(state_->mutex);
  std::vector<RecordEntry> out;
  out.reserve(state_->rows.size());
  for (const auto& [key, row] : state_->rows) {
    if (row->count > 0) out.push_back(*row);
  }
  return out;  // std::map order is row-key order
}

void Recorder::clear() {
  std::lock_guard lock(state_->mutex);
  state_->sites.clear();
  state_->rows.clear();
  state_->storage.clear();
}

void Recorder::before_fork() { state_->mutex.lock(); }

void Recorder::after_fork_in_parent() { state_->mutex.unlock(); }

void Recorder::after_fork_in_child() {
  for (RecordEntry& row : state_->storage) row.count = 0;
  state_->mutex.unlock();
}

std::vector<RecordEntry> merge_entries(const std::vector<RecordEntry>& existing,
                                       const std::vector<RecordEntry>& added) {
  std::map<RowKey, RecordEntry> merged;
  for (const auto* list : {&existing, &added}) {
    for (const RecordEntry& e : *list) {
      auto [it, inserted] = merged.try_emplace(row_key(e), e);
      if (!inserted) it->second.count += e.count;
    }
  }
  std::vector<RecordEntry> out;
  out.reserve(merged.size());
  for (auto& [key, e] : merged) out.push_back(std::move(e));
  return out;
}

std::string record_json(const RecordHeader& header, const std::vector<RecordEntry>& entries) {
  using nlohmann::ordered_json;
  ordered_json doc;
  doc["format"] = kRecordFormat;
  doc["shim"] = "cpp";
  doc["pid"] = header.pid;
  doc["policy"] = policy_name(header.policy);
  const auto accel = header.hardware.accelerator();
  doc["hardware"] = {{"accelerator", accel ? ordered_json(*accel) : ordered_json(nullptr)},
                     {"mps", header.hardware.mps},
                     {"cuda_device_count", header.hardware.cuda_device_count}};
  ordered_json rows = ordered_json::array();
  std::vector<RecordEntry> sorted = entries;
  std::sort(sorted.begin(), sorted.end(), row_less);
  for (const RecordEntry& e : sorted) {
    rows.push_back({{"api", e.api},
                    {"requested", e.requested},
                    {"used", e.used},
                    {"count", e.count},
                    {"call_site",
                     {{"file", e.call_site.file},
                      {"line", e.call_site.line},
                      {"function", e.call_site.function}}}});
  }
  doc["redirections"] = std::move(rows);
  return doc.dump(1) + "\n";
}

std::optional<std::vector<RecordEntry>> parse_record(std::string_view text) {
  using nlohmann::json;
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || *format != kRecordFormat) return std::nullopt;
  auto list = doc.find("redirections");
  if (list == doc.end() || !list->is_array()) return std::nullopt;
  std::vector<RecordEntry> out;
  for (const json& e : *list) {
    if (!e.is_object()) return std::nullopt;
    RecordEntry entry;
    for (auto [key, field] :
         {std::pair{"api", &entry.api}, std::pair{"requested", &entry.requested},
          std::pair{"used", &entry.used}}) {
      auto it = e.find(key);
      if (it == e.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
        return std::nullopt;
      }
      *field = it->get<std::string>();
    }
    auto count = e.find("count");
    if (count == e.end() || !count->is_number_integer() || count->get<long long>() <= 0) {
      return std::nullopt;
    }
    entry.count = count->get<long long>();
    if (auto site = e.find("call_site"); site != e.end() && site->is_object()) {
      if (auto f = site->find("file"); f != site->end() && f->is_string()) {
        entry.call_site.file = f->get<std::string>();
      }
      if (auto l = site->find("line"); l != site->end() && l->is_number_integer()) {
        entry.call_site.line = l->get<int>();
      }
      if (auto f = site->find("function"); f != site->end() && f->is_string()) {
        entry.call_site.function = f->get<std::string>();
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

void write_record(const fs::path& path, const RecordHeader& header,
                  const std::vector<RecordEntry>& entries,
                  const std::function<void(const std::string&)>& warn) {
  const fs::path target = fs::absolute(path);
  const fs::path directory = target.parent_path();
  fs::create_directories(directory);

  Fd lock;
  const std::string lock_path = target.string() + ".lock";
  lock.fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd < 0) throw_errno("cannot open " + lock_path);
  while (::flock(lock.fd, LOCK_EX) != 0) {
    if (errno != EINTR) throw_errno("cannot lock " + lock_path);
  }

  std::vector<RecordEntry> existing;
  if (std::ifstream in(target, std::ios::binary); in) {
    std::ostringstream text;
    text << in.rdbuf();
    if (auto found = parse_record(text.str())) {
      existing = std::move(*found);
    } else if (warn) {
      warn(target.string() + " is not a " + std::string(kRecordFormat) + " record; replacing it");
    }
  }
  const std::string doc = record_json(header, merge_entries(existing, entries));

  std::string tmp = (directory / (target.filename().string() + ".XXXXXX.tmp")).string();
  Fd out;
  out.fd = ::mkstemps(tmp.data(), 4);
  if (out.fd < 0) throw_errno("cannot create a temporary file beside " + target.string());
  std::size_t done = 0;
  while (done < doc.size()) {
    const ssize_t n = ::write(out.fd, doc.data() + done, doc.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::unlink(tmp.c_str());
      throw std::system_error(saved, std::generic_category(), "cannot write " + tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(out.fd, 0644);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw std::system_error(saved, std::generic_category(), "cannot rename " + tmp);
  }
}

}  // namespace devshim
