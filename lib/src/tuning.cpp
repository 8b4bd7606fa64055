#include "zs/tuning.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <unistd.h>
#include <unordered_map>

#include "files.hpp"
#include "shipped_tuning.hpp"
#include "zs/error.hpp"
#include "zs/fault.hpp"
#include "zs/log.hpp"

namespace zs {
namespace {

// --- kernel specs ----------------------------------------------------------------------------

// The registered kernel specs. Registration happens while the library (or a program) loads,
// lookups afterwards; the lock covers a program that registers from several threads. Never
// destroyed, so that a lookup from another static object's destructor still finds it.
struct spec_registry {
  std::mutex lock;
  std::deque<kernel_spec> specs;            // a deque: the references handed out stay valid
  std::vector<const kernel_spec*> by_name;  // sorted by name
};

spec_registry& registered_specs() {
  static spec_registry* const registry = new spec_registry;
  return *registry;
}

const kernel_spec* find_locked(const spec_registry& r, std::string_view name) noexcept {
  auto const at = std::lower_bound(r.by_name.begin(), r.by_name.end(), name,
                                   [](const kernel_spec* s, std::string_view n) { return s->name < n; });
  return at != r.by_name.end() && (*at)->name == name ? *at : nullptr;
}

// The block sizes and chunk sizes of the kernels every codec shares.
constexpr std::array<unsigned, 5> frame_ops_threads{64, 128, 256, 512, 1024};
constexpr std::array<unsigned, 3> checksum_threads{128, 256, 512};
constexpr std::array<unsigned, 5> checksum_items{1024, 2048, 4096, 8192, 16384};
constexpr std::array<unsigned, 4> gather_threads{128, 256, 512, 1024};

bool contains(std::span<const unsigned> set, unsigned v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

// Whether an entry for `have` may stand in for a launch of `want`: 0 the same, 1 a type of the
// same width and kind, 2 an entry for any type; -1 not at all.
int type_rank(std::optional<value_type> have, std::optional<value_type> want) {
  if (have == want) return 0;
  if (!have) return 2;
  if (!want) return -1;
  bool const same_kind = (is_integer(*have) && is_integer(*want)) || (is_float(*have) && is_float(*want));
  if (same_kind && value_width(*have) == value_width(*want)) return 1;
  return -1;
}

std::string type_name(std::optional<value_type> type) {
  return type ? std::string(to_string(*type)) : std::string("any");
}

void warn(const std::string& message) noexcept {
  log::warn(message);
}

// Why a text is not a tuning table; turned into a zs::error, or into a warning, by the callers.
struct table_problem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void reject(const std::string& why) { throw table_problem(why); }

struct key_hash {
  std::size_t operator()(const tuning_key& k) const noexcept {
    std::size_t h = std::hash<std::string>{}(k.device);
    for (std::size_t const part :
         {static_cast<std::size_t>(k.compute_major), static_cast<std::size_t>(k.compute_minor),
          std::hash<std::string>{}(k.kernel), k.type ? static_cast<std::size_t>(*k.type) : std::size_t{0},
          static_cast<std::size_t>(k.size)}) {
      h = h * 1000003U ^ part;
    }
    return h;
  }
};

// --- JSON --------------------------------------------------------------------------------------

using json = nlohmann::json;

const json& field(const json& object, const char* name, const std::string& where) {
  auto const it = object.find(name);
  if (it == object.end()) reject(where + ": no \"" + name + "\"");
  return *it;
}

std::string string_field(const json& object, const char* name, const std::string& where) {
  json const& v = field(object, name, where);
  if (!v.is_string()) reject(where + ": \"" + name + "\" is not a string");
  return v.get<std::string>();
}

unsigned unsigned_field(const json& object, const char* name, const std::string& where) {
  json const& v = field(object, name, where);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > (1U << 20)) {
    reject(where + ": \"" + name + "\" is not a whole number from 0 to 2^20");
  }
  return static_cast<unsigned>(v.get<std::uint64_t>());
}

double optional_rate(const json& object, const char* name, const std::string& where) {
  auto const it = object.find(name);
  if (it == object.end()) return 0;
  if (!it->is_number() || it->get<double>() < 0) reject(where + ": \"" + name + "\" is not a number >= 0");
  return it->get<double>();
}

std::pair<int, int> parse_capability(const std::string& text, const std::string& where) {
  auto const dot = text.find('.');
  auto const digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 3 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot == std::string::npos || !digits(std::string_view(text).substr(0, dot)) ||
      !digits(std::string_view(text).substr(dot + 1))) {
    reject(where + ": compute_capability \"" + text + "\" is not MAJOR.MINOR");
  }
  return {std::stoi(text.substr(0, dot)), std::stoi(text.substr(dot + 1))};
}

tuning_entry parse_entry(const json& j, std::size_t index) {
  std::string const where = "entry " + std::to_string(index);
  if (!j.is_object()) reject(where + " is not an object");
  tuning_entry e;
  e.key.device = string_field(j, "device", where);
  if (e.key.device.empty()) reject(where + ": empty device name");
  std::tie(e.key.compute_major, e.key.compute_minor) =
      parse_capability(string_field(j, "compute_capability", where), where);
  std::string const kernel = string_field(j, "kernel", where);
  const kernel_spec* spec = find_kernel_spec(kernel);
  if (spec == nullptr) reject(where + ": unknown kernel \"" + kernel + "\" (no registered kernel has that name)");
  e.key.kernel = kernel;
  std::string const type = string_field(j, "type", where);
  if (type != "any") {
    bool known = false;
    for (std::uint8_t v = 1; v <= last_value_type_id; ++v) {
      if (to_string(static_cast<value_type>(v)) == type) {
        e.key.type = static_cast<value_type>(v);
        known = true;
      }
    }
    if (!known) reject(where + ": unknown type \"" + type + "\"");
  }
  std::string const size = string_field(j, "size_class", where);
  auto const cls = parse_size_class(size);
  if (!cls) reject(where + ": unknown size class \"" + size + "\"");
  e.key.size = *cls;
  json const& p = field(j, "params", where);
  if (!p.is_object()) reject(where + ": \"params\" is not an object");
  e.params.threads = unsigned_field(p, "threads", where + " params");
  e.params.waves = unsigned_field(p, "waves", where + " params");
  e.params.items = unsigned_field(p, "items", where + " params");
  std::string const why = check_params(*spec, e.params);
  if (!why.empty()) reject(where + " (" + kernel + "): " + why);
  e.tuned_gbs = optional_rate(j, "tuned_gbs", where);
  e.default_gbs = optional_rate(j, "default_gbs", where);
  return e;
}

tuning_table parse_table(std::string_view text);

// Tables hold a few hundred entries per device; anything this large is not one, and reading it
// whole would only cost memory.
constexpr std::uint64_t max_tuning_file_bytes = std::uint64_t{16} << 20;

// The text of a tuning file; throws zs::error (io_error naming the file) when it is not a
// regular file of at most max_tuning_file_bytes, or cannot be read.
std::string read_text(const std::filesystem::path& path) {
  return detail::read_regular_file(path, "tuning file", max_tuning_file_bytes);
}

// --- the process-wide table --------------------------------------------------------------------

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// Never throws: any failure becomes one warning and an empty contribution.
std::shared_ptr<const tuning_table> load_process_table() noexcept {
  try {
    if (auto const mode = env("ZS_TUNING"); mode && (*mode == "off" || *mode == "0")) {
      return std::make_shared<const tuning_table>();
    }
    tuning_table table = shipped_tuning();
    auto const path = tuning_file_path();
    if (!path) return std::make_shared<const tuning_table>(std::move(table));
    std::error_code ec;
    bool const exists = std::filesystem::exists(*path, ec);
    if (!exists) {
      // The cache file is absent until the user runs `zshuffle tune`: only a file named
      // explicitly is worth a warning.
      if (env("ZS_TUNING_FILE")) {
        warn("ZS_TUNING_FILE names " + path->string() + ", which does not exist; using the shipped tables and defaults");
      }
    } else {
      // Whatever goes wrong with the user's file, the shipped tables stay.
      try {
        fault::point("tuning.user_file");
        table.merge(parse_table(read_text(*path)));
      } catch (const error& e) {  // the file could not be read: the message names it
        warn(e.message() + "; it is ignored, using the shipped tables and defaults");
      } catch (const std::exception& e) {  // not a table (table_problem), or out of memory
        warn("tuning file " + path->string() + " ignored (" + e.what() + "); using the shipped tables and defaults");
      }
    }
    return std::make_shared<const tuning_table>(std::move(table));
  } catch (const std::exception& e) {
    warn(std::string("tuning tables not loaded (") + e.what() + "); using defaults");
  } catch (...) {
    warn("tuning tables not loaded; using defaults");
  }
  try {
    return std::make_shared<const tuning_table>();
  } catch (...) {
    return nullptr;  // out of memory for an empty table: tuning() copes with a null table
  }
}

struct process_table {
  std::mutex mutex;
  std::shared_ptr<const tuning_table> table;
  bool loaded = false;
};

process_table& state() {
  static process_table s;
  return s;
}

}  // namespace

