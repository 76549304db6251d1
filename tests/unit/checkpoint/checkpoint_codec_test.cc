// The checkpoint's text form: an exact round trip of every field, and the damage tests the
// checkpoint must survive: every truncation length and every single flipped byte of a real
// checkpoint is either refused with a message or decodes to exactly the original (never a
// crash, never a half-trusted checkpoint).
#include "checkpoint/checkpoint_codec.h"

#include <doctest/doctest.h>

#include <xxhash.h>

#include <cstdio>
#include <string>

namespace keyshard {
namespace {

Checkpoint sample() {
  Checkpoint c;
  c.options = R"({"partitions":3,"key":["user_id"],"name":"p-{partition}"})";
  c.complete = false;
  c.incremental = true;
  c.working_directory = std::string("/srv/jobs \xff", 11);
  c.inputs_seen_ns = 1'796'083'200'123'456'789;  // 2026-12-01
  c.inputs.push_back(InputPosition{"logs/a.ndjson", 2049, 123456, 99999, false, 4096, 17,
                                   0x0123456789abcdefull, 0xfedcba9876543210ull});
  c.inputs.push_back(InputPosition{std::string("odd\xff name.zst", 13), 0, 0, 0, true, 0, 0,
                                   0x2d06800538d394c2ull, 0x2d06800538d394c2ull});
  c.current = 1;
  c.carried = 1;
  c.exec_settled = true;
  c.stats = RunStats(3);
  c.stats.lines_read = 40;
  c.stats.bytes_read = 4096;
  c.stats.dead_lettered = 2;
  c.stats.skipped = 1;
  c.stats.missing_key_routed = 5;
  c.stats.bad_by_reason[0] = 2;
  c.stats.bad_by_reason[kBadReasonCount - 1] = 1;
  c.stats.invalid_objects = 2;
  c.stats.salted_events = {7, 0};
  c.stats.partition_events = {10, 0, 27};
  c.stats.partition_bytes = {1000, 0, UINT64_MAX};
  c.outputs = {OutputState{"p-0", 1000, 10, 1, 2}, OutputState{"p-1", 0, 0, 0, 3},
               OutputState{"p-2", 2700, 27, UINT64_MAX, 0}};
  c.dead_letter = OutputState{"out/dead-letter.ndjson", 300, 2, 4, 5};
  c.salt.dealt = {7, 0};
  c.salt.decisions.push_back(HotKeyDecision{"user_\x01" "celebrity", 0, 2048, 3, 11});
  c.salt.automatic_dealt = {11};
  c.salt.shares = {{1, 5}, {UINT64_MAX, 9}};
  c.salt.shares_total = 40;
  // The heaviest keys, with a key that is not UTF-8 and one cut to its first 256 bytes.
  const std::string long_key(300, 'k');
  c.stats.heavy_hitters.add("user_1", HeavyHitters::key_hash("user_1"), 20);
  c.stats.heavy_hitters.add("\xff\xfe", HeavyHitters::key_hash("\xff\xfe"), 7);
  c.stats.heavy_hitters.add(long_key, HeavyHitters::key_hash(long_key), 3);
  // The counters when this --incremental run began.
  RunStats base(3);
  base.lines_read = 12;
  base.bytes_read = 1200;
  base.dead_lettered = 1;
  base.bad_by_reason[0] = 1;
  base.salted_events = {3};
  base.partition_events = {4, 0, 7};
  base.partition_bytes = {400, 0, 700};
  base.hot_key_decisions = {c.salt.decisions[0]};
  base.hot_key_decisions[0].events = 6;
  c.run_base = base;
  return c;
}

void check_equal(const Checkpoint& a, const Checkpoint& b) {
  // Encoding is deterministic, so equal text means equal fields (each field is written).
  CHECK(encode_checkpoint(a) == encode_checkpoint(b));
  CHECK(a.inputs.size() == b.inputs.size());
  CHECK(a.outputs.size() == b.outputs.size());
  CHECK(a.dead_letter.has_value() == b.dead_letter.has_value());
}

TEST_CASE("a checkpoint survives its text form exactly") {
  const Checkpoint original = sample();
  const std::string text = encode_checkpoint(original);
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(text, "cp", decoded).ok());
  check_equal(original, decoded);
  CHECK(decoded.inputs[1].path == original.inputs[1].path);  // a non-UTF-8 path, via base64
  CHECK(decoded.inputs[0].tail_hash == 0xfedcba9876543210ull);
  CHECK(decoded.stats.partition_bytes[2] == UINT64_MAX);
  CHECK(decoded.stats.invalid_objects == 2);
  CHECK(decoded.salt.decisions[0].key == "user_\x01" "celebrity");
  CHECK(decoded.salt.automatic_dealt == std::vector<uint64_t>{11});
  CHECK(decoded.dead_letter->file == "out/dead-letter.ndjson");
  CHECK(decoded.incremental);
  CHECK(decoded.carried == 1);
  CHECK(decoded.exec_settled);
  CHECK_FALSE(decoded.complete);
  CHECK(decoded.working_directory == original.working_directory);  // not UTF-8: base64
  CHECK(decoded.inputs_seen_ns == 1'796'083'200'123'456'789);
  REQUIRE(decoded.run_base.has_value());
  CHECK(decoded.run_base->lines_read == 12);
  CHECK(decoded.run_base->bad_by_reason[0] == 1);
  CHECK(decoded.run_base->partition_bytes == std::vector<uint64_t>{400, 0, 700});
  REQUIRE(decoded.run_base->hot_key_decisions.size() == 1);
  CHECK(decoded.run_base->hot_key_decisions[0].key == "user_\x01" "celebrity");
  CHECK(decoded.run_base->hot_key_decisions[0].events == 6);
  CHECK(decoded.stats.heavy_hitters.total() == 30);
  const auto top = decoded.stats.heavy_hitters.top(10);
  REQUIRE(top.size() == 3);
  CHECK(top[0].key == "user_1");
  CHECK(top[0].count == 20);
  CHECK(top[1].key == "\xff\xfe");
  CHECK(top[2].key == std::string(HeavyHitters::kKeyBytes, 'k'));
  CHECK(top[2].truncated);
  // The restored summary goes on counting the same keys, long ones included.
  const std::string long_key(300, 'k');
  decoded.stats.heavy_hitters.add(long_key, HeavyHitters::key_hash(long_key), 30);
  CHECK(decoded.stats.heavy_hitters.top(1)[0].count == 33);
}

TEST_CASE("a run without a dead-letter file, salting or inputs' history round-trips") {
  Checkpoint c;
  c.options = "{}";
  c.stats = RunStats(1);
  c.outputs = {OutputState{"part-00000.ndjson", 0, 0, 0, 0}};
  c.inputs.push_back(InputPosition{"-"});
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(encode_checkpoint(c), "cp", decoded).ok());
  check_equal(c, decoded);
  CHECK_FALSE(decoded.dead_letter.has_value());
  CHECK(decoded.inputs_seen_ns == 0);  // not recorded: the checkpoint's own time stands in
  CHECK_FALSE(decoded.run_base.has_value());  // not --incremental, or an older checkpoint
}

