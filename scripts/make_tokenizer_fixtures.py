#!/usr/bin/env python3
"""Writes the tokenizer fixtures under tests/data/tokenizers/ and their golden ids and texts.

Run with the venv that has Hugging Face `tokenizers` (0.23.3 was used):

    /root/ffpy/bin/python scripts/make_tokenizer_fixtures.py

Real tokenizer.json files cannot be downloaded here, so each fixture is a small BPE (vocab ~1000) trained on the
embedded corpus below, with exactly the normalizer / pre-tokenizer / post-processor / decoder of the real
model family:
  qwen2.json        NFC; Split(Qwen2 regex, Isolated) + ByteLevel(no prefix, no regex); ByteLevel decoder
  llama3.json       Split(Llama 3 regex, Isolated) + ByteLevel; ignore_merges (and two vocab words the merges
                    cannot build, so it matters); Sequence[ByteLevel, TemplateProcessing <|begin_of_text|>]
  llama2.json       SentencePiece BPE: byte_fallback, fuse_unk, <unk>; Prepend + Replace normalizer;
                    Replace/ByteFallback/Fuse/Strip decoder; TemplateProcessing <s>
  mistral.json      the same model with Metaspace(prepend_scheme=first, split=false) pre-tokenizer and decoder
golden.json holds, for every fixture and every text of TEST_TEXTS, encode() with and without special tokens
and decode() with and without skip_special_tokens, as `tokenizers` computes them.
"""
import json
import pathlib

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tokenizers"

TRAIN = """\
The quick brown fox jumps over the lazy dog. It's what they'd said: we're here, you've seen it, I'll go, I'm fine.
Numbers: 1234567, 3.14159, 2024-06-01, 42 apples and 7 oranges; version 1.2.3 costs $19.99 (about 20%).
def main(argv):
    for i in range(10):
        if i % 2 == 0:
            print("even", i)
        else:
            return {"key": [1, 2, 3]}
\tint x = 0;\r\n\tx += 1;\r\n
Der schnelle braune Fuchs springt über den faulen Hund. Schöne Grüße aus München, Straße, Mädchen, Bär.
Le café est très chaud, à côté de l'hôtel; élève, garçon, naïve, où, être, déjà, noël, français.
El niño comió piñata en España; ¿dónde está la señora? ¡Qué día!
我们今天去公园散步，天气很好。中文分词是一个有趣的问题。你好，世界！
今日はとても良い天気ですね。東京に行きたいです。ひらがなとカタカナ。
مرحبا بالعالم، كيف حالك اليوم؟ اللغة العربية جميلة.
नमस्ते दुनिया, आप कैसे हैं? हिन्दी भाषा सुंदर है।
안녕하세요 세계, 오늘 날씨가 좋네요. 한국어는 재미있어요.
Привет, мир! Как дела? Съешь же ещё этих мягких французских булок.
Emoji: 😀 🎉 👍 ❤️ 🚀 and more text after them.
"""
# U+0085 (NEL) is White_Space: Oniguruma's \s (HF) matches it, and so must PCRE2's; the merges learned across
# it make the golden ids depend on that.
TRAIN_LINES = [line for line in TRAIN.split("\n") if line] * 3 + ["x \u0085line " * 20]

TEST_TEXTS = [
    "",
    "Hello world",
    "Hello, world! It's a test; we're sure they'd've LIKED it. I'M HERE, You'LL see.",
    "Numbers 1234567 and 3.14 and 0.001, 10,000,000 and 2024-06-01T12:30:00Z.",
    "def f(x):\n\tif x:\n\t\treturn x  # tab\n    else:\n        return None\n",
    "spaces:   three,      six, trailing   ",
    "   leading spaces",
    "line one\r\nline two\r\n\r\nline four\n\n\n",
    "nel: x \u0085line, \u0085line\u0085 \u0085\u0085 line",
    "mixed whitespace \t\u00a0nbsp\u3000ideographic\u2003em\u000bvt\u000cff \u0085nel\u2028ls end",
    "Schöne Grüße aus Köln; café, naïve, déjà vu, Ångström.",
    "decomposed: Scho\u0308ne Gru\u0308\u00dfe, cafe\u0301, A\u030angstro\u0308m, \u1100\u1161\u11a8",
    "我们今天去公园散步，天气很好。龘靐齉爩",
    "今日はとても良い天気ですね。カタカナ、ｶﾀｶﾅ。",
    "مرحبا بالعالم، كيف حالك؟",
    "नमस्ते दुनिया, क्षत्रिय",
    "안녕하세요 세계! 뷁",
    "emoji 😀🎉 👍🏽 family 👨‍👩‍👧‍👦 flag 🇩🇪🇯🇵 heart ❤️ keycap 1️⃣",
    "unseen: ∮ E⋅da = Q, ⠁⠃⠉ ᚠᛇᚻ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ \U0001f9ec",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|><|endoftext|>",
    "<|begin_of_text|>text<|eot_id|> more <|end_of_text|>",
    "<s> a sentence </s><unk>x<s>",
    "special<|im_end|>glued<|eot_id|>glued</s>glued",
    "a",
    " ",
    "\n",
    "don't stop believin' 'til the END'S near'd",
    "x" * 40 + " " + "ab" * 30,
    "The quick brown fox jumps over the lazy dog.",
]