// --- kernels -----------------------------------------------------------------------------------

const kernel_spec& register_kernel(const kernel_spec& spec) {
  std::string const name(spec.name);
  ZS_EXPECTS(!spec.name.empty(), "a kernel spec with a name");
  ZS_EXPECTS(!spec.threads.empty(), "kernel '" + name + "' accepts at least one block size");
  std::string const why = check_params(spec, spec.defaults);
  ZS_EXPECTS(why.empty(), "defaults that kernel '" + name + "' accepts (" + why + ")");
  tune_workload const& tune = spec.tune;
  if (spec.swept) {
    ZS_EXPECTS(!tune.codec.empty(), "a workload for the swept kernel '" + name +
                                        "' (kernel_spec::tune: the codec whose calls zshuffle tune times it in)");
    tune_outputs const& out = tune.compares;
    ZS_EXPECTS(out.frames || out.headers || out.decoded_values || out.decoded_offsets,
               "an output of kernel '" + name + "' for zshuffle tune to compare (kernel_spec::tune.compares)");
    ZS_EXPECTS(tune.calls != tune_calls::encode || (!out.decoded_values && !out.decoded_offsets),
               "kernel '" + name + "' to compare decoded outputs only where its workload decodes");
    ZS_EXPECTS(tune.types == tuned_types::each || is_valid(tune.type),
               "a valid value type for the workload of kernel '" + name + "'");
  } else {
    ZS_EXPECTS(tune.codec.empty(), "no workload for kernel '" + name + "', which is not swept");
  }
  spec_registry& r = registered_specs();
  std::lock_guard const hold(r.lock);
  if (find_locked(r, spec.name) != nullptr) {
    ZS_FAIL(error_code::invalid_argument, "a kernel spec named '" + name + "' is already registered");
  }
  kernel_spec const& stored = r.specs.emplace_back(spec);
  auto const at = std::lower_bound(r.by_name.begin(), r.by_name.end(), stored.name,
                                   [](const kernel_spec* s, std::string_view n) { return s->name < n; });
  r.by_name.insert(at, &stored);
  return stored;
}

