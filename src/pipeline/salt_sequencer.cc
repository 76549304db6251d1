#include "pipeline/salt_sequencer.h"

#include <optional>

#include "keys/json_key_extractor.h"
#include "pipeline/router.h"

namespace keyshard {

SaltSequencer::SaltSequencer(const RunConfig& config)
    : config_(config), partitioner_(config.hash, config.partitions), dealt_(config.salts.size()) {
  if (config.hot_keys_share) extractor_ = std::make_unique<KeyExtractor>(config.keys);
  if (config.hot_keys_share && config.salt_by) {
    salt_by_ = std::make_unique<JsonKeyExtractor>(std::span(&*config.salt_by, 1), false);
  }
  for (const auto& [key, sub_keys] : config.salts) named_.insert(HeavyHitters::key_hash(key));
}

SaltSequencer::~SaltSequencer() = default;

uint32_t SaltSequencer::deal(std::string_view key, uint32_t sub_keys, uint64_t& dealt,
                             int32_t& index) {
  index = static_cast<int32_t>(dealt++ % sub_keys);
  salted_key(key, static_cast<uint32_t>(index), sub_key_);
  return partitioner_.partition_of(sub_key_);
}

void SaltSequencer::detect_hot_keys(Chunk& chunk) {
  const double share = *config_.hot_keys_share;
  const size_t readable_end = chunk.readable_end();
  for (size_t i = 0; i < chunk.key_hashes.size(); ++i) {
    const uint64_t hash = chunk.key_hashes[i];
    if (hash == 0) continue;  // no key
    // A share is of all the events with a key, those of keys salted already included (else
    // each key salted would push the next ones over the line).
    shares_.add({}, hash);
    // A --salt key (its line is pending, or placed by --salt-by already) is salted as named.
    if (chunk.destinations[i] == kToSaltedPending || named_.contains(hash)) continue;
    if (auto known = automatic_.find(hash); known != automatic_.end()) {
      // A key salted automatically: deal it round-robin from now on. Its bytes are the
      // decision's (the line is not parsed again).
      HotKeyDecision& decision = decisions_[known->second];
      int32_t index = -1;
      // With --salt-by, as for a --salt key: the sub-key is a hash of that field, and an event
      // without it is dealt round-robin.
      std::optional<Extraction> by;
      if (salt_by_) by = salt_by_->extract(chunk.line(i), readable_end - chunk.line_starts[i]);
      if (by && by->ok) {
        index = static_cast<int32_t>(sub_key_of_field(by->key, decision.sub_keys));
        salted_key(decision.key, static_cast<uint32_t>(index), sub_key_);
        chunk.destinations[i] = partitioner_.partition_of(sub_key_);
      } else {
        chunk.destinations[i] = deal(decision.key, decision.sub_keys,
                                     automatic_dealt_[known->second], index);
      }
      if (decision.events++ == 0) {
        // The first salted event: where the summary says the salting started (the line after
        // the one that crossed the share may be in a later input).
        decision.input = chunk.input;
        decision.offset = chunk.input_offset + chunk.line_starts[i];
      }
      if (config_.annotate_salt) chunk.salt_of_line[i] = index;
      continue;
    }
    if (shares_.total() < config_.hot_keys_warmup) continue;
    // The summary's count is a lower bound: a key is salted only once it surely crossed.
    const auto count = shares_.count_of(hash);
    if (static_cast<double>(count) <= share * static_cast<double>(shares_.total())) continue;
    if (decisions_.size() >= kMaxHotKeyDecisions) continue;  // (memory stays bounded)
    const Extraction extraction = extractor_->extract(
        chunk.line(i), readable_end - chunk.line_starts[i], chunk.starts_input(i));
    if (decided_bytes_ + extraction.key.size() > kMaxHotKeyBytes) continue;
    decided_bytes_ += extraction.key.size();
    automatic_.emplace(hash, decisions_.size());
    automatic_dealt_.push_back(0);
    // Until a salted event comes, the offset is just after the line that crossed the share.
    const uint64_t next_offset = chunk.input_offset + chunk.line_starts[i + 1];
    decisions_.push_back(HotKeyDecision{std::string(extraction.key), chunk.input, next_offset,
                                        config_.partitions, 0});
  }
}

SaltState SaltSequencer::snapshot() const {
  SaltState state;
  state.dealt = dealt_;
  state.decisions = decisions_;
  state.automatic_dealt = automatic_dealt_;
  state.shares = shares_.counts();
  state.shares_total = shares_.total();
  return state;
}

void SaltSequencer::restore(const SaltState& state) {
  if (state.dealt.size() == dealt_.size()) dealt_ = state.dealt;
  decisions_ = state.decisions;
  automatic_dealt_ = state.automatic_dealt;
  automatic_dealt_.resize(decisions_.size());
  automatic_.clear();
  decided_bytes_ = 0;
  for (size_t i = 0; i < decisions_.size(); ++i) {
    automatic_.emplace(HeavyHitters::key_hash(decisions_[i].key), i);
    decided_bytes_ += decisions_[i].key.size();
  }
  shares_.restore(state.shares, state.shares_total);
}

void SaltSequencer::sequence(Chunk& chunk) {
  if (config_.hot_keys_share) detect_hot_keys(chunk);  // first: it skips --salt keys' lines
  for (const PendingSalt& pending : chunk.pending_salts) {
    const auto& [key, sub_keys] = config_.salts[pending.salt];
    int32_t index = -1;
    chunk.destinations[pending.line] = deal(key, sub_keys, dealt_[pending.salt], index);
    if (config_.annotate_salt) chunk.salt_of_line[pending.line] = index;
  }
  if (!config_.ordered_stdout()) group_by_partition(chunk, config_.partitions, cursor_);
}

}  // namespace keyshard
