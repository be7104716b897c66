// tokenizer.json into the pipeline. Every check is made here, so encode and decode never meet a bad file; each
// error names the file and the JSON path of the field (model.merges[12], pre_tokenizer.pretokenizers[0].type).
#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/formats/bounded_json.h"
#include "fourfold/errors.h"
#include "model/formats/checked_json.h"
#include "model/formats/json_excerpt.h"
#include "model/tokenizer/tokenizer_parts.h"

namespace fourfold::model::tokenizer_detail {
namespace {

using nlohmann::json;

// Every encode adds the templates' ids, and a template may name one special token with many ids many times
// over, so a small file could ask for billions of ids per prompt; real templates hold one to a few.
constexpr size_t kMaxTemplateIds = 4096;

// Checks through CheckedJson (model/formats/checked_json.h): "<file>: field '<path>': expected ..., found ...".
struct Reader : CheckedJson {
  using CheckedJson::CheckedJson;
  using CheckedJson::bad;

  [[noreturn]] void bad(const std::string& field, std::string_view expected, const json* found) const {
    if (found == nullptr) bad_text(field, expected, "none (missing)");
    bad(field, expected, *found);
  }
  [[noreturn]] void unsupported(const std::string& field, std::string_view expected, const json& found) const {
    fail_field<UnsupportedError>(source(), field, expected, describe(found));
  }
  const json& object(const json& parent, const std::string& key, const std::string& path) const {
    const auto it = parent.find(key);
    if (it == parent.end() || !it->is_object()) bad(path, "an object", it == parent.end() ? nullptr : &*it);
    return *it;
  }
  const json& array(const json& parent, const std::string& key, const std::string& path) const {
    const auto it = parent.find(key);
    if (it == parent.end() || !it->is_array()) bad(path, "an array", it == parent.end() ? nullptr : &*it);
    return *it;
  }
  std::string string(const json& parent, const std::string& key, const std::string& path) const {
    const auto it = parent.find(key);
    if (it == parent.end() || !it->is_string()) bad(path, "a string", it == parent.end() ? nullptr : &*it);
    return it->get<std::string>();
  }
  bool boolean(const json& parent, const std::string& key, const std::string& path, bool fallback) const {
    const auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) bad(path, "true or false", &*it);
    return it->get<bool>();
  }
  int64_t count(const json& value, const std::string& path) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX)
      bad(path, "an integer in [0, 2^31)", &value);
    return value.get<int64_t>();
  }
  std::string type(const json& value, const std::string& path) const {
    if (!value.is_object()) bad(path, "an object", &value);
    return string(value, "type", path + ".type");
  }

  // One character, as tokenizers' `char` fields (Metaspace's replacement, Strip's content) require: an empty
  // replacement would match everywhere without the decoder or pre-tokenizer ever moving on.
  std::string character(const json& parent, const std::string& key, const std::string& path) const {
    const std::string s = string(parent, key, path);
    if (s.empty() || next_code_point(s, 0).second != s.size()) bad(path, "one character", &parent[key]);
    return s;
  }

  // {"String": "..."} or {"Regex": "..."}. An empty pattern is refused: what it would split or replace (the
  // empty string between every two characters) is nothing a tokenizer.json means.
  std::shared_ptr<const Regex> pattern(const json& parent, const std::string& path) const {
    const json& p = object(parent, "pattern", path + ".pattern");
    for (const char* kind : {"String", "Regex"}) {
      if (p.size() != 1 || !p.contains(kind) || !p[kind].is_string()) continue;
      const std::string field = fmt::format("{}.pattern.{}", path, kind);
      const std::string text = p[kind].get<std::string>();
      if (text.empty()) bad(field, "a non-empty pattern", &p[kind]);
      return std::make_shared<Regex>(text, std::string_view(kind) == "String", source(), field);
    }
    bad(path + ".pattern", "{\"String\": text} or {\"Regex\": text}", &p);
  }

  PrependScheme prepend_scheme(const json& value, const std::string& path) const {
    if (value.contains("prepend_scheme")) {
      const std::string s = string(value, "prepend_scheme", path + ".prepend_scheme");
      if (s == "always") return PrependScheme::kAlways;
      if (s == "first") return PrependScheme::kFirst;
      if (s == "never") return PrependScheme::kNever;
      bad(path + ".prepend_scheme", "one of always, first, never", &value["prepend_scheme"]);
    }
    // Files from before prepend_scheme existed say add_prefix_space.
    return boolean(value, "add_prefix_space", path + ".add_prefix_space", true) ? PrependScheme::kAlways
                                                                                 : PrependScheme::kNever;
  }

  void normalizer(const json& value, const std::string& path, std::vector<Normalizer>& out) const {
    if (value.is_null()) return;
    const std::string t = type(value, path);
    if (t == "NFC" || t == "NFD" || t == "NFKC" || t == "NFKD") {
      out.push_back({Normalizer::Kind::kUnicode, t, nullptr, path});
    } else if (t == "Prepend") {
      out.push_back({Normalizer::Kind::kPrepend, string(value, "prepend", path + ".prepend"), nullptr, path});
    } else if (t == "Replace") {
      out.push_back(
          {Normalizer::Kind::kReplace, string(value, "content", path + ".content"), pattern(value, path), path});
    } else if (t == "Sequence") {
      const json& list = array(value, "normalizers", path + ".normalizers");
      for (size_t i = 0; i < list.size(); ++i) normalizer(list[i], fmt::format("{}.normalizers[{}]", path, i), out);
    } else {
      unsupported(path + ".type", "one of NFC, NFD, NFKC, NFKD, Prepend, Replace, Sequence", value["type"]);
    }
  }

  void pre_tokenizer(const json& value, const std::string& path, std::vector<PreTokenizer>& out) const {
    if (value.is_null()) return;
    const std::string t = type(value, path);
    PreTokenizer pt{};
    pt.path = path;
    if (t == "Split") {
      pt.kind = PreTokenizer::Kind::kSplit;
      pt.regex = pattern(value, path);
      const std::string b = string(value, "behavior", path + ".behavior");
      if (b == "Removed") pt.behavior = SplitBehavior::kRemoved;
      else if (b == "Isolated") pt.behavior = SplitBehavior::kIsolated;
      else if (b == "MergedWithPrevious") pt.behavior = SplitBehavior::kMergedWithPrevious;
      else if (b == "MergedWithNext") pt.behavior = SplitBehavior::kMergedWithNext;
      else if (b == "Contiguous") pt.behavior = SplitBehavior::kContiguous;
      else bad(path + ".behavior", "one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous",
               &value["behavior"]);
      pt.invert = boolean(value, "invert", path + ".invert", false);
    } else if (t == "ByteLevel") {
      pt.kind = PreTokenizer::Kind::kByteLevel;
      pt.add_prefix_space = boolean(value, "add_prefix_space", path + ".add_prefix_space", true);
      if (boolean(value, "use_regex", path + ".use_regex", true))
        pt.regex = std::make_shared<Regex>(gpt2_split_pattern(), false, source(), path);
    } else if (t == "Metaspace") {
      pt.kind = PreTokenizer::Kind::kMetaspace;
      pt.replacement = character(value, "replacement", path + ".replacement");
      pt.prepend_scheme = prepend_scheme(value, path);
      pt.split = boolean(value, "split", path + ".split", true);
    } else if (t == "Digits") {
      pt.kind = PreTokenizer::Kind::kDigits;
      pt.individual_digits = boolean(value, "individual_digits", path + ".individual_digits", false);
    } else if (t == "Sequence") {
      const json& list = array(value, "pretokenizers", path + ".pretokenizers");
      for (size_t i = 0; i < list.size(); ++i)
        pre_tokenizer(list[i], fmt::format("{}.pretokenizers[{}]", path, i), out);
      return;
    } else {
      unsupported(path + ".type", "one of Split, ByteLevel, Metaspace, Digits, Sequence", value["type"]);
    }
    out.push_back(std::move(pt));
  }

  void decoder(const json& value, const std::string& path, std::vector<Decoder>& out) const {
    const std::string t = type(value, path);
    Decoder d{};
    d.path = path;
    if (t == "ByteLevel") {
      d.kind = Decoder::Kind::kByteLevel;
    } else if (t == "Metaspace") {
      d.kind = Decoder::Kind::kMetaspace;
      d.text = character(value, "replacement", path + ".replacement");
      d.prepend_scheme = prepend_scheme(value, path);
    } else if (t == "Replace") {
      d.kind = Decoder::Kind::kReplace;
      d.text = string(value, "content", path + ".content");
      d.regex = pattern(value, path);
    } else if (t == "ByteFallback") {
      d.kind = Decoder::Kind::kByteFallback;
    } else if (t == "Fuse") {
      d.kind = Decoder::Kind::kFuse;
    } else if (t == "Strip") {
      d.kind = Decoder::Kind::kStrip;
      d.strip_content = next_code_point(character(value, "content", path + ".content"), 0).first;
      d.start = static_cast<size_t>(count(value.value("start", json()), path + ".start"));
      d.stop = static_cast<size_t>(count(value.value("stop", json()), path + ".stop"));
    } else if (t == "Sequence") {
      const json& list = array(value, "decoders", path + ".decoders");
      for (size_t i = 0; i < list.size(); ++i) decoder(list[i], fmt::format("{}.decoders[{}]", path, i), out);
      return;
    } else {
      unsupported(path + ".type", "one of ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence",
                  value["type"]);
    }
    out.push_back(std::move(d));
  }

  // Ids index a table of every token, so they are bounded by the number of entries (model.vocab and
  // added_tokens), not by the largest id: real files number their vocab 0..N-1 and continue in added_tokens,
  // and a 60-byte file with the one id 10^8 would otherwise ask for gigabytes.
  void bpe(const json& model, size_t added_count, Bpe& b) const {
    if (model.contains("type")) {
      const std::string t = string(model, "type", "model.type");
      if (t != "BPE") unsupported("model.type", "BPE", model["type"]);
    }
    const json& vocab = object(model, "vocab", "model.vocab");
    const auto entries = static_cast<int64_t>(vocab.size() + added_count);
    std::unordered_map<int64_t, std::string> by_id;
    for (const auto& [token, id] : vocab.items()) {
      const std::string path = fmt::format("model.vocab[\"{}\"]", token);
      const int64_t v = count(id, path);
      if (v >= entries)
        bad(path, fmt::format("an id below {}, the number of entries in model.vocab and added_tokens", entries), &id);
      if (!by_id.emplace(v, token).second)
        bad(path, fmt::format("an id not used before (\"{}\" has it)", by_id[v]), &id);
      b.vocab.emplace(token, v);
    }
    const json& merges = array(model, "merges", "model.merges");
    for (size_t i = 0; i < merges.size(); ++i) {
      const std::string path = fmt::format("model.merges[{}]", i);
      const json& m = merges[i];
      std::string left, right;
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        const size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
          bad(path, "\"left right\" (one space)", &m);
        left = s.substr(0, space), right = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        left = m[0].get<std::string>(), right = m[1].get<std::string>();
      } else {
        bad(path, "\"left right\" or [left, right]", &m);
      }
      const auto l = b.vocab.find(left), r = b.vocab.find(right), merged = b.vocab.find(left + right);
      if (l == b.vocab.end()) bad(path, fmt::format("tokens in model.vocab ('{}' is not)", left), &m);
      if (r == b.vocab.end()) bad(path, fmt::format("tokens in model.vocab ('{}' is not)", right), &m);
      if (merged == b.vocab.end())
        bad(path, fmt::format("a merge whose result is in model.vocab ('{}' is not)", left + right), &m);
      // A repeated merge keeps its last rank, as tokenizers' HashMap collect does.
      b.merges[(static_cast<uint64_t>(l->second) << 32) | static_cast<uint32_t>(r->second)] = {
          static_cast<int32_t>(i), merged->second};
    }
    if (const auto it = model.find("dropout"); it != model.end() && !it->is_null()) {
      if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) bad("model.dropout", "null or in [0, 1]", &*it);
      if (it->get<double>() != 0) unsupported("model.dropout", "null or 0 (deterministic encoding)", *it);
    }
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      const auto it = model.find(key);
      if (it == model.end() || it->is_null() || (it->is_string() && it->get<std::string>().empty())) continue;
      if (!it->is_string()) bad(fmt::format("model.{}", key), "null or a string", &*it);
      unsupported(fmt::format("model.{}", key), "null", *it);
    }
    if (const auto it = model.find("unk_token"); it != model.end() && !it->is_null()) {
      const std::string unk = string(model, "unk_token", "model.unk_token");
      const auto id = b.vocab.find(unk);
      if (id == b.vocab.end()) bad("model.unk_token", "a token in model.vocab", &*it);
      b.unk_id = id->second;
    }
    b.fuse_unk = boolean(model, "fuse_unk", "model.fuse_unk", false);
    b.byte_fallback = boolean(model, "byte_fallback", "model.byte_fallback", false);
    b.ignore_merges = boolean(model, "ignore_merges", "model.ignore_merges", false);
    for (int v = 0; v < 256; ++v) {
      const auto it = b.vocab.find(fmt::format("<0x{:02X}>", v));
      b.byte_ids[v] = it == b.vocab.end() ? -1 : it->second;
    }
  }

  void added_tokens(const json& doc, Pipeline& p) const {
    const auto it = doc.find("added_tokens");
    if (it == doc.end() || it->is_null()) return;
    if (!it->is_array()) bad("added_tokens", "an array", &*it);
    int64_t max_added = -1;
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string path = fmt::format("added_tokens[{}]", i);
      const json& t = (*it)[i];
      if (!t.is_object()) bad(path, "an object", &t);
      AddedToken a;
      a.id = count(t.value("id", json()), path + ".id");
      a.content = string(t, "content", path + ".content");
      if (a.content.empty()) bad(path + ".content", "a non-empty string", &t["content"]);
      a.special = boolean(t, "special", path + ".special", false);
      a.single_word = boolean(t, "single_word", path + ".single_word", false);
      a.lstrip = boolean(t, "lstrip", path + ".lstrip", false);
      a.rstrip = boolean(t, "rstrip", path + ".rstrip", false);
      a.normalized = boolean(t, "normalized", path + ".normalized", !a.special);
      // tokenizers ignores the stored id and assigns one (the model's id for a token in its vocab, else the next
      // free one); a file where the two differ would give other ids there than here, so it is refused.
      const auto in_vocab = p.bpe.vocab.find(a.content);
      const int64_t vocab_len = static_cast<int64_t>(p.bpe.vocab.size());
      const int64_t assigned = in_vocab != p.bpe.vocab.end() ? in_vocab->second
                               : max_added < 0                ? vocab_len
                               : max_added >= vocab_len       ? max_added + 1
                                                              : vocab_len;
      if (a.id != assigned)
        bad(path + ".id", fmt::format("{}, the id tokenizers assigns", assigned), &t["id"]);
      max_added = std::max(max_added, assigned);
      if (p.added_by_id.contains(a.id)) bad(path + ".id", "an id no other added token has", &t["id"]);
      if (p.added_by_content.contains(a.content))
        bad(path + ".content", "a content no other added token has", &t["content"]);
      p.added_by_id.emplace(a.id, p.added.size());
      p.added_by_content.emplace(a.content, a.id);
      p.added.push_back(std::move(a));
    }
  }

  // The "single" template as (ids before $A, ids after $A).
  void template_processing(const json& value, const std::string& path, Pipeline& p) const {
    const json& specials = object(value, "special_tokens", path + ".special_tokens");
    size_t used = 0;  // ids in all templates so far, each reference to a special token counted again
    for (const auto& [before, after] : p.templates) used += before.size() + after.size();
    auto special_ids = [&](const std::string& name, const std::string& where, const json& found) {
      const auto s = specials.find(name);
      if (s == specials.end()) bad(where, "a name in " + path + ".special_tokens", &found);
      const std::string spath = fmt::format("{}.special_tokens[\"{}\"].ids", path, name);
      const json& ids = array(*s, "ids", spath);
      used += ids.size();
      if (used > kMaxTemplateIds)
        bad(where, fmt::format("templates of at most {} special-token ids in all", kMaxTemplateIds), &found);
      std::vector<int64_t> out;
      for (size_t k = 0; k < ids.size(); ++k) out.push_back(count(ids[k], fmt::format("{}[{}]", spath, k)));
      return out;
    };
    std::vector<std::pair<bool, std::vector<int64_t>>> items;  // (is $A, ids)
    const json& single = value.contains("single") ? value["single"] : json();
    if (single.is_string()) {  // the shorthand "<s> $A"
      std::istringstream words(single.get<std::string>());
      for (std::string w; words >> w;) {
        if (w.starts_with("$")) items.push_back({true, {}});
        else items.push_back({false, special_ids(w.substr(0, w.find(':')), path + ".single", single)});
      }
    } else if (single.is_array()) {
      for (size_t i = 0; i < single.size(); ++i) {
        const std::string ipath = fmt::format("{}.single[{}]", path, i);
        const json& item = single[i];
        if (item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].is_object())
          items.push_back({false, special_ids(string(item["SpecialToken"], "id", ipath + ".SpecialToken.id"),
                                              ipath + ".SpecialToken.id", item["SpecialToken"]["id"])});
        else if (item.is_object() && item.contains("Sequence"))
          items.push_back({true, {}});
        else
          bad(ipath, "{\"SpecialToken\": ...} or {\"Sequence\": ...}", &item);
      }
    } else {
      bad(path + ".single", "a template (an array of items)", value.contains("single") ? &single : nullptr);
    }
    std::pair<std::vector<int64_t>, std::vector<int64_t>> wrap;
    int sequences = 0;
    for (const auto& [is_sequence, ids] : items) {
      if (is_sequence) ++sequences;
      else (sequences == 0 ? wrap.first : wrap.second).insert((sequences == 0 ? wrap.first : wrap.second).end(),
                                                              ids.begin(), ids.end());
    }
    if (sequences != 1) bad(path + ".single", "a template with exactly one sequence ($A)", &single);
    p.templates.push_back(std::move(wrap));
  }

  void post_processor(const json& value, const std::string& path, Pipeline& p) const {
    if (value.is_null()) return;
    const std::string t = type(value, path);
    if (t == "ByteLevel") return;  // it only trims offsets; ids are unchanged
    if (t == "TemplateProcessing") return template_processing(value, path, p);
    if (t == "Sequence") {
      const json& list = array(value, "processors", path + ".processors");
      for (size_t i = 0; i < list.size(); ++i) post_processor(list[i], fmt::format("{}.processors[{}]", path, i), p);
      return;
    }
    unsupported(path + ".type", "one of ByteLevel, TemplateProcessing, Sequence", value["type"]);
  }
};