const kernel_spec* find_kernel_spec(std::string_view name) noexcept {
  spec_registry& r = registered_specs();
  std::lock_guard const hold(r.lock);
  return find_locked(r, name);
}

const kernel_spec& get_kernel_spec(std::string_view name) {
  if (const kernel_spec* s = find_kernel_spec(name)) return *s;
  std::string names;
  for (const kernel_spec* s : kernel_specs()) names += (names.empty() ? "" : ", ") + std::string(s->name);
  ZS_FAIL(error_code::invalid_argument, "no kernel is registered as '" + std::string(name) + "' (registered: " +
                                            names + ")");
}

std::vector<const kernel_spec*> kernel_specs() {
  spec_registry& r = registered_specs();
  std::lock_guard const hold(r.lock);
  return r.by_name;
}

const kernel_spec& frame_ops_spec = register_kernel({
    .name = "frame_ops",
    .defaults = {128, default_launch_waves, 0},
    .threads = frame_ops_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = false,
    .what = "one thread per frame, segment or chunk: headers, frame checks, chunk plans, copy lists",
});

const kernel_spec& checksum_spec = register_kernel({
    .name = "checksum",
    .defaults = {256, default_launch_waves, 4096},
    .threads = checksum_threads,
    .items = checksum_items,
    .max_waves = max_launch_waves,
    .swept = true,
    // Raw frames of int32 values: the checksums cover every byte of the batch, whatever its type.
    .tune = {.codec = "raw",
             .calls = tune_calls::encode_and_decode,
             .types = tuned_types::any,
             .type = value_type::int32,
             .compares = {.headers = true}},
    .what = "payload checksums on encode and validation; items = 64-bit words per chunk",
});