TEST_CASE("a hot-key decision of a gone input is known to --incremental checkpoints only") {
  Checkpoint c = sample();  // --incremental
  c.salt.decisions[0].input = kEarlierInput;
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(encode_checkpoint(c), "cp", decoded).ok());
  CHECK(decoded.salt.decisions[0].input == kEarlierInput);
  c.incremental = false;
  const Status status = decode_checkpoint(encode_checkpoint(c), "cp", decoded);
  CHECK_FALSE(status.ok());
  CHECK(status.message().find("a hot-key decision is out of range") != std::string::npos);
  c.salt.decisions[0].input = static_cast<uint32_t>(c.inputs.size());
  c.incremental = true;
  CHECK_FALSE(decode_checkpoint(encode_checkpoint(c), "cp", decoded).ok());
}

TEST_CASE("every truncation of a checkpoint is refused") {
  const std::string text = encode_checkpoint(sample());
  for (size_t length = 0; length < text.size(); ++length) {
    Checkpoint decoded;
    const Status status = decode_checkpoint(text.substr(0, length), "cp", decoded);
    INFO("length " << length);
    REQUIRE_FALSE(status.ok());
    CHECK(status.reason().find("damaged checkpoint") != std::string::npos);
    CHECK(status.where() == "cp");
  }
}

TEST_CASE("a checkpoint with bytes after its checksum is refused, and not called truncated") {
  const std::string text = encode_checkpoint(sample()) + "x";
  Checkpoint decoded;
  const Status status = decode_checkpoint(text, "cp", decoded);
  REQUIRE_FALSE(status.ok());
  CHECK(status.reason().find("written to after it") != std::string::npos);
  CHECK(status.reason().find("truncated") == std::string::npos);
}

