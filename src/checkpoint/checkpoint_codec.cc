#include "checkpoint/checkpoint_codec.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "checkpoint/field_reader.h"
#include "util/files.h"
#include "util/json_text.h"

namespace keyshard {
namespace {

namespace dom = simdjson::dom;

constexpr std::string_view kChecksumMember = "  \"checksum\": \"";
constexpr std::string_view kFormat = "keyshard-checkpoint";

void append_array(std::string& out, const std::vector<uint64_t>& values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += ']';
}

void append_output(std::string& out, const OutputState& output) {
  out += '{';
  append_json_bytes_member(out, "file", output.file);
  fmt::format_to(std::back_inserter(out),
                 ",\"size\":{},\"lines\":{},\"chain\":\"{:016x}\",\"digest\":\"{:016x}\"}}",
                 output.size, output.lines, output.chain, output.digest);
}

// The run's counters, as members of an object being built ("counters" and "run_base").
void append_counters(std::string& out, const RunStats& s) {
  fmt::format_to(std::back_inserter(out),
                 "\"lines_read\":{},\"bytes_read\":{},\"dead_lettered\":{},\"skipped\":{},"
                 "\"missing_key_routed\":{},\"bad_by_reason\":",
                 s.lines_read, s.bytes_read, s.dead_lettered, s.skipped, s.missing_key_routed);
  append_array(out, std::vector<uint64_t>(s.bad_by_reason.begin(), s.bad_by_reason.end()));
  fmt::format_to(std::back_inserter(out), ",\"invalid_objects\":{}", s.invalid_objects);
  out += ",\"salted_events\":";
  append_array(out, s.salted_events);
}

// The members append_counters() writes, read into `s`.
void read_counters(FieldReader& r, const dom::object& from, RunStats& s) {
  s.lines_read = r.number(from, "lines_read");
  s.bytes_read = r.number(from, "bytes_read");
  s.dead_lettered = r.number(from, "dead_lettered");
  s.skipped = r.number(from, "skipped");
  s.missing_key_routed = r.number(from, "missing_key_routed");
  const std::vector<uint64_t> bad = r.numbers(from, "bad_by_reason");
  if (r.ok() && bad.size() != s.bad_by_reason.size()) {
    r.fail("\"bad_by_reason\" has the wrong length");
  }
  if (r.ok()) std::copy(bad.begin(), bad.end(), s.bad_by_reason.begin());
  // (Not in the checkpoints of earlier versions.)
  if (r.ok() && r.has(from, "invalid_objects")) {
    s.invalid_objects = r.number(from, "invalid_objects");
  }
  s.salted_events = r.numbers(from, "salted_events");
}

}  // namespace

std::string encode_checkpoint(const Checkpoint& c) {
  std::string out;
  auto it = std::back_inserter(out);
  const RunStats& s = c.stats;
  fmt::format_to(it,
                 "{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"keyshard_version\": \"{}\",\n"
                 "  \"complete\": {},\n  \"incremental\": {},\n  \"exec\": {},\n"
                 "  \"exec_settled\": {},\n",
                 kFormat, c.version, KEYSHARD_VERSION, c.complete, c.incremental, c.exec,
                 c.exec_settled);
  out += "  ";
  append_json_bytes_member(out, "working_directory", c.working_directory, ": ");
  if (c.inputs_seen_ns != 0) fmt::format_to(it, ",\n  \"inputs_seen_ns\": {}", c.inputs_seen_ns);
  out += ",\n  \"options\": " + c.options + ",\n";
  fmt::format_to(it, "  \"current\": {},\n  \"carried\": {},\n  \"inputs\": [", c.current,
                 c.carried);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputPosition& in = c.inputs[i];
    out += i == 0 ? "\n    {" : ",\n    {";
    append_json_bytes_member(out, "path", in.path);
    fmt::format_to(it,
                   ",\"device\":{},\"inode\":{},\"size\":{},\"compressed\":{},\"offset\":{},"
                   "\"lines\":{},\"head_hash\":\"{:016x}\",\"tail_hash\":\"{:016x}\"}}",
                   in.device, in.inode, in.size, in.compressed, in.offset, in.lines, in.head_hash,
                   in.tail_hash);
  }
  out += c.inputs.empty() ? "],\n" : "\n  ],\n";
  out += "  \"counters\": {";
  append_counters(out, s);
  out += "},\n  \"partition_events\": ";
  append_array(out, s.partition_events);
  out += ",\n  \"partition_bytes\": ";
  append_array(out, s.partition_bytes);
  if (c.run_base) {
    const RunStats& b = *c.run_base;
    out += ",\n  \"run_base\": {";
    append_counters(out, b);
    out += ",\"partition_events\":";
    append_array(out, b.partition_events);
    out += ",\"partition_bytes\":";
    append_array(out, b.partition_bytes);
    std::vector<uint64_t> hot_key_events;
    for (const HotKeyDecision& decision : b.hot_key_decisions) {
      hot_key_events.push_back(decision.events);
    }
    out += ",\"hot_key_events\":";
    append_array(out, hot_key_events);
    out += "}";
  }
  out += ",\n  \"outputs\": [";
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    append_output(out, c.outputs[i]);
  }
  out += c.outputs.empty() ? "],\n" : "\n  ],\n";
  out += "  \"dead_letter\": ";
  if (c.dead_letter) {
    append_output(out, *c.dead_letter);
  } else {
    out += "null";
  }
  out += ",\n  \"salt\": {\"dealt\":";
  append_array(out, c.salt.dealt);
  out += ",\"decisions\":[";
  for (size_t i = 0; i < c.salt.decisions.size(); ++i) {
    const HotKeyDecision& d = c.salt.decisions[i];
    out += i == 0 ? "{" : ",{";
    append_json_bytes_member(out, "key", d.key);
    fmt::format_to(it, ",\"input\":{},\"offset\":{},\"sub_keys\":{},\"events\":{},\"dealt\":{}}}",
                   d.input, d.offset, d.sub_keys, d.events,
                   i < c.salt.automatic_dealt.size() ? c.salt.automatic_dealt[i] : 0);
  }
  fmt::format_to(it, "],\"shares_total\":{},\"shares\":[", c.salt.shares_total);
  for (size_t i = 0; i < c.salt.shares.size(); ++i) {
    fmt::format_to(it, "{}[\"{:016x}\",{}]", i == 0 ? "" : ",", c.salt.shares[i].first,
                   c.salt.shares[i].second);
  }
  out += "]},\n";
  fmt::format_to(it, "  \"heavy_hitters\": {{\"total\":{},\"keys\":[", s.heavy_hitters.total());
  const std::vector<HeavyHitters::Counter> counters = s.heavy_hitters.counters();
  for (size_t i = 0; i < counters.size(); ++i) {
    const HeavyHitters::Counter& counter = counters[i];
    fmt::format_to(it, "{}{{\"hash\":\"{:016x}\",\"count\":{},\"length\":{},",
                   i == 0 ? "\n    " : ",\n    ", counter.hash, counter.count, counter.length);
    append_json_bytes_member(out, "key", counter.key);
    out += '}';
  }
  out += counters.empty() ? "]},\n" : "\n  ]},\n";
  const uint64_t checksum = XXH3_64bits(out.data(), out.size());
  fmt::format_to(it, "{}{:016x}\"\n}}\n", kChecksumMember, checksum);
  return out;
}

