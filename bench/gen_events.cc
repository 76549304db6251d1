// gen_events: writes seeded, realistic NDJSON events to stdout for benchmarks and tests.
// Keys are skewed the way real traffic is: user_id follows a Zipf law (rejection-inversion
// sampling, O(1) memory) plus one celebrity key on a fixed share of lines. Everything random
// comes from our own xoshiro256** so a seed gives the same bytes on every platform and library;
// a run that stops earlier writes a prefix of a run that stops later.

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

// ---------------------------------------------------------------------------------------------
// Randomness: splitmix64 expands the seed, xoshiro256** generates (Blackman & Vigna).

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A stateless 64-bit mix, for attributes that must be a pure function of the user.
std::uint64_t mix64(std::uint64_t x) {
  std::uint64_t state = x;
  return splitmix64(state);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) word = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n) by multiply-shift; the bias (n / 2^32) is irrelevant for test data.
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32);
  }

  bool chance(double p) { return uniform() < p; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> state_{};
};

// ---------------------------------------------------------------------------------------------
// Zipf over ranks 1..n with P(k) proportional to k^-s, by rejection-inversion (Hörmann and
// Derflinger, 1996): invert the integral H of the hat x^-s around each integer, accept when
// the point falls inside the bar of height k^-s. Acceptance is above 90% for any s and n.

class ZipfSampler {
 public:
  ZipfSampler(std::uint64_t n, double s)
      : n_(n),
        s_(s),
        h_integral_x1_(h_integral(1.5) - 1.0),
        h_integral_n_(h_integral(static_cast<double>(n) + 0.5)),
        squeeze_(2.0 - h_integral_inverse(h_integral(2.5) - h(2.0))) {}

  std::uint64_t sample(Rng& rng) const {
    for (;;) {
      const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      auto k = static_cast<std::uint64_t>(std::max(1.0, x + 0.5));
      k = std::min(k, n_);
      const double kd = static_cast<double>(k);
      if (kd - x <= squeeze_ || u >= h_integral(kd + 0.5) - h(kd)) return k;
    }
  }

 private:
  // (exp(t) - 1) / t and log(1 + t) / t, stable near t = 0 (that is, s near 1).
  static double expm1_over(double t) { return std::abs(t) > 1e-8 ? std::expm1(t) / t : 1.0 + t / 2; }
  static double log1p_over(double t) { return std::abs(t) > 1e-8 ? std::log1p(t) / t : 1.0 - t / 2; }

  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  // H(x) = (x^(1-s) - 1) / (1 - s), an antiderivative of x^-s with H(1) = 0.
  double h_integral(double x) const {
    const double log_x = std::log(x);
    return expm1_over((1.0 - s_) * log_x) * log_x;
  }
  double h_integral_inverse(double y) const {
    return std::exp(log1p_over((1.0 - s_) * y) * y);
  }

  std::uint64_t n_;
  double s_;
  double h_integral_x1_;
  double h_integral_n_;
  double squeeze_;
};

// ---------------------------------------------------------------------------------------------
// Output: lines are appended to a large buffer that is written with write(2) when full.

class LineBuffer {
 public:
  static constexpr std::size_t kFlushAt = 1 << 20;
  static constexpr std::size_t kMaxLine = 4096;  // far above the longest line we make

  LineBuffer() : data_(kFlushAt + kMaxLine) { cursor_ = data_.data(); }

  void put(std::string_view text) {
    std::memcpy(cursor_, text.data(), text.size());
    cursor_ += text.size();
  }
  void put(char c) { *cursor_++ = c; }
  void put_uint(std::uint64_t value) {
    cursor_ = std::to_chars(cursor_, cursor_ + 24, value).ptr;
  }
  // Exactly `width` digits, zero-padded (value must fit).
  void put_padded(std::uint32_t value, int width) {
    for (int i = width - 1; i >= 0; --i) {
      cursor_[i] = static_cast<char>('0' + value % 10);
      value /= 10;
    }
    cursor_ += width;
  }
  void put_hex(std::uint64_t value, int digits) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = digits - 1; i >= 0; --i) {
      cursor_[i] = kHex[value & 15];
      value >>= 4;
    }
    cursor_ += digits;
  }

  char* line_start() const { return cursor_; }
  std::size_t pending() const { return static_cast<std::size_t>(cursor_ - data_.data()); }

  // Returns false when stdout is closed (a reader like `head` went away).
  bool flush() {
    const char* from = data_.data();
    while (from < cursor_) {
      const ssize_t written = ::write(STDOUT_FILENO, from, static_cast<std::size_t>(cursor_ - from));
      if (written < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) return false;
        std::perror("gen_events: write");
        std::exit(1);
      }
      from += written;
    }
    cursor_ = data_.data();
    return true;
  }

 private:
  std::vector<char> data_;
  char* cursor_;
};