TEST_CASE("every single flipped byte is refused, or decodes to exactly the original") {
  const Checkpoint original = sample();
  const std::string text = encode_checkpoint(original);
  size_t refused = 0;
  for (size_t at = 0; at < text.size(); ++at) {
    for (const unsigned char flip : {0x01, 0x20, 0x80}) {
      std::string damaged = text;
      damaged[at] = static_cast<char>(damaged[at] ^ flip);
      Checkpoint decoded;
      const Status status = decode_checkpoint(damaged, "cp", decoded);
      INFO("byte " << at << " flipped by " << int(flip));
      if (status.ok()) {
        check_equal(original, decoded);  // only a harmless change may pass
      } else {
        ++refused;
        CHECK_FALSE(status.message().empty());
      }
    }
  }
  CHECK(refused >= 3 * text.size() - 8);  // the checksum catches nearly all of them
}

TEST_CASE("a checkpoint of another format version is refused, naming both versions") {
  std::string text = encode_checkpoint(sample());
  // Rewrite the version and the checksum as a future keyshard would.
  Checkpoint future = sample();
  future.version = 2;
  text = encode_checkpoint(future);
  Checkpoint decoded;
  const Status status = decode_checkpoint(text, "cp", decoded);
  REQUIRE_FALSE(status.ok());
  CHECK(status.reason().find("version 2") != std::string::npos);
  CHECK(status.reason().find("version 1") != std::string::npos);
}

// Recomputes the checksum of an edited checkpoint, as someone editing it by hand could.
std::string reseal(std::string text) {
  const std::string member = "  \"checksum\": \"";
  text.resize(text.rfind(member));
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  return text + member + digits + "\"\n}\n";
}

TEST_CASE("an edited checkpoint with a valid checksum but a missing or ill-typed field is refused") {
  const std::string text = encode_checkpoint(sample());
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(reseal(text), "cp", decoded).ok());  // resealing alone is harmless
  // Each edit: the text from `from` through the end of the first `through` after it (or just
  // `from`, when `through` is empty) becomes `to`.
  struct Edit {
    std::string from, through, to;
  };
  const std::vector<Edit> edits = {
      {R"("inputs": [)", "\n  ],", R"("inputs": {},)"},
      {R"("inputs": [)", "\n  ],", R"("inputs": 7,)"},
      {R"(  "inputs": [)", "\n  ],\n", ""},
      {R"("partition_events": [)", "]", R"("partition_events": {})"},
      {R"(  "partition_events": [)", "],\n", ""},
      {R"("dealt":[7,0],)", "", ""},
      {R"("dealt":[7,0])", "", R"("dealt":"x")"},
      {R"("decisions":[)", "", R"("decisions":7,"x":[)"},
      {R"("decisions":[)", R"(],"shares_total")", R"("shares_total")"},
      {R"("shares":[)", "]]}", R"("shares":"x"})"},
      {R"("shares":[)", "]]}", R"("shares":[7]})"},
      {R"("counters": {)", "}", R"("counters": [])"},
      {R"(  "counters": {)", "},\n", ""},
      {R"("bad_by_reason":[)", "]", R"("bad_by_reason":[1])"},
      {R"("version": 1)", "", R"("version": "1")"},
      {R"("version": 1)", "", R"("version": 4294967297)"},
      {"  \"format\": \"keyshard-checkpoint\",\n", "", ""},
      {R"("options": {)", "},\n", "\"options\": 3,\n"},
      {R"({"file":"p-1")", "}", "7"},
      {R"({"file":"p-1",)", "", "{"},
      // a partition's file that is not a name in DIR (verify would look outside it)
      {R"({"file":"p-1")", "", R"({"file":"../p-1")"},
      {R"({"file":"p-1")", "", R"({"file":"/tmp/p-1")"},
      {R"({"file":"p-1")", "", R"({"file":"..")"},
      {R"({"file":"p-1")", "", R"({"file":"")"},
      {R"("current": 1)", "", R"("current": 4294967296)"},
      {R"("current": 1)", "", R"("current": -1)"},
      {R"("carried": 1)", "", R"("carried": 3)"},
      {R"("carried": 1)", "", R"("carried": "1")"},
      {R"("dead_letter": {)", "}", R"("dead_letter": [])"},
      {R"("salt": {)", "", R"("salt": 1, "x": {)"},
      {R"("head_hash":")", "\"", R"("head_hash":"12")"},
      {R"("path":"logs/a.ndjson")", "", R"("path":1)"},
      {R"("path_base64":")", "\"", R"("path_base64":"%%%")"},
      {R"("heavy_hitters": {)", "]},", R"("heavy_hitters": 7,)"},
      {R"("heavy_hitters": {"total":30)", "", R"("heavy_hitters": {"total":29)"},
      {R"("heavy_hitters": {"total":30,"keys":[)", "]},", R"("heavy_hitters": {"total":30},)"},
      {R"("count":20)", "", R"("count":0)"},
      {R"("count":20)", "", R"("count":31)"},
      {R"("length":300)", "", R"("length":255)"},
      {R"("length":6,)", "", R"("length":60,)"},
      {R"("length":6,"key":"user_1")", "", R"("length":6,"key":7)"},
      {R"("run_base": {)", "}", R"("run_base": [])"},
      {R"("run_base": {"lines_read":12)", "", R"("run_base": {"lines_read":"12")"},
      {R"("partition_events":[4,0,7])", "", R"("partition_events":[4,0])"},
      {R"("hot_key_events":[6])", "", R"("hot_key_events":[6,1])"},
      {R"("bad_by_reason":[1,)", "]", R"("bad_by_reason":[1])"},
  };
  for (const Edit& edit : edits) {
    CAPTURE(edit.from);
    CAPTURE(edit.to);
    std::string edited = text;
    const size_t at = edited.find(edit.from);
    REQUIRE(at != std::string::npos);
    size_t end = at + edit.from.size();
    if (!edit.through.empty()) {
      const size_t through = edited.find(edit.through, end);
      REQUIRE(through != std::string::npos);
      end = through + edit.through.size();
    }
    edited.replace(at, end - at, edit.to);
    REQUIRE(edited != text);  // the edit applied
    const Status status = decode_checkpoint(reseal(edited), "cp", decoded);
    CHECK_FALSE(status.ok());
    CHECK(status.where() == "cp");
  }
}