const kernel_spec& gather_spec = register_kernel({
    .name = "gather",
    .defaults = {256, default_launch_waves, 0},
    .threads = gather_threads,
    .items = {},
    .max_waves = max_launch_waves,
    .swept = false,
    .what = "64-bit gather by index (the shuffle's offset reads)",
});

std::string check_params(const kernel_spec& s, const launch_params& params) {
  std::string why;
  auto const list = [](std::span<const unsigned> set) {
    std::string out;
    for (unsigned v : set) out += (out.empty() ? "" : ", ") + std::to_string(v);
    return out;
  };
  if (!contains(s.threads, params.threads)) {
    why = "threads " + std::to_string(params.threads) + " is not one of " + list(s.threads);
  } else if (s.items.empty() && params.items != 0) {
    why = "items must be 0 for this kernel, not " + std::to_string(params.items);
  } else if (!s.items.empty() && !contains(s.items, params.items)) {
    why = "items " + std::to_string(params.items) + " is not one of " + list(s.items);
  } else if (params.waves > s.max_waves) {
    why = "waves " + std::to_string(params.waves) + " is above " + std::to_string(s.max_waves);
  }
  return why;
}

std::string check_params(std::string_view kernel, const launch_params& params) {
  const kernel_spec* s = find_kernel_spec(kernel);
  if (s == nullptr) return "no kernel is registered as '" + std::string(kernel) + "'";
  return check_params(*s, params);
}

launch_params default_params(const kernel_spec& s, const device_profile& device) {
  launch_params p = s.defaults;
  if (device.max_threads_per_block > 0 && p.threads > static_cast<unsigned>(device.max_threads_per_block)) {
    // The largest block size the kernel is built for that the device runs; the smallest when
    // even that is too large (the launch then reports the device's refusal).
    unsigned best = s.threads.front();
    for (unsigned t : s.threads) {
      if (t <= static_cast<unsigned>(device.max_threads_per_block) && t > best) best = t;
    }
    p.threads = best;
  }
  return p;
}

std::string to_string(const kernel_spec& kernel, const launch_params& params) {
  std::string s = std::to_string(params.threads) + " threads, ";
  s += params.waves == 0 ? std::string("no cap") : std::to_string(params.waves) + " waves";
  if (!kernel.items.empty()) s += ", " + std::to_string(params.items) + " items";
  return s;
}

// --- tuning_table ------------------------------------------------------------------------------

void tuning_table::set(tuning_entry entry) {
  std::string const why = check_params(entry.key.kernel, entry.params);
  ZS_EXPECTS(why.empty(), "params the kernel accepts (" + why + ")");
  ZS_EXPECTS(!entry.key.device.empty(), "a device name");
  auto const it = std::lower_bound(entries_.begin(), entries_.end(), entry.key,
                                   [](const tuning_entry& e, const tuning_key& k) { return e.key < k; });
  if (it != entries_.end() && it->key == entry.key) {
    *it = std::move(entry);
  } else {
    entries_.insert(it, std::move(entry));
  }
}

void tuning_table::merge(const tuning_table& other) {
  if (&other == this) return;
  // Both are sorted by key and valid: one pass, the other table winning on equal keys.
  std::vector<tuning_entry> merged;
  merged.reserve(entries_.size() + other.entries_.size());
  auto mine = entries_.begin();
  for (auto const& theirs : other.entries_) {
    while (mine != entries_.end() && mine->key < theirs.key) merged.push_back(std::move(*mine++));
    if (mine != entries_.end() && mine->key == theirs.key) ++mine;
    merged.push_back(theirs);
  }
  merged.insert(merged.end(), std::make_move_iterator(mine), std::make_move_iterator(entries_.end()));
  entries_ = std::move(merged);
}