const json& member_or_null(const json& doc, const char* key) {
  static const json null_value;
  const auto it = doc.find(key);
  return it == doc.end() ? null_value : *it;
}

}  // namespace

std::shared_ptr<const Pipeline> parse_tokenizer_json(std::string_view text, const std::string& file) {
  const json doc = parse_bounded_json(text, file, "tokenizer.json");
  const Reader r(file);
  if (!doc.is_object()) r.bad("tokenizer.json", "an object", &doc);
  auto p = std::make_shared<Pipeline>();
  p->file = file;
  const json& added = member_or_null(doc, "added_tokens");
  r.bpe(r.object(doc, "model", "model"), added.is_array() ? added.size() : 0, p->bpe);
  r.added_tokens(doc, *p);
  r.normalizer(member_or_null(doc, "normalizer"), "normalizer", p->normalizers);
  r.pre_tokenizer(member_or_null(doc, "pre_tokenizer"), "pre_tokenizer", p->pre_tokenizers);
  r.post_processor(member_or_null(doc, "post_processor"), "post_processor", *p);
  if (const json& d = member_or_null(doc, "decoder"); !d.is_null()) {
    p->has_decoder = true;
    r.decoder(d, "decoder", p->decoders);
  }
  for (const Normalizer& n : p->normalizers)
    if (n.kind != Normalizer::Kind::kUnicode) p->normalizer_strings += n.text.size();
  for (const PreTokenizer& pt : p->pre_tokenizers) p->pre_tokenizer_strings += pt.replacement.size();
  for (const Decoder& d : p->decoders) p->decoder_strings += d.text.size();

  int64_t size = 0;
  for (const auto& [token, id] : p->bpe.vocab) size = std::max(size, id + 1);
  for (const AddedToken& a : p->added) size = std::max(size, a.id + 1);
  p->id_to_token.resize(static_cast<size_t>(size));
  p->has_token.resize(static_cast<size_t>(size));
  for (const auto& [token, id] : p->bpe.vocab) p->id_to_token[id] = token, p->has_token[id] = true;
  for (AddedToken& a : p->added) {
    p->id_to_token[a.id] = a.content, p->has_token[a.id] = true;
    a.match = a.normalized ? normalize(*p, a.content) : a.content;
  }
  for (size_t i = 0; i < p->added.size(); ++i) {
    const AddedToken& a = p->added[i];
    if (!a.match.empty()) p->added_by_first_byte[a.normalized][static_cast<unsigned char>(a.match[0])].push_back(i);
  }
  for (auto& kind : p->added_by_first_byte)
    for (auto& list : kind)
      std::stable_sort(list.begin(), list.end(),
                       [&](size_t x, size_t y) { return p->added[x].match.size() > p->added[y].match.size(); });
  for (size_t t = 0; t < p->templates.size(); ++t)
    for (const auto* ids : {&p->templates[t].first, &p->templates[t].second})
      for (const int64_t id : *ids)
        if (id >= size) r.bad("post_processor", fmt::format("special token ids below the vocab size {}", size),
                              &doc["post_processor"]);

  bool fused = false;
  for (const Decoder& d : p->decoders) {
    fused = fused || d.kind == Decoder::Kind::kByteLevel || d.kind == Decoder::Kind::kFuse;
    p->decoder_has_byte_fallback = p->decoder_has_byte_fallback || d.kind == Decoder::Kind::kByteFallback;
    if (fused && d.kind == Decoder::Kind::kReplace) p->decoder_rewrites_across_tokens = true;
    if (d.kind == Decoder::Kind::kStrip && d.stop > 0) {
      if (p->trailing_strip > 0 && p->trailing_strip_content != d.strip_content)
        p->decoder_rewrites_across_tokens = true;
      p->trailing_strip = std::max(p->trailing_strip, d.stop);
      p->trailing_strip_content = d.strip_content;
    }
  }
  return p;
}

}  // namespace fourfold::model::tokenizer_detail