TEST_CASE("a well-formed file that is not a checkpoint is refused") {
  Checkpoint decoded;
  CHECK_FALSE(decode_checkpoint("", "cp", decoded).ok());
  CHECK_FALSE(decode_checkpoint("{}\n", "cp", decoded).ok());
  CHECK_FALSE(decode_checkpoint(std::string(100, '\0'), "cp", decoded).ok());
}

TEST_CASE("a checkpoint written without the heaviest keys restores an empty summary") {
  std::string text = encode_checkpoint(sample());
  const size_t from = text.find("  \"heavy_hitters\": {");
  const size_t to = text.find("]},\n", from);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  text.erase(from, to + 4 - from);
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(reseal(text), "cp", decoded).ok());
  CHECK(decoded.stats.heavy_hitters.total() == 0);
  CHECK(decoded.stats.heavy_hitters.top(10).empty());
  CHECK(decoded.stats.lines_read == 40);
}

TEST_CASE("a checkpoint written without the count of invalid objects restores none") {
  std::string text = encode_checkpoint(sample());
  const std::string member = ",\"invalid_objects\":2";
  const size_t from = text.find(member);
  REQUIRE(from != std::string::npos);
  text.erase(from, member.size());
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(reseal(text), "cp", decoded).ok());
  CHECK(decoded.stats.invalid_objects == 0);
  CHECK(decoded.stats.bad_by_reason[0] == 2);
  // An ill-typed one is refused.
  text = encode_checkpoint(sample());
  text.replace(text.find(member), member.size(), ",\"invalid_objects\":\"2\"");
  CHECK_FALSE(decode_checkpoint(reseal(text), "cp", decoded).ok());
}

TEST_CASE("a checkpoint that does not mark carried inputs has none") {
  std::string text = encode_checkpoint(sample());
  const size_t from = text.find("  \"carried\": 1,\n");
  REQUIRE(from != std::string::npos);
  text.erase(from, std::string_view("  \"carried\": 1,\n").size());
  Checkpoint decoded;
  REQUIRE(decode_checkpoint(reseal(text), "cp", decoded).ok());
  CHECK(decoded.carried == 0);
  CHECK(decoded.current == 1);
}

}  // namespace
}  // namespace keyshard
