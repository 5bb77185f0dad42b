// Writes tests/data/tokenizers/pairs-expected.jsonl: Hugging Face's own tokenizers library (npm
// `tokenizers` 0.23.x) encoding five pairs of texts through each folder given, with and without
// special tokens. Usage: node make_pair_expectations.js FOLDER... > pairs-expected.jsonl
const { Tokenizer } = require('tokenizers');
const dirs = process.argv.slice(2);
const pairs = [["The capital of France is", "Paris is in Europe."], ["Hello world", "héllo  wörld!"], ["a", ""], ["  two  spaces ", "Ünïcödé ﬁ ½ and 日本語"], ["[MASK] sits", "it's <mask> there"]];
(async () => {
for (const d of dirs) {
  const t = Tokenizer.fromFile(d + '/tokenizer.json');
  for (const [a, b] of pairs) {
    const e = await t.encode(a, b);
    const n = await t.encode(a, b, {addSpecialTokens: false});
    console.log(JSON.stringify({folder: d.split('/').pop(), a, b, ids: e.getIds(), types: e.getTypeIds(), ids_no_special: n.getIds(), types_no_special: n.getTypeIds()}));
  }
}
})();