const tuning_entry* tuning_table::find(std::string_view device, int compute_major, int compute_minor,
                                       std::string_view kernel, std::optional<value_type> type,
                                       size_class size) const {
  const tuning_entry* best = nullptr;
  std::array<int, 3> best_rank{};
  for (auto const& e : entries_) {
    if (e.key.kernel != kernel || e.key.device != device || e.key.compute_major != compute_major ||
        e.key.compute_minor != compute_minor) {
      continue;
    }
    int const t = type_rank(e.key.type, type);
    if (t < 0) continue;
    int const have = static_cast<int>(e.key.size), want = static_cast<int>(size);
    // Lexicographic: type first, then distance in classes, then the larger class.
    std::array<int, 3> const rank{t, std::abs(have - want), -have};
    if (best == nullptr || rank < best_rank) {
      best = &e;
      best_rank = rank;
    }
  }
  return best;
}

std::string tuning_table::to_json() const {
  json entries = json::array();
  for (auto const& e : entries_) {
    json j;
    j["device"] = e.key.device;
    j["compute_capability"] = std::to_string(e.key.compute_major) + "." + std::to_string(e.key.compute_minor);
    j["kernel"] = e.key.kernel;
    j["type"] = type_name(e.key.type);
    j["size_class"] = std::string(to_string(e.key.size));
    j["params"] = {{"threads", e.params.threads}, {"waves", e.params.waves}, {"items", e.params.items}};
    if (e.tuned_gbs > 0) j["tuned_gbs"] = e.tuned_gbs;
    if (e.default_gbs > 0) j["default_gbs"] = e.default_gbs;
    entries.push_back(std::move(j));
  }
  json doc;
  doc["schema"] = std::string(schema);
  doc["version"] = version;
  doc["entries"] = std::move(entries);
  return doc.dump(2) + "\n";
}

namespace {

// The entries of a table as the parser meets them. Each entry is read and dropped as soon as it
// is complete, so the document is never held whole (a table's DOM of maps takes ten times its
// text, and freeing it as long again); keys are checked in one pass through a hash map.
class entry_reader {
 public:
  // The parser's callback: true keeps the value in the document, false drops it.
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      top_key_ = parsed.get<std::string>();
    } else if (depth == 1 && event == json::parse_event_t::array_start && top_key_ == "entries") {
      *this = entry_reader();  // a repeated "entries" key: the last one counts, as in a document
      in_entries_ = true;
    } else if (depth == 1 && event == json::parse_event_t::array_end) {
      in_entries_ = false;
    } else if (depth == 2 && in_entries_ && event != json::parse_event_t::object_start &&
               event != json::parse_event_t::array_start && event != json::parse_event_t::key) {
      read(parsed);
      return false;
    }
    return true;
  }

  // The table, or the first problem of its entries in document order.
  tuning_table finish() {
    if (!problem_.empty()) reject(problem_);
    std::sort(entries_.begin(), entries_.end(), [](const tuning_entry& a, const tuning_entry& b) { return a.key < b.key; });
    tuning_table table;
    for (auto& e : entries_) table.set(std::move(e));  // in key order, each lands at the end
    return table;
  }

 private:
  void read(const json& element) {
    std::size_t const i = count_++;
    if (!problem_.empty()) return;
    try {
      tuning_entry e = parse_entry(element, i);
      auto const [at, fresh] = first_of_.emplace(e.key, i);
      if (!fresh) {
        problem_ = "entry " + std::to_string(i) + " repeats the key of entry " + std::to_string(at->second);
        return;
      }
      entries_.push_back(std::move(e));
    } catch (const table_problem& p) {
      problem_ = p.what();
    }
  }

  std::string top_key_;
  bool in_entries_ = false;
  std::size_t count_ = 0;
  std::vector<tuning_entry> entries_;
  std::unordered_map<tuning_key, std::size_t, key_hash> first_of_;
  std::string problem_;
};

tuning_table parse_table(std::string_view text) {
  entry_reader entries;
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), std::ref(entries));
  } catch (const json::exception& e) {
    // Drop the library's "[json.exception.parse_error.101] " tag: the position is what helps.
    std::string what = e.what();
    if (auto const tag = what.find("] "); what.rfind("[json.exception", 0) == 0 && tag != std::string::npos) {
      what = what.substr(tag + 2);
    }
    reject("not JSON: " + what);
  }
  if (!doc.is_object()) reject("the document is not a JSON object");
  auto const s = doc.find("schema");
  if (s == doc.end() || !s->is_string() || s->get<std::string>() != tuning_table::schema) {
    reject("\"schema\" is not \"" + std::string(tuning_table::schema) + "\"");
  }
  auto const v = doc.find("version");
  if (v == doc.end() || !v->is_number_integer()) reject("no integer \"version\"");
  if (v->get<std::int64_t>() != tuning_table::version) {
    reject("version " + std::to_string(v->get<std::int64_t>()) + ", this zshuffle reads version " +
           std::to_string(tuning_table::version));
  }
  auto const list = doc.find("entries");
  if (list == doc.end() || !list->is_array()) reject("no \"entries\" array");
  return entries.finish();
}

}  // namespace