// ---------------------------------------------------------------------------------------------
// Timestamps: UTC milliseconds rendered as 2026-11-29T08:00:00.123Z; the date part is cached.

class Clock {
 public:
  explicit Clock(std::int64_t start_ms) : now_ms_(start_ms) {}

  void advance(std::uint32_t ms) { now_ms_ += ms; }

  void put(LineBuffer& out) {
    const std::int64_t day = now_ms_ / kMsPerDay;
    if (day != cached_day_) cache_date(day);
    out.put(std::string_view(date_.data(), date_.size()));
    auto ms = static_cast<std::uint32_t>(now_ms_ % kMsPerDay);
    out.put_padded(ms / 3'600'000, 2);
    out.put(':');
    out.put_padded(ms / 60'000 % 60, 2);
    out.put(':');
    out.put_padded(ms / 1000 % 60, 2);
    out.put('.');
    out.put_padded(ms % 1000, 3);
    out.put('Z');
  }

 private:
  static constexpr std::int64_t kMsPerDay = 86'400'000;

  // Days since 1970-01-01 to a proleptic Gregorian date, via 400-year eras starting in March.
  void cache_date(std::int64_t day) {
    cached_day_ = day;
    const std::int64_t z = day + 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t day_of_era = z - era * 146097;
    const std::int64_t year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    const std::int64_t day_of_year =
        day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const std::int64_t month_index = (5 * day_of_year + 2) / 153;  // 0 = March
    const std::int64_t day_of_month = day_of_year - (153 * month_index + 2) / 5 + 1;
    const std::int64_t month = month_index < 10 ? month_index + 3 : month_index - 9;
    const std::int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
    const auto put_digits = [this](std::size_t at, std::int64_t value, int width) {
      for (int i = width - 1; i >= 0; --i, value /= 10)
        date_[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
    };
    put_digits(0, year, 4);
    date_[4] = '-';
    put_digits(5, month, 2);
    date_[7] = '-';
    put_digits(8, day_of_month, 2);
    date_[10] = 'T';
  }

  std::int64_t now_ms_;
  std::int64_t cached_day_ = -1;
  std::array<char, 11> date_{};  // "YYYY-MM-DDT"
};

// ---------------------------------------------------------------------------------------------
// Vocabulary. Weights are per mille; each table sums to 1000.

struct Weighted {
  std::string_view text;
  std::uint32_t per_mille;
};

constexpr std::array kEvents = {
    Weighted{"page_view", 400}, Weighted{"click", 200},  Weighted{"add_to_cart", 120},
    Weighted{"purchase", 80},   Weighted{"search", 80},  Weighted{"login", 60},
    Weighted{"logout", 30},     Weighted{"error", 20},   Weighted{"refund", 10},
};

constexpr std::array kTiers = {
    Weighted{"free", 600}, Weighted{"silver", 250}, Weighted{"gold", 120},
    Weighted{"platinum", 30},
};

constexpr std::array<std::string_view, 7> kRegions = {
    "us-east", "us-west", "eu-west", "eu-central", "ap-south", "ap-northeast", "sa-east"};

constexpr std::array<std::string_view, 10> kTags = {
    "mobile", "web", "promo", "returning", "new", "beta", "vip", "email", "push", "ab_test_b"};

constexpr std::array<std::string_view, 6> kPages = {
    "/", "/products/", "/category/", "/cart", "/checkout", "/account/orders"};

constexpr std::array<std::string_view, 5> kOs = {"ios", "android", "windows", "macos", "linux"};

// Already JSON-escaped. The rare ones carry \" and \u00e9 so parsers meet escapes.
constexpr std::array<std::string_view, 16> kQueries = {
    "running shoes",     "usb-c cable",        "coffee beans",      "winter jacket",
    "wireless earbuds",  "yoga mat",           "desk lamp",         "gift card",
    "phone case",        "backpack",           "water bottle",      "board games",
    "sunglasses",        "red \\\"summer\\\" dress", "caf\\u00e9 au lait", "notebook"};

constexpr std::array<std::string_view, 4> kErrors = {
    "timeout", "payment declined", "upstream 503", "invalid \\\"coupon\\\" code"};

template <std::size_t N>
std::string_view pick_weighted(const std::array<Weighted, N>& table, std::uint32_t roll) {
  for (const auto& entry : table) {
    if (roll < entry.per_mille) return entry.text;
    roll -= entry.per_mille;
  }
  return table.back().text;
}

// ---------------------------------------------------------------------------------------------
// Options.

struct Options {
  std::optional<std::uint64_t> bytes;
  std::optional<std::uint64_t> events;
  std::uint64_t seed = 1;
  std::uint64_t users = 1'000'000;
  double zipf_s = 1.1;
  double hot_share = 0.05;
};

constexpr std::string_view kUsage =
    "usage: gen_events (--bytes N | --events N) [--seed S] [--users U]\n"
    "                  [--zipf-s S] [--hot-share P]\n"
    "Writes NDJSON events to stdout; the same seed always gives the same bytes, and a\n"
    "shorter run is a prefix of a longer one.\n"
    "  --bytes N      stop after the line that reaches N bytes (suffixes K, M, G, KiB, MiB, GiB)\n"
    "  --events N     stop after N lines (with --bytes too: whichever comes first)\n"
    "  --seed S       random seed (default 1)\n"
    "  --users U      distinct Zipf-distributed user ids (default 1000000)\n"
    "  --zipf-s S     Zipf exponent (default 1.1)\n"
    "  --hot-share P  share of lines with user_id \"user_celebrity\" (default 0.05)\n";

[[noreturn]] void usage_error(std::string_view message) {
  std::fprintf(stderr, "gen_events: %.*s (see gen_events --help)\n",
               static_cast<int>(message.size()), message.data());
  std::exit(2);
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::uint64_t multiplier = 1;
  if (suffix.empty()) multiplier = 1;
  else if (suffix == "K" || suffix == "KiB") multiplier = 1ULL << 10;
  else if (suffix == "M" || suffix == "MiB") multiplier = 1ULL << 20;
  else if (suffix == "G" || suffix == "GiB") multiplier = 1ULL << 30;
  else return std::nullopt;
  if (value > UINT64_MAX / multiplier) return std::nullopt;
  return value * multiplier;
}

std::optional<double> parse_double(const char* text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0') return std::nullopt;
  return value;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fwrite(kUsage.data(), 1, kUsage.size(), stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
    const char* value = argv[++i];
    const auto need_size = [&](std::string_view what) {
      const auto parsed = parse_size(value);
      if (!parsed) usage_error("bad " + std::string(what) + ": " + value);
      return *parsed;
    };
    const auto need_double = [&](std::string_view what) {
      const auto parsed = parse_double(value);
      if (!parsed) usage_error("bad " + std::string(what) + ": " + value);
      return *parsed;
    };
    if (flag == "--bytes") options.bytes = need_size("--bytes");
    else if (flag == "--events") options.events = need_size("--events");
    else if (flag == "--seed") options.seed = need_size("--seed");
    else if (flag == "--users") options.users = need_size("--users");
    else if (flag == "--zipf-s") options.zipf_s = need_double("--zipf-s");
    else if (flag == "--hot-share") options.hot_share = need_double("--hot-share");
    else usage_error("unknown option " + std::string(flag));
  }
  if (!options.bytes && !options.events) usage_error("give --bytes or --events");
  if (options.users < 1 || options.users > 0xffffffffULL)
    usage_error("--users must be in 1..4294967295");
  if (!(options.zipf_s > 0.0 && options.zipf_s <= 10.0)) usage_error("--zipf-s must be in (0, 10]");
  if (!(options.hot_share >= 0.0 && options.hot_share <= 1.0))
    usage_error("--hot-share must be in [0, 1]");
  return options;
}

// ---------------------------------------------------------------------------------------------
// One event.

class EventWriter {
 public:
  explicit EventWriter(const Options& options)
      : options_(options),
        rng_(options.seed),
        zipf_(options.users, options.zipf_s),
        clock_(kStartMs),
        user_stride_(coprime_stride(options.users)),
        user_offset_(mix64(options.seed) % options.users) {}

  // Appends one line and returns its length in bytes.
  std::size_t write(LineBuffer& out) {
    const char* start = out.line_start();
    clock_.advance(rng_.below(40));
    const std::string_view event = pick_weighted(kEvents, rng_.below(1000));

    out.put("{\"ts\":\"");
    clock_.put(out);
    out.put("\",\"event\":\"");
    out.put(event);
    out.put("\",\"user_id\":\"");
    const bool celebrity = rng_.chance(options_.hot_share);
    // Rank 1 is the most active user; a stride permutation spreads ranks over the id space.
    const std::uint64_t user =
        celebrity ? 0 : ((zipf_.sample(rng_) - 1) * user_stride_ + user_offset_) % options_.users;
    if (celebrity) {
      out.put("user_celebrity");
    } else {
      out.put("user_");
      out.put_uint(user);
    }
    put_account(out, celebrity, user);
    put_payload(out, event);
    put_tags(out);
    out.put(",\"session\":\"");
    out.put_hex(rng_.next(), 12);
    out.put("\",\"os\":\"");
    out.put(kOs[rng_.below(kOs.size())]);
    out.put("\",\"ok\":");
    out.put(event == "error" ? "false" : "true");
    out.put("}\n");
    return static_cast<std::size_t>(out.line_start() - start);
  }

 private:
  static constexpr std::int64_t kStartMs = 1'795'939'200'000;  // 2026-11-29T08:00:00.000Z

  static std::uint64_t coprime_stride(std::uint64_t users) {
    std::uint64_t stride = 2'654'435'761ULL % users;  // Knuth's multiplicative constant
    if (stride == 0) stride = 1;
    while (std::gcd(stride, users) != 1) ++stride;
    return stride;
  }

  // The account is a pure function of the user, as it would be in a real system.
  void put_account(LineBuffer& out, bool celebrity, std::uint64_t user) {
    const std::uint64_t traits = celebrity ? 0 : mix64(user ^ 0x5eed);
    out.put("\",\"account\":{\"id\":\"acc_");
    out.put_uint(celebrity ? 1 : 100 + traits % 400'000);
    out.put("\",\"region\":\"");
    out.put(kRegions[(traits >> 20) % kRegions.size()]);
    out.put("\",\"tier\":\"");
    out.put(celebrity ? std::string_view("platinum") : pick_weighted(kTiers, (traits >> 40) % 1000));
    out.put("\"}");
  }

  void put_payload(LineBuffer& out, std::string_view event) {
    if (event == "purchase" || event == "add_to_cart" || event == "refund") {
      out.put(",\"amount\":");
      out.put_uint(rng_.below(500));
      out.put('.');
      out.put_padded(rng_.below(100), 2);
      out.put(",\"currency\":\"");
      out.put(rng_.chance(0.7) ? "USD" : "EUR");
      out.put("\",\"items\":[");
      const std::uint32_t items = 1 + rng_.below(2) + (rng_.chance(0.1) ? 1 : 0);
      for (std::uint32_t i = 0; i < items; ++i) {
        if (i) out.put(',');
        out.put("{\"sku\":\"SKU-");
        out.put_uint(1 + rng_.below(50'000));
        out.put("\",\"qty\":");
        out.put_uint(1 + rng_.below(4));
        out.put('}');
      }
      out.put(']');
    } else if (event == "page_view" || event == "click") {
      const std::string_view page = kPages[rng_.below(kPages.size())];
      out.put(",\"page\":\"");
      out.put(page);
      if (page.back() == '/' && page.size() > 1) out.put_uint(1 + rng_.below(100'000));
      out.put('"');
      if (rng_.chance(0.2)) {
        out.put(",\"referrer\":\"");
        out.put(rng_.chance(0.5) ? std::string_view("https://www.example.com/")
                                 : std::string_view("https://search.example.net/?q=deals"));
        out.put('"');
      }
      if (event == "page_view") {
        out.put(",\"duration_ms\":");
        out.put_uint(rng_.below(30'000));
      }
    } else if (event == "search") {
      out.put(",\"query\":\"");
      out.put(kQueries[rng_.below(kQueries.size())]);
      out.put("\",\"results\":");
      out.put_uint(rng_.below(500));
    } else if (event == "error") {
      out.put(",\"error\":{\"code\":");
      out.put_uint(400 + rng_.below(200));
      out.put(",\"message\":\"");
      out.put(kErrors[rng_.below(kErrors.size())]);
      out.put("\"}");
    } else {  // login, logout
      out.put(",\"method\":\"");
      out.put(rng_.chance(0.8) ? "password" : "sso");
      out.put("\",\"ip\":\"10.");
      out.put_uint(rng_.below(256));
      out.put('.');
      out.put_uint(rng_.below(256));
      out.put('.');
      out.put_uint(rng_.below(256));
      out.put('"');
    }
  }

  void put_tags(LineBuffer& out) {
    out.put(",\"tags\":[");
    // Up to three distinct tags: a random start and a stride that is coprime to 10.
    const std::uint32_t count = rng_.below(3) + (rng_.chance(0.1) ? 1 : 0);
    const std::uint32_t first = rng_.below(kTags.size());
    const std::uint32_t stride = rng_.chance(0.5) ? 3 : 7;
    for (std::uint32_t i = 0; i < count; ++i) {
      if (i) out.put(',');
      out.put('"');
      out.put(kTags[(first + i * stride) % kTags.size()]);
      out.put('"');
    }
    out.put(']');
  }

  const Options& options_;
  Rng rng_;
  ZipfSampler zipf_;
  Clock clock_;
  std::uint64_t user_stride_;
  std::uint64_t user_offset_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout ends the run quietly, via EPIPE

  const std::uint64_t max_bytes = options.bytes.value_or(UINT64_MAX);
  const std::uint64_t max_events = options.events.value_or(UINT64_MAX);
  LineBuffer out;
  EventWriter writer(options);
  std::uint64_t bytes = 0;
  for (std::uint64_t events = 0; events < max_events && bytes < max_bytes; ++events) {
    bytes += writer.write(out);
    if (out.pending() >= LineBuffer::kFlushAt && !out.flush()) return 0;
  }
  out.flush();
  return 0;
}