def trained_byte_level(regex, special, ignore_merges):
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    tok.normalizer = normalizers.NFC() if not ignore_merges else None
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=900, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(TRAIN_LINES, trainer)
    if ignore_merges:
        # Llama 3's vocab has words its merges cannot build; ignore_merges takes such a pre-token whole.
        doc = json.loads(tok.to_str())
        for word in ["Ġbelievin", "ĠLIKED"]:
            doc["model"]["vocab"].setdefault(word, len(doc["model"]["vocab"]))
        tok = Tokenizer.from_str(json.dumps(doc))
    tok.add_special_tokens(special)
    return tok


QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def qwen2():
    tok = trained_byte_level(QWEN2_REGEX, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], False)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def llama3():
    special = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
    tok = trained_byte_level(LLAMA3_REGEX, special, True)
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    return tok


def sentencepiece_bpe(metaspace):
    """Vocab <unk> <s> </s>, the 256 <0xNN> byte tokens, then the trained pieces, as Llama 2 and Mistral lay it out."""
    trainer_tok = Tokenizer(models.BPE())
    trainer_tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.BpeTrainer(vocab_size=800, limit_alphabet=160, show_progress=False)
    trainer_tok.train_from_iterator(TRAIN_LINES, trainer)
    trained = json.loads(trainer_tok.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece, _ in sorted(trained["vocab"].items(), key=lambda kv: kv[1]):
        if piece not in vocab:
            vocab[piece] = len(vocab)
    # Llama 2's file has merges as "left right" strings (the byte-level fixtures keep the newer pairs).
    merges = trained["merges"]
    special = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                "special": True} for i, c in enumerate(["<unk>", "<s>", "</s>"])]
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": special,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    if metaspace:
        doc["normalizer"] = None
        doc["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
        doc["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
    return Tokenizer.from_str(json.dumps(doc, ensure_ascii=False))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    fixtures = {"qwen2": qwen2(), "llama3": llama3(), "llama2": sentencepiece_bpe(False),
                "mistral": sentencepiece_bpe(True)}
    golden = {"texts": TEST_TEXTS, "tokenizers": {}}
    for name, tok in fixtures.items():
        path = OUT / f"{name}.json"
        doc = json.loads(tok.to_str(pretty=False))
        if name == "llama2":  # Llama 2's file has merges as "left right" strings; the others keep the newer pairs
            doc["model"]["merges"] = [" ".join(pair) for pair in doc["model"]["merges"]]
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        path.write_text(text, encoding="utf-8")
        tok = Tokenizer.from_file(str(path))  # what the tests read is what loads back
        cases = []
        for t in TEST_TEXTS:
            with_special = tok.encode(t, add_special_tokens=True).ids
            without = tok.encode(t, add_special_tokens=False).ids
            cases.append({"ids": with_special, "ids_no_special": without,
                          "decoded": tok.decode(with_special, skip_special_tokens=False),
                          "decoded_skip_special": tok.decode(with_special, skip_special_tokens=True)})
        golden["tokenizers"][name] = {"file": path.name, "vocab_size": tok.get_vocab_size(with_added_tokens=True),
                                      "cases": cases}
        print(f"{path.name}: {len(text)} bytes, vocab {tok.get_vocab_size(with_added_tokens=True)}")
    (OUT / "golden.json").write_text(json.dumps(golden, ensure_ascii=False, indent=None), encoding="utf-8")


if __name__ == "__main__":
    main()