tuning_table tuning_table::from_json(std::string_view text) {
  try {
    return parse_table(text);
  } catch (const table_problem& e) {
    ZS_FAIL(error_code::invalid_argument, std::string("not a valid tuning table: ") + e.what());
  }
}

void tuning_table::save(const std::filesystem::path& path) const {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) ZS_FAIL(error_code::io_error, "cannot create " + path.parent_path().string() + ": " + ec.message());
  }
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << to_json();
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      ZS_FAIL(error_code::io_error, "cannot write " + tmp.string());
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    ZS_FAIL(error_code::io_error, "cannot move " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
}

tuning_table tuning_table::load(const std::filesystem::path& path) {
  std::string const text = read_text(path);
  try {
    return parse_table(text);
  } catch (const table_problem& e) {
    ZS_FAIL(error_code::invalid_argument,
            "tuning file " + path.string() + " is not a valid tuning table: " + e.what());
  }
}

// --- process-wide ------------------------------------------------------------------------------

std::optional<std::filesystem::path> tuning_file_path() {
  if (auto const file = env("ZS_TUNING_FILE")) return std::filesystem::path(*file);
  if (auto const cache = env("XDG_CACHE_HOME")) return std::filesystem::path(*cache) / "zshuffle" / "tuning.json";
  if (auto const home = env("HOME")) return std::filesystem::path(*home) / ".cache" / "zshuffle" / "tuning.json";
  return std::nullopt;
}

const tuning_table& shipped_tuning() {
  static const tuning_table table = [] {
    tuning_table merged;
    for (auto const& t : detail::shipped_table_texts()) {
      try {
        merged.merge(parse_table(t.json));
      } catch (const table_problem& e) {
        // Tests parse every shipped table; this guards a broken build, not user input.
        warn("shipped tuning table " + std::string(t.file) + " ignored: " + e.what());
      }
    }
    return merged;
  }();
  return table;
}

std::shared_ptr<const tuning_table> tuning() {
  process_table& s = state();
  std::lock_guard<std::mutex> const lock(s.mutex);
  if (!s.loaded) {
    s.table = load_process_table();
    s.loaded = true;
  }
  if (!s.table) s.table = std::make_shared<const tuning_table>();
  return s.table;
}

void set_tuning(tuning_table table) {
  auto next = std::make_shared<const tuning_table>(std::move(table));
  process_table& s = state();
  std::lock_guard<std::mutex> const lock(s.mutex);
  s.table = std::move(next);
  s.loaded = true;
}

void reload_tuning() {
  auto next = load_process_table();
  process_table& s = state();
  std::lock_guard<std::mutex> const lock(s.mutex);
  s.table = std::move(next);
  s.loaded = true;
}

// --- choosing ----------------------------------------------------------------------------------

launch_choice choose_launch(const tuning_table& table, const device_profile& device, const kernel_spec& kernel,
                            std::optional<value_type> type, std::uint64_t batch_bytes) {
  launch_choice c;
  c.kernel = kernel.name;
  c.type = type;
  c.size = size_class_of(batch_bytes);
  c.batch_bytes = batch_bytes;
  const tuning_entry* e =
      table.find(device.name, device.compute_major, device.compute_minor, kernel.name, type, c.size);
  // An entry for a block size this device cannot run (a table edited by hand) is passed over.
  if (e != nullptr &&
      (device.max_threads_per_block <= 0 || e->params.threads <= static_cast<unsigned>(device.max_threads_per_block))) {
    c.params = e->params;
    c.from_table = true;
  } else {
    c.params = default_params(kernel, device);
  }
  return c;
}

launch_choice choose_launch(const kernel_spec& kernel, std::optional<value_type> type, std::uint64_t batch_bytes) {
  auto const table = tuning();
  return choose_launch(*table, current_device_profile(), kernel, type, batch_bytes);
}

}  // namespace zs
