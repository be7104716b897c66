// The BPE model: characters (or their <0xNN> bytes, or <unk>) merged by rank, lowest first and leftmost
// among equals, with a heap over a linked list of symbols: O(n log n) per pre-token.
#include <queue>

#include "model/tokenizer/tokenizer_parts.h"

namespace fourfold::model::tokenizer_detail {
namespace {

struct Symbol {
  int64_t id;
  int prev, next;
  bool alive = true;
};

struct Candidate {
  int32_t rank;
  int pos;
  int64_t new_id;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

uint64_t pair_key(int64_t a, int64_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

}  // namespace

void Bpe::tokenize(std::string_view word, std::vector<int64_t>& out) const {
  if (ignore_merges) {
    if (const auto it = vocab.find(std::string(word)); it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<Symbol> symbols;
  auto add = [&](int64_t id) {
    const int n = static_cast<int>(symbols.size());
    symbols.push_back({id, n - 1, -1});
    if (n > 0) symbols[n - 1].next = n;
  };
  // tokenizers' merge_word: a pending (possibly fused) unk is flushed before the next known character only,
  // so byte-fallback tokens can overtake it; kept as is for identical ids.
  int64_t pending_unk = -1;
  std::string piece;
  for (size_t i = 0; i < word.size();) {
    const size_t len = next_code_point(word, i).second;
    piece.assign(word.substr(i, len));
    i += len;
    if (const auto it = vocab.find(piece); it != vocab.end()) {
      if (pending_unk >= 0) add(pending_unk), pending_unk = -1;
      add(it->second);
      continue;
    }
    if (byte_fallback) {
      bool all = true;
      for (const char c : piece) all = all && byte_ids[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (const char c : piece) add(byte_ids[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (unk_id >= 0) {
      if (pending_unk >= 0 && !fuse_unk) add(pending_unk);
      pending_unk = unk_id;
    }
  }
  if (pending_unk >= 0) add(pending_unk);

  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int left) {
    const int right = symbols[left].next;
    if (right < 0) return;
    const auto it = merges.find(pair_key(symbols[left].id, symbols[right].id));
    if (it != merges.end()) queue.push({it->second.first, left, it->second.second});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // Stale if either side has merged since the candidate was pushed.
    const auto it = merges.find(pair_key(left.id, right.id));
    if (it == merges.end() || it->second.second != top.new_id) continue;
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
  for (const Symbol& s : symbols)
    if (s.alive) out.push_back(s.id);
}

}  // namespace fourfold::model::tokenizer_detail