Status decode_checkpoint(std::string_view text, const std::string& name, Checkpoint& c) {
  c = Checkpoint();
  FieldReader r(name);
  // The checksum first: it covers every byte before its own member.
  const size_t at = text.rfind(kChecksumMember);
  if (at == std::string_view::npos || text.size() < at + kChecksumMember.size() + 20 ||
      text.substr(at + kChecksumMember.size() + 16) != "\"\n}\n") {
    r.fail(text.empty() ? "empty file"
           : at == std::string_view::npos
               ? "no checksum: cut short, or not a checkpoint"
               : "it does not end with its checksum: cut short, or written to after it");
    return r.status();
  }
  uint64_t recorded = 0;
  const char* digits = text.data() + at + kChecksumMember.size();
  auto [end, error] = std::from_chars(digits, digits + 16, recorded, 16);
  if (error != std::errc() || end != digits + 16 || XXH3_64bits(text.data(), at) != recorded) {
    r.fail("checksum mismatch");
    return r.status();
  }

  dom::parser parser;
  dom::element root;
  if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS) {
    r.fail("not valid JSON");
    return r.status();
  }
  const dom::object top = r.object(root, "checkpoint");
  if (!r.ok()) return r.status();
  if (r.text(top, "format") != kFormat) r.fail("not a keyshard checkpoint");
  const uint64_t version = r.number(top, "version");
  if (r.ok() && version != kCheckpointVersion) {
    return Status::error(fmt::format("checkpoint format version {} is not the version {} this "
                                     "keyshard ({}) reads; finish it with the keyshard that "
                                     "wrote it ({}), or start over with --force",
                                     version, kCheckpointVersion, KEYSHARD_VERSION,
                                     r.text(top, "keyshard_version")),
                         name);
  }
  c.version = kCheckpointVersion;
  c.complete = r.boolean(top, "complete");
  c.incremental = r.boolean(top, "incremental");
  c.exec = r.boolean(top, "exec");
  // Optional: without it (an older checkpoint), the children may have stopped mid-line.
  c.exec_settled = r.ok() && r.has(top, "exec_settled") && r.boolean(top, "exec_settled");
  // Optional: without it (an older checkpoint), resume stays where it is started.
  if (r.ok() && (r.has(top, "working_directory") || r.has(top, "working_directory_base64"))) {
    c.working_directory = r.bytes(top, "working_directory");
  }
  // Optional: without it (an older checkpoint), the checkpoint's own time stands in for it.
  if (r.ok() && r.has(top, "inputs_seen_ns")) {
    const uint64_t seen = r.number(top, "inputs_seen_ns");
    c.inputs_seen_ns = static_cast<int64_t>(
        std::min<uint64_t>(seen, std::numeric_limits<int64_t>::max()));
  }
  if (r.ok()) {
    const dom::object options = r.object(r.member(top, "options"), "options");
    if (r.ok()) c.options = simdjson::minify(options);
  }
  const uint64_t current = r.number(top, "current");
  const dom::array inputs = r.ok() ? r.array(r.member(top, "inputs"), "inputs") : dom::array();
  if (r.ok()) {
    for (dom::element value : inputs) {
      const dom::object in = r.object(value, "inputs");
      if (!r.ok()) break;
      InputPosition p;
      p.path = r.bytes(in, "path");
      p.device = r.number(in, "device");
      p.inode = r.number(in, "inode");
      p.size = r.number(in, "size");
      p.compressed = r.boolean(in, "compressed");
      p.offset = r.number(in, "offset");
      p.lines = r.number(in, "lines");
      p.head_hash = r.hex(in, "head_hash");
      p.tail_hash = r.hex(in, "tail_hash");
      c.inputs.push_back(std::move(p));
    }
  }
  if (r.ok() && current > c.inputs.size()) r.fail("\"current\" is past the inputs");
  c.current = static_cast<uint32_t>(r.ok() ? current : 0);
  // Optional: an older checkpoint does not mark the inputs only carried over.
  const uint64_t carried = r.ok() && r.has(top, "carried") ? r.number(top, "carried") : 0;
  if (r.ok() && carried > c.inputs.size()) r.fail("\"carried\" is past the inputs");
  c.carried = static_cast<uint32_t>(r.ok() ? carried : 0);

  RunStats& s = c.stats;
  const dom::object counters = r.object(r.member(top, "counters"), "counters");
  if (r.ok()) read_counters(r, counters, s);
  s.partition_events = r.numbers(top, "partition_events");
  s.partition_bytes = r.numbers(top, "partition_bytes");
  if (r.ok() && (s.partition_events.empty() ||
                 s.partition_events.size() != s.partition_bytes.size())) {
    r.fail("the partition counters do not match");
  }
  const dom::array outputs = r.ok() ? r.array(r.member(top, "outputs"), "outputs") : dom::array();
  if (r.ok()) {
    for (dom::element value : outputs) {
      c.outputs.push_back(r.output(value));
      if (!r.ok()) break;
    }
  }
  if (r.ok() && !c.exec && c.outputs.size() != s.partition_events.size()) {
    r.fail("the outputs do not match the partitions");
  }
  // A partition's file is a name in DIR, as --name makes it (verify opens it there).
  for (const OutputState& output : c.outputs) {
    if (!r.ok()) break;
    if (!is_plain_file_name(output.file)) {
      r.fail("an output's file is not a name in the output directory");
    }
  }
  if (r.ok()) {
    const dom::element dead = r.member(top, "dead_letter");
    if (r.ok() && !dead.is_null()) c.dead_letter = r.output(dead);
  }
  const dom::object salt = r.object(r.member(top, "salt"), "salt");
  if (r.ok()) {
    c.salt.dealt = r.numbers(salt, "dealt");
    c.salt.shares_total = r.number(salt, "shares_total");
    const dom::array decisions =
        r.ok() ? r.array(r.member(salt, "decisions"), "decisions") : dom::array();
    if (r.ok()) {
      for (dom::element value : decisions) {
        const dom::object d = r.object(value, "decisions");
        if (!r.ok()) break;
        HotKeyDecision decision;
        decision.key = r.bytes(d, "key");
        const uint64_t input = r.number(d, "input");
        decision.input = static_cast<uint32_t>(input);
        decision.offset = r.number(d, "offset");
        const uint64_t sub_keys = r.number(d, "sub_keys");
        decision.sub_keys = static_cast<uint32_t>(sub_keys);
        decision.events = r.number(d, "events");
        c.salt.automatic_dealt.push_back(r.number(d, "dealt"));
        // (kEarlierInput: an input of an earlier --incremental run, gone since.)
        const bool input_known =
            input < c.inputs.size() || (c.incremental && input == kEarlierInput);
        if (r.ok() && (sub_keys == 0 || sub_keys > UINT32_MAX || !input_known)) {
          r.fail("a hot-key decision is out of range");
        }
        c.salt.decisions.push_back(std::move(decision));
      }
    }
  }
  const dom::array shares = r.ok() ? r.array(r.member(salt, "shares"), "shares") : dom::array();
  if (r.ok()) {
    for (dom::element value : shares) {
      dom::array pair = r.array(value, "shares");
      if (!r.ok() || pair.size() != 2) {
        r.fail("\"shares\" holds a malformed entry");
        break;
      }
      std::string_view hash_text;
      uint64_t hash = 0;
      if (pair.at(0).get(hash_text) != simdjson::SUCCESS || hash_text.size() != 16 ||
          std::from_chars(hash_text.data(), hash_text.data() + 16, hash, 16).ec != std::errc()) {
        r.fail("\"shares\" holds a malformed hash");
        break;
      }
      c.salt.shares.emplace_back(hash, r.number(pair.at(1).value_unsafe(), "shares"));
    }
  }
  // The heavy-hitter summary; a checkpoint written without one restores an empty summary.
  if (r.ok() && r.has(top, "heavy_hitters")) {
    const dom::object heavy = r.object(r.member(top, "heavy_hitters"), "heavy_hitters");
    const uint64_t total = r.number(heavy, "total");
    const dom::array items = r.ok() ? r.array(r.member(heavy, "keys"), "keys") : dom::array();
    std::vector<HeavyHitters::Counter> counters;
    uint64_t counted = 0;
    if (r.ok()) {
      for (dom::element value : items) {
        const dom::object item = r.object(value, "keys");
        HeavyHitters::Counter counter{r.hex(item, "hash"), r.number(item, "count"),
                                      r.bytes(item, "key"), r.number(item, "length")};
        if (!r.ok()) break;
        counted += counter.count;
        if (counter.count == 0 || counter.count > total || counted > total ||
            counter.length < counter.key.size() ||
            counter.key.size() > HeavyHitters::kKeyBytes ||
            (counter.length > counter.key.size() && counter.key.size() < HeavyHitters::kKeyBytes)) {
          r.fail("\"heavy_hitters\" holds an impossible count");
          break;
        }
        counters.push_back(std::move(counter));
      }
    }
    if (r.ok() && counters.size() > kHeavyHitterCounters) {
      r.fail("\"heavy_hitters\" holds too many keys");
    }
    if (r.ok()) s.heavy_hitters.restore(counters, total);
  }
  // Optional: a first run, or an older checkpoint, records none.
  if (r.ok() && r.has(top, "run_base")) {
    const dom::object base = r.object(r.member(top, "run_base"), "run_base");
    RunStats b(static_cast<uint32_t>(s.partition_events.size()));
    if (r.ok()) read_counters(r, base, b);
    b.partition_events = r.numbers(base, "partition_events");
    b.partition_bytes = r.numbers(base, "partition_bytes");
    const std::vector<uint64_t> hot_key_events = r.numbers(base, "hot_key_events");
    if (r.ok() && (b.partition_events.size() != s.partition_events.size() ||
                   b.partition_bytes.size() != s.partition_bytes.size() ||
                   b.salted_events.size() > s.salted_events.size() ||
                   hot_key_events.size() > c.salt.decisions.size())) {
      r.fail("\"run_base\" does not match the run's counters");
    }
    if (r.ok()) {
      for (size_t i = 0; i < hot_key_events.size(); ++i) {
        b.hot_key_decisions.push_back(c.salt.decisions[i]);
        b.hot_key_decisions.back().events = hot_key_events[i];
      }
      c.run_base = std::move(b);
    }
  }
  if (!r.ok()) return r.status();
  return {};
}

}  // namespace keyshard
