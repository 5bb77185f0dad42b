// The other side of the tokenizer checks: token ids from Hugging Face's own `tokenizers` (its Rust
// library through the official Node bindings), @lenml/tokenizers (a fork of transformers.js's
// tokenizers) or gpt-3-encoder, in the format `attention-explorer tokenize --lines` prints (one
// JSON array a line). Used by scripts/check-tokenizers.sh, which installs the packages and sets
// NODE_PATH; not part of the build or the tests.
//
//   node tokenizer_reference.js hf TOKENIZER.json LINES [--no-special]
//   node tokenizer_reference.js hf-expected TOKENIZER.json LINES...   (a fixture: one JSON object
//        a line, {text, ids, ids_no_special, decoded}; `decoded` is HF's decode of ids_no_special)
//   node tokenizer_reference.js lenml TOKENIZER.json CONFIG.json|- LINES [--no-special]
//   node tokenizer_reference.js gpt3 LINES                  (GPT-2; never adds special tokens)
//   node tokenizer_reference.js strings SPECIAL,SPECIAL,... COUNT   (test strings, JSON lines)
//   node tokenizer_reference.js fixture lenml TOKENIZER.json CONFIG.json|- LINES   (a fixture)
//   node tokenizer_reference.js fixture gpt3 LINES
//   node tokenizer_reference.js gpt2-json VOCAB.json MERGES.txt (GPT-2's files as tokenizer.json)
"use strict";
const fs = require("fs");

function readLines(file) {
    return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));
}

function lenmlEncoder(tokenizerFile, configFile) {
    const { TokenizerLoader } = require("@lenml/tokenizers");
    const tokenizer = TokenizerLoader.fromPreTrained({
        tokenizerJSON: JSON.parse(fs.readFileSync(tokenizerFile, "utf8")),
        tokenizerConfig: configFile === "-" ? {} : JSON.parse(fs.readFileSync(configFile, "utf8")),
    });
    return (text, special) => tokenizer.encode(text, { add_special_tokens: special });
}

// Hugging Face's library reads tokenizer.json alone; tokenizer_config.json is transformers' and
// is not consulted (the files here agree with their post-processor).
function hfTokenizer(tokenizerFile) {
    const { Tokenizer } = require("tokenizers");
    return Tokenizer.fromFile(tokenizerFile);
}

async function hfIds(tokenizer, text, special) {
    const encoding = await tokenizer.encode(text, null, { addSpecialTokens: special });
    return Array.from(encoding.getIds());
}

function gpt3Encoder() {
    const { encode } = require("gpt-3-encoder");
    return (text) => encode(text);
}

// A small seeded generator, so that every run checks the same strings.
function generator(seed) {
    let state = seed >>> 0;
    return () => {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        return state / 4294967296;
    };
}

function testStrings(specials, count) {
    const random = generator(15);
    const pick = (list) => list[Math.floor(random() * list.length)];
    const pools = [
        ["Hello", "world", "attention", "is", "all", "you", "need", "The", "quick", "brown", "fox",
         "tokenization", "Transformers", "HELLO", "naïve", "café", "über", "straße", "Ærø"],
        ["I'm", "don't", "WE'LL", "they've", "it's", "She'd", "you're", "O'Neil", "rock'n'roll",
         "'s", "'t", "''"],
        ["0", "7", "42", "123", "2024", "12345", "3.14159", "1,000,000", "-17", "1e-9", "٣٤٥",
         "½", "x²", "१२३", "Ⅻ", "0x1F"],
        ["Привет", "мир", "Γειά", "σου", "こんにちは", "世界", "注意力机制", "안녕하세요", "مرحبا",
         "שלום", "नमस्ते", "สวัสดี", "Tiếng Việt", "ﬁnance", "Ｆｕｌｌｗｉｄｔｈ"],
        ["😀", "🙂🙃", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🚀✨", "🤖", "∑", "→", "★", "©", "€100"],
        [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\u00a0", "\u3000", "\u2003",
         " \n ", "\n\t", "      ", "\u200b", "\u00a0\u00a0"],
        ["def f(x):\n    return x**2", "if (a != b) { return; }", "<div class=\"x\">",
         "a_b_c", "snake_case", "camelCaseName", "foo.bar()", "https_path/to/file.py",
         "#include <vector>", "x += 1;", "// comment", "$HOME", "@user", "#tag", "[1, 2, 3]"],
        ["!", "?!", "...", "—", "–", "«", "»", "“quoted”", "‘single’", "(", ")", ";", "::", "***"],
        specials.length ? specials : ["!"],
    ];
    const separators = ["", " ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u3000", ", ", ". "];
    const strings = [];
    for (let i = 0; i < count; ++i) {
        const parts = 1 + Math.floor(random() * 10);
        let text = random() < 0.15 ? pick([" ", "  ", "\n", "\t"]) : "";
        for (let p = 0; p < parts; ++p) {
            // Special tokens in a quarter of the strings, at most a few per string.
            const pool = random() < 0.08 ? pools[8] : pools[Math.floor(random() * 8)];
            text += pick(pool) + (p + 1 < parts ? pick(separators) : "");
        }
        if (random() < 0.1) text += pick([" ", "  ", "\n", "\n\n", "\t"]);
        strings.push(text);
    }
    return strings;
}

async function main(argv) {
    const mode = argv[0];
    if (mode === "hf") {
        const tokenizer = hfTokenizer(argv[1]);
        const special = !argv.includes("--no-special");
        for (const text of readLines(argv[2]))
            console.log(JSON.stringify(await hfIds(tokenizer, text, special)));
        return;
    }
    if (mode === "hf-expected") {
        const tokenizer = hfTokenizer(argv[1]);
        for (const file of argv.slice(2)) {
            for (const text of readLines(file)) {
                const plain = await hfIds(tokenizer, text, false);
                const decoded = await tokenizer.decode(plain, false);
                console.log(JSON.stringify({ text, ids: await hfIds(tokenizer, text, true),
                                             ids_no_special: plain, decoded }));
            }
        }
        return;
    }
    if (mode === "strings") {
        const specials = argv[1] ? argv[1].split(",") : [];
        for (const s of testStrings(specials, Number(argv[2] || 300))) console.log(JSON.stringify(s));
        return;
    }
    if (mode === "gpt2-json") {
        const vocab = JSON.parse(fs.readFileSync(argv[1], "utf8"));
        const merges = fs.readFileSync(argv[2], "utf8").split("\n")
            .filter((l, i) => l.length > 0 && !(i === 0 && l.startsWith("#version")));
        const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
        console.log(JSON.stringify({
            version: "1.0",
            added_tokens: [{ id: vocab["<|endoftext|>"], content: "<|endoftext|>", single_word: false,
                             lstrip: false, rstrip: false, normalized: false, special: true }],
            normalizer: null, pre_tokenizer: byteLevel, post_processor: byteLevel, decoder: byteLevel,
            model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
                     end_of_word_suffix: "", fuse_unk: false, vocab, merges },
        }));
        return;
    }
    const fixture = mode === "fixture";
    const args = fixture ? argv.slice(1) : argv;
    let encode, linesFile;
    if (args[0] === "lenml") {
        encode = lenmlEncoder(args[1], args[2]);
        linesFile = args[3];
    } else if (args[0] === "gpt3") {
        encode = gpt3Encoder();
        linesFile = args[1];
    } else {
        throw new Error("unknown mode " + args[0]);
    }
    const texts = readLines(linesFile);
    if (fixture) {
        const cases = texts.map((text) => ({
            text,
            ids: Array.from(encode(text, true)),
            ids_no_special: Array.from(encode(text, false)),
        }));
        console.log(JSON.stringify({ generator: args[0] === "gpt3" ? "gpt-3-encoder" : "@lenml/tokenizers",
                                     cases }, null, 1));
        return;
    }
    const special = !argv.includes("--no-special");
    for (const text of texts) console.log(JSON.stringify(Array.from(encode(text, special))));
}

main(process.argv.slice(2)).catch((error) => {
    console.error("tokenizer_reference: " + error.message);
    process.exit(1);
});
