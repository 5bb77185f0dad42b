#!/usr/bin/env python3
"""Builds the corpus of invalid scenes and the exact error the reference raises for each.

  /usr/bin/python3 tests/tools/make_error_cases.py PATH/TO/attention_reference.py > tests/data/errors/cases.json

Each case is a tiny valid base scene (below) with one mutation. The reference's compute() is run
on the scene exactly as it will be read back from the JSON output, and str(SceneError) is recorded.
The script aborts if a case does not raise SceneError, raises a different error than the case
intends (the "expect" prefix), if two cases share a name, or if some fail(...) / raise SceneError
site of the reference is reached by no case (so a new check in the reference needs a new case here).
Needs Debian's python3-torch (run with /usr/bin/python3).
"""
import ast
import copy
import importlib.util
import json
import os
import sys


def load_reference(path):
    spec = importlib.util.spec_from_file_location("attention_reference", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- base scenes (all valid)
HEAD = {"format": "attention-explorer/scene", "version": 1}

# d_model 2, d_proj 4, 3 tokens, separate projections, 2 heads
BASE = {**HEAD, "title": "error-case base", "tokens": ["a", "b", "c"],
        "embeddings": [[0.5, -1.0], [1.5, 0.25], [-0.5, 2.0]],
        "projections": {"mode": "separate",
                        "query": [[1.0, 0.0, 0.5, -1.0], [0.0, 1.0, -0.5, 2.0]],
                        "key": [[0.5, 0.0, 1.0, 0.0], [0.0, 0.5, 0.0, 1.0]],
                        "value": [[1.0, 2.0, 0.0, -1.0], [0.0, 1.0, 1.0, 0.0]]},
        "heads": 2}

# d_model 2, 2 tokens, identity projections
IDENT = {**HEAD, "tokens": ["x", "y"], "embeddings": [[1.0, 0.0], [0.0, 1.0]],
         "projections": {"mode": "identity"}}

# d_model 2, 2 tokens, shared query/key matrix
SHARED = {**HEAD, "tokens": ["x", "y"], "embeddings": [[1.0, 0.5], [-0.5, 1.0]],
          "projections": {"mode": "shared_qk", "query": [[1.0, 0.0], [0.0, 1.0]],
                          "value": [[0.5, 0.0], [0.0, 0.5]]}}

# cross-attention: 2 queries over 3 keys, d_model 2, identity projections
CROSS = {**HEAD, "tokens": ["q0", "q1"], "embeddings": [[1.0, 0.0], [0.0, 1.0]],
         "source": {"tokens": ["k0", "k1", "k2"], "embeddings": [[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]},
         "projections": {"mode": "identity"}}

# everything drawn by init: 3 tokens, d_model 2 (d_proj defaults to d_model)
INIT = {**HEAD, "tokens": ["a", "b", "c"], "init": {"seed": 7, "d_model": 2}}

BASES = {"BASE": BASE, "IDENT": IDENT, "SHARED": SHARED, "CROSS": CROSS, "INIT": INIT}

# a valid learned table for BASE (3 rows, width 2) and a valid output matrix for BASE (4x3)
TABLE3 = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]
OUT43 = [[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


# ---------------------------------------------------------------- mutations
def put(path, value):
    return ("put", path, value)


def drop(path):
    return ("drop", path)


def apply(scene, op):
    keys = op[1].split(".")
    obj = scene
    for k in keys[:-1]:
        obj = obj[k]
    if op[0] == "put":
        obj[keys[-1]] = copy.deepcopy(op[2])
    else:
        del obj[keys[-1]]


CASES = []  # (name, scene, expected message prefix)


def case(name, base, *ops, expect):
    scene = copy.deepcopy(base)
    for op in ops:
        apply(scene, op)
    CASES.append((name, scene, expect))


# ---- the scene as a whole, format and version
case("top-level-not-object", [], expect=": expected an object")
case("top-level-unknown-field", BASE, put("colour", "red"), expect="colour: unknown field")
case("top-level-unknown-field-before-format", BASE, put("colour", "red"), drop("format"),
     expect="colour: unknown field")
case("format-missing", BASE, drop("format"), expect='format: expected "attention-explorer/scene"')
case("format-wrong", BASE, put("format", "attention-explorer/result"), expect="format: expected")
case("format-not-string", BASE, put("format", 1), expect="format: expected")
case("format-checked-before-version", BASE, put("format", "scene"), put("version", 2), expect="format: expected")
case("version-missing", BASE, drop("version"), expect="version: unsupported version")
case("version-2", BASE, put("version", 2), expect="version: unsupported version")
case("version-0", BASE, put("version", 0), expect="version: unsupported version")
case("version-true", BASE, put("version", True), expect="version: unsupported version")
case("version-string", BASE, put("version", "1"), expect="version: unsupported version")
case("version-fraction", BASE, put("version", 1.5), expect="version: unsupported version")
case("version-null", BASE, put("version", None), expect="version: unsupported version")
case("title-number", BASE, put("title", 42), expect="title: expected a string")
case("title-null", BASE, put("title", None), expect="title: expected a string")
case("title-list", BASE, put("title", ["a"]), expect="title: expected a string")
case("view-array", BASE, put("view", []), expect="view: expected an object")
case("view-string", BASE, put("view", "graph"), expect="view: expected an object")
case("view-null", BASE, put("view", None), expect="view: expected an object")

# ---- tokens
case("tokens-missing", BASE, drop("tokens"), expect="tokens: expected a non-empty list of strings")
case("tokens-empty", BASE, put("tokens", []), expect="tokens: expected a non-empty list of strings")
case("tokens-number-element", BASE, put("tokens", ["a", 2, "c"]), expect="tokens: expected a non-empty list")
case("tokens-null-element", BASE, put("tokens", ["a", None, "c"]), expect="tokens: expected a non-empty list")
case("tokens-string", BASE, put("tokens", "abc"), expect="tokens: expected a non-empty list of strings")
case("tokens-object", BASE, put("tokens", {"0": "a"}), expect="tokens: expected a non-empty list of strings")

# ---- embeddings
case("embeddings-missing", BASE, drop("embeddings"), expect="embeddings: required (or init.d_model)")
case("embeddings-null", BASE, put("embeddings", None), expect="embeddings: expected a non-empty matrix")
case("embeddings-empty", BASE, put("embeddings", []), expect="embeddings: expected a non-empty matrix")
case("embeddings-flat-list", BASE, put("embeddings", [1.0, 2.0, 3.0]), expect="embeddings: expected a non-empty matrix")
case("embeddings-string", BASE, put("embeddings", "x"), expect="embeddings: expected a non-empty matrix")
case("embeddings-one-row-not-list", BASE, put("embeddings", [[0.5, -1.0], 3.0, [-0.5, 2.0]]),
     expect="embeddings: expected a non-empty matrix")
case("embeddings-empty-rows", BASE, put("embeddings", [[], [], []]), expect="embeddings: rows must not be empty")
case("embeddings-ragged-row-short", BASE, put("embeddings", [[0.5, -1.0], [1.5], [-0.5, 2.0]]),
     expect="embeddings[1]: expected 2 values, got 1")
case("embeddings-ragged-row-long", BASE, put("embeddings", [[0.5, -1.0], [1.5, 0.25], [-0.5, 2.0, 3.0]]),
     expect="embeddings[2]: expected 2 values, got 3")
case("embeddings-later-row-empty", BASE, put("embeddings", [[0.5, -1.0], [], [-0.5, 2.0]]),
     expect="embeddings[1]: expected 2 values, got 0")
case("embeddings-too-few-rows", BASE, put("embeddings", [[0.5, -1.0], [1.5, 0.25]]),
     expect="embeddings: expected 3x2, got 2x2")
case("embeddings-too-many-rows", BASE, put("embeddings", [[0.5, -1.0], [1.5, 0.25], [-0.5, 2.0], [1.0, 1.0]]),
     expect="embeddings: expected 3x2, got 4x2")
case("embeddings-string-element", BASE, put("embeddings", [[0.5, -1.0], ["1.5", 0.25], [-0.5, 2.0]]),
     expect="embeddings[1][0]: expected a finite number")
case("embeddings-bool-element", BASE, put("embeddings", [[0.5, -1.0], [1.5, 0.25], [-0.5, True]]),
     expect="embeddings[2][1]: expected a finite number")
case("embeddings-null-element", BASE, put("embeddings", [[None, -1.0], [1.5, 0.25], [-0.5, 2.0]]),
     expect="embeddings[0][0]: expected a finite number")
case("embeddings-element-checked-before-shape", BASE, put("embeddings", [[0.5, -1.0], [1.5, "x"]]),
     expect="embeddings[1][1]: expected a finite number")

# ---- source (cross-attention)
case("source-not-object", CROSS, put("source", []), expect="source: expected an object")
case("source-string", CROSS, put("source", "k0 k1 k2"), expect="source: expected an object")
case("source-unknown-field", CROSS, put("source.mask", [1, 1, 1]), expect="source.mask: unknown field")
case("source-tokens-missing", CROSS, drop("source.tokens"), expect="source.tokens: expected a non-empty list")
case("source-tokens-empty", CROSS, put("source.tokens", []), expect="source.tokens: expected a non-empty list")
case("source-tokens-number-element", CROSS, put("source.tokens", ["k0", 1, "k2"]),
     expect="source.tokens: expected a non-empty list")
case("source-embeddings-missing", CROSS, drop("source.embeddings"), expect="source.embeddings: required")
case("source-embeddings-missing-init-with-explicit-embeddings", BASE, drop("projections"),
     put("init", {"seed": 1}), put("source", {"tokens": ["k0", "k1"]}), expect="source.embeddings: required")
case("source-embeddings-wrong-width", CROSS,
     put("source.embeddings", [[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
     expect="source.embeddings: expected width 2 (d_model of embeddings), got 3")
case("source-embeddings-wrong-width-init", INIT, put("source", {"tokens": ["k0"], "embeddings": [[1.0]]}),
     expect="source.embeddings: expected width 2 (d_model of embeddings), got 1")
case("source-embeddings-wrong-rows", CROSS, put("source.embeddings", [[1.0, 1.0], [0.0, 1.0]]),
     expect="source.embeddings: expected 3x2, got 2x2")
case("source-embeddings-ragged", CROSS, put("source.embeddings", [[1.0, 1.0], [0.0, 1.0], [1.0, 0.0, 2.0]]),
     expect="source.embeddings[2]: expected 2 values, got 3")
case("source-embeddings-empty", CROSS, put("source.embeddings", []),
     expect="source.embeddings: expected a non-empty matrix")
case("source-embeddings-string-element", CROSS, put("source.embeddings", [[1.0, 1.0], [0.0, "1"], [1.0, 0.0]]),
     expect="source.embeddings[1][1]: expected a finite number")

# ---- positional encodings
case("positional-not-object", BASE, put("positional", "sinusoidal"), expect="positional: expected an object")
case("positional-unknown-field", BASE, put("positional", {"kind": "sinusoidal", "scale": 2}),
     expect="positional.scale: unknown field")
case("positional-kind-missing", BASE, put("positional", {}), expect="positional.kind: expected sinusoidal or learned")
case("positional-kind-bad", BASE, put("positional", {"kind": "rotary"}),
     expect="positional.kind: expected sinusoidal or learned")
case("positional-base-one", BASE, put("positional", {"kind": "sinusoidal", "base": 1}),
     expect="positional.base: must be greater than 1")
case("positional-base-fraction-below-one", BASE, put("positional", {"kind": "sinusoidal", "base": 0.5}),
     expect="positional.base: must be greater than 1")
case("positional-base-negative", BASE, put("positional", {"kind": "sinusoidal", "base": -10000}),
     expect="positional.base: must be greater than 1")
case("positional-base-string", BASE, put("positional", {"kind": "sinusoidal", "base": "10000"}),
     expect="positional.base: expected a finite number")
case("positional-table-with-sinusoidal", BASE, put("positional", {"kind": "sinusoidal", "table": TABLE3}),
     expect="positional.table: only with kind learned")
case("positional-base-with-learned", BASE, put("positional", {"kind": "learned", "base": 10000, "table": TABLE3}),
     expect="positional.base: only with kind sinusoidal")
case("positional-table-missing", BASE, put("positional", {"kind": "learned"}),
     expect="positional.table: expected a non-empty matrix")
case("positional-table-too-short", BASE, put("positional", {"kind": "learned", "table": TABLE3[:2]}),
     expect="positional.table: needs at least 3 rows, got 2")
case("positional-table-too-short-for-source", CROSS,
     put("positional", {"kind": "learned", "table": [[0.1, 0.2], [0.3, 0.4]]}),
     expect="positional.table: needs at least 3 rows, got 2")
case("positional-table-wrong-width", BASE,
     put("positional", {"kind": "learned", "table": [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]}),
     expect="positional.table: expected 3x2, got 3x3")
case("positional-table-ragged", BASE,
     put("positional", {"kind": "learned", "table": [[0.1, 0.2], [0.3], [0.5, 0.6]]}),
     expect="positional.table[1]: expected 2 values, got 1")
case("positional-table-bool-element", BASE,
     put("positional", {"kind": "learned", "table": [[0.1, 0.2], [0.3, 0.4], [0.5, False]]}),
     expect="positional.table[2][1]: expected a finite number")

# ---- layer norm
case("norm-not-object", BASE, put("norm", True), expect="norm: expected an object")
case("norm-unknown-field", BASE, put("norm", {"kind": "layernorm", "gain": [1, 1]}),
     expect="norm.gain: unknown field")
case("norm-kind-missing", BASE, put("norm", {}), expect="norm.kind: expected layernorm")
case("norm-kind-bad", BASE, put("norm", {"kind": "rmsnorm"}), expect="norm.kind: expected layernorm")
case("norm-eps-zero", BASE, put("norm", {"kind": "layernorm", "eps": 0}), expect="norm.eps: must be positive")
case("norm-eps-negative", BASE, put("norm", {"kind": "layernorm", "eps": -1e-5}), expect="norm.eps: must be positive")
case("norm-eps-string", BASE, put("norm", {"kind": "layernorm", "eps": "1e-5"}),
     expect="norm.eps: expected a finite number")
case("norm-weight-wrong-length", BASE, put("norm", {"kind": "layernorm", "weight": [1.0]}),
     expect="norm.weight: expected 2 values, got 1")
case("norm-weight-not-list", BASE, put("norm", {"kind": "layernorm", "weight": 1.0}),
     expect="norm.weight: expected a list of numbers")
case("norm-weight-string-element", BASE, put("norm", {"kind": "layernorm", "weight": [1.0, "1"]}),
     expect="norm.weight[1]: expected a finite number")
case("norm-bias-wrong-length", BASE, put("norm", {"kind": "layernorm", "bias": [0.0, 0.0, 0.0]}),
     expect="norm.bias: expected 2 values, got 3")
case("norm-bias-null-element", BASE, put("norm", {"kind": "layernorm", "bias": [None, 0.0]}),
     expect="norm.bias[0]: expected a finite number")

# ---- explicit projections
case("projections-missing", BASE, drop("projections"), expect="projections: required (or init)")
case("projections-not-object", BASE, put("projections", []), expect="projections: expected an object")
case("projections-null", BASE, put("projections", None), expect="projections: expected an object")
case("projections-unknown-field", BASE, put("projections.gate", [[1.0]]), expect="projections.gate: unknown field")
case("projections-mode-bad", BASE, put("projections.mode", "tied"),
     expect="projections.mode: expected separate, shared_qk or identity")
case("projections-mode-null", BASE, put("projections.mode", None),
     expect="projections.mode: expected separate, shared_qk or identity")
case("projections-bias-not-object", BASE, put("projections.bias", [0.0, 0.0]),
     expect="projections.bias: expected an object")
case("projections-bias-unknown-field", BASE, put("projections.bias", {"gate": [0.0, 0.0, 0.0, 0.0]}),
     expect="projections.bias.gate: unknown field")
case("identity-with-query", IDENT, put("projections.query", [[1.0, 0.0], [0.0, 1.0]]),
     expect="projections.query: not allowed with mode identity")
case("identity-with-key", IDENT, put("projections.key", [[1.0, 0.0], [0.0, 1.0]]),
     expect="projections.key: not allowed with mode identity")
case("identity-with-value", IDENT, put("projections.value", [[1.0, 0.0], [0.0, 1.0]]),
     expect="projections.value: not allowed with mode identity")
case("identity-with-bias-query", IDENT, put("projections.bias", {"query": [0.0, 0.0]}),
     expect="projections.bias.query: not allowed with mode identity")
case("identity-with-bias-key", IDENT, put("projections.bias", {"key": [0.0, 0.0]}),
     expect="projections.bias.key: not allowed with mode identity")
case("identity-with-bias-value", IDENT, put("projections.bias", {"value": [0.0, 0.0]}),
     expect="projections.bias.value: not allowed with mode identity")
case("separate-query-missing", BASE, drop("projections.query"), expect="projections.query: required")
case("separate-key-missing", BASE, drop("projections.key"), expect="projections.key: required")
case("separate-value-missing", BASE, drop("projections.value"), expect="projections.value: required")
case("separate-value-reported-before-key", BASE, drop("projections.key"), drop("projections.value"),
     expect="projections.value: required")
case("mode-defaults-to-separate", BASE, drop("projections.mode"), drop("projections.key"),
     expect="projections.key: required")
case("shared-qk-with-key", SHARED, put("projections.key", [[1.0, 0.0], [0.0, 1.0]]),
     expect="projections.key: not allowed with mode shared_qk (keys use the query matrix)")
case("shared-qk-with-bias-key", SHARED, put("projections.bias", {"key": [0.0, 0.0]}),
     expect="projections.bias.key: not allowed with mode shared_qk")
case("shared-qk-query-missing", SHARED, drop("projections.query"), expect="projections.query: required")
case("shared-qk-value-missing", SHARED, drop("projections.value"), expect="projections.value: required")
case("query-wrong-rows", BASE, put("projections.query", [[1.0, 0.0, 0.0, 0.0]] * 3),
     expect="projections.query: expected 2x4, got 3x4")
case("query-ragged", BASE, put("projections.query", [[1.0, 0.0, 0.5, -1.0], [0.0, 1.0, -0.5]]),
     expect="projections.query[1]: expected 4 values, got 3")
case("query-empty-rows", BASE, put("projections.query", [[], []]), expect="projections.query: rows must not be empty")
case("query-not-matrix", BASE, put("projections.query", [1.0, 0.0]),
     expect="projections.query: expected a non-empty matrix")
case("query-string-element", BASE, put("projections.query", [[1.0, 0.0, 0.5, -1.0], [0.0, "1", -0.5, 2.0]]),
     expect="projections.query[1][1]: expected a finite number")
case("key-wrong-cols", BASE, put("projections.key", [[0.5, 0.0, 1.0], [0.0, 0.5, 0.0]]),
     expect="projections.key: expected 2x4, got 2x3")
case("key-wrong-rows", BASE, put("projections.key", [[0.5, 0.0, 1.0, 0.0]]),
     expect="projections.key: expected 2x4, got 1x4")
case("value-wrong-rows", BASE, put("projections.value", [[1.0, 2.0, 0.0, -1.0]] * 3),
     expect="projections.value: expected 2x4, got 3x4")
case("value-wrong-cols", BASE, put("projections.value", [[1.0, 2.0], [0.0, 1.0]]),
     expect="projections.value: expected 2x4, got 2x2")
case("shared-qk-value-wrong-cols", SHARED, put("projections.value", [[0.5, 0.0, 1.0], [0.0, 0.5, 1.0]]),
     expect="projections.value: expected 2x2, got 2x3")
case("output-wrong-rows", BASE, put("projections.output", [[1.0, 0.0], [0.0, 1.0]]),
     expect="projections.output: expected 4x2, got 2x2")
case("output-empty", BASE, put("projections.output", []), expect="projections.output: expected a non-empty matrix")
case("identity-output-wrong-rows", IDENT, put("projections.output", [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
     expect="projections.output: expected 2x2, got 3x2")
case("bias-query-wrong-length", BASE, put("projections.bias", {"query": [0.0, 0.0]}),
     expect="projections.bias.query: expected 4 values, got 2")
case("bias-key-wrong-length", BASE, put("projections.bias", {"key": [0.0, 0.0, 0.0, 0.0, 0.0]}),
     expect="projections.bias.key: expected 4 values, got 5")
case("bias-value-not-list", BASE, put("projections.bias", {"value": 0.0}),
     expect="projections.bias.value: expected a list of numbers")
case("bias-value-bool-element", BASE, put("projections.bias", {"value": [0.0, False, 0.0, 0.0]}),
     expect="projections.bias.value[1]: expected a finite number")
case("shared-qk-bias-query-wrong-length", SHARED, put("projections.bias", {"query": [0.0]}),
     expect="projections.bias.query: expected 2 values, got 1")
case("bias-output-wrong-length", BASE, put("projections.output", OUT43),
     put("projections.bias", {"output": [0.0, 0.0, 0.0, 0.0]}),
     expect="projections.bias.output: expected 3 values, got 4")
case("bias-output-without-output", BASE, put("projections.bias", {"output": [0.0, 0.0]}),
     expect="projections.bias.output: needs projections.output")
case("identity-bias-output-without-output", IDENT, put("projections.bias", {"output": [0.0, 0.0]}),
     expect="projections.bias.output: needs projections.output")

# ---- init
case("init-not-object", INIT, put("init", 7), expect="init: expected an object")
case("init-null", INIT, put("init", None), expect="init: expected an object")
case("init-unknown-field", INIT, put("init.scale", 0.02), expect="init.scale: unknown field")
case("init-seed-missing", INIT, drop("init.seed"), expect="init.seed: required")
case("init-seed-negative", INIT, put("init.seed", -1), expect="init.seed: must be at least 0")
case("init-seed-string", INIT, put("init.seed", "7"), expect="init.seed: expected an integer")
case("init-seed-fraction", INIT, put("init.seed", 1.5), expect="init.seed: expected an integer")
case("init-seed-bool", INIT, put("init.seed", True), expect="init.seed: expected an integer")
case("init-distribution-bad", INIT, put("init.distribution", "gaussian"),
     expect="init.distribution: expected normal, uniform or integers")
case("init-std-zero", INIT, put("init.std", 0), expect="init.std: must be positive")
case("init-std-negative", INIT, put("init.std", -0.5), expect="init.std: must be positive")
case("init-std-string", INIT, put("init.std", "0.02"), expect="init.std: expected a finite number")
case("init-std-zero-with-uniform", INIT, put("init.distribution", "uniform"), put("init.std", 0),
     expect="init.std: must be positive")
case("init-high-equal-low-uniform", INIT, put("init.distribution", "uniform"), put("init.low", 1),
     put("init.high", 1), expect="init.high: must be greater than init.low")
case("init-high-below-default-low", INIT, put("init.high", -2.0), expect="init.high: must be greater than init.low")
case("init-low-above-default-high-uniform", INIT, put("init.distribution", "uniform"), put("init.low", 2.0),
     expect="init.high: must be greater than init.low")
case("init-high-below-low-integers", INIT, put("init.distribution", "integers"), put("init.low", 3),
     put("init.high", 0), expect="init.high: must be greater than init.low")
case("init-high-checked-before-std", INIT, put("init.std", 0), put("init.high", -5),
     expect="init.high: must be greater than init.low")
case("init-low-fraction-integers", INIT, put("init.distribution", "integers"), put("init.low", 0.5),
     expect="init.low: expected an integer")
case("init-high-fraction-integers", INIT, put("init.distribution", "integers"), put("init.high", 2.5),
     expect="init.high: expected an integer")
case("init-low-string-uniform", INIT, put("init.distribution", "uniform"), put("init.low", "-1"),
     expect="init.low: expected a finite number")
case("init-high-bool-normal", INIT, put("init.high", True), expect="init.high: expected a finite number")
case("init-d-model-zero", INIT, put("init.d_model", 0), expect="init.d_model: must be at least 1")
case("init-d-model-fraction", INIT, put("init.d_model", 2.5), expect="init.d_model: expected an integer")
case("init-d-model-bool", INIT, put("init.d_model", True), expect="init.d_model: expected an integer")
case("init-d-model-string", INIT, put("init.d_model", "2"), expect="init.d_model: expected an integer")
case("init-d-proj-zero", INIT, put("init.d_proj", 0), expect="init.d_proj: must be at least 1")
case("init-d-proj-negative", INIT, put("init.d_proj", -4), expect="init.d_proj: must be at least 1")
case("init-d-proj-string", INIT, put("init.d_proj", "4"), expect="init.d_proj: expected an integer")
case("init-mode-identity", INIT, put("init.mode", "identity"), expect="init.mode: expected separate or shared_qk")
case("init-mode-bad", INIT, put("init.mode", "tied"), expect="init.mode: expected separate or shared_qk")
case("init-output-not-bool", INIT, put("init.output", 1), expect="init.output: expected true or false")
case("init-bias-not-bool", INIT, put("init.bias", "yes"), expect="init.bias: expected true or false")
case("init-with-projections", INIT, put("projections", {"mode": "identity"}),
     expect="init: give either projections or init, not both")
case("init-errors-before-projections-conflict", INIT, put("projections", {"mode": "identity"}),
     put("init.seed", -1), expect="init.seed: must be at least 0")
case("init-d-model-with-embeddings", INIT, put("embeddings", [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
     expect="init.d_model: only allowed when embeddings are absent")
case("init-without-d-model-or-embeddings", INIT, drop("init.d_model"), expect="embeddings: required (or init.d_model)")
case("init-d-model-too-large", INIT, put("init.d_model", 100000000),
     expect="init.d_model: too large: 3x100000000 would need")
case("init-d-model-just-too-large", INIT, put("tokens", ["a"]), put("init.d_model", (1 << 28) + 1),
     expect="init.d_model: too large: 1x268435457 would need")
case("init-d-proj-too-large", INIT, put("init.d_proj", 1 << 28),
     expect="init.d_proj: too large: 2x268435456 would need")
case("init-d-proj-too-large-with-embeddings", BASE, drop("projections"),
     put("init", {"seed": 3, "d_proj": 200000000}), expect="init.d_proj: too large: 2x200000000 would need")

# ---- heads
case("heads-zero", BASE, put("heads", 0), expect="heads: must be at least 1")
case("heads-negative", BASE, put("heads", -2), expect="heads: must be at least 1")
case("heads-string", BASE, put("heads", "2"), expect="heads: expected an integer")
case("heads-bool", BASE, put("heads", True), expect="heads: expected an integer")
case("heads-fraction", BASE, put("heads", 1.5), expect="heads: expected an integer")
case("heads-null", BASE, put("heads", None), expect="heads: expected an integer")
case("heads-not-dividing", BASE, put("heads", 3), expect="heads: 3 does not divide the projection width 4")
case("heads-larger-than-width", BASE, put("heads", 8), expect="heads: 8 does not divide the projection width 4")
case("heads-not-dividing-identity", IDENT, put("heads", 3), expect="heads: 3 does not divide the projection width 2")
case("heads-not-dividing-init-d-proj", INIT, put("init.d_proj", 6), put("heads", 4),
     expect="heads: 4 does not divide the projection width 6")

# ---- mask
case("mask-not-object", BASE, put("mask", []), expect="mask: expected an object")
case("mask-null", BASE, put("mask", None), expect="mask: expected an object")
case("mask-unknown-field", BASE, put("mask", {"causal": True, "future": False}), expect="mask.future: unknown field")
case("mask-causal-number", BASE, put("mask", {"causal": 1}), expect="mask.causal: expected true or false")
case("mask-causal-string", BASE, put("mask", {"causal": "true"}), expect="mask.causal: expected true or false")
case("mask-causal-null", BASE, put("mask", {"causal": None}), expect="mask.causal: expected true or false")
case("mask-window-negative", BASE, put("mask", {"window": -1}), expect="mask.window: must be at least 0")
case("mask-window-fraction", BASE, put("mask", {"window": 1.5}), expect="mask.window: expected an integer")
case("mask-window-bool", BASE, put("mask", {"window": True}), expect="mask.window: expected an integer")
case("mask-window-string", BASE, put("mask", {"window": "1"}), expect="mask.window: expected an integer")
case("mask-padding-too-short", BASE, put("mask", {"padding": [False, True]}),
     expect="mask.padding: expected 3 values (one per key), got 2")
case("mask-padding-empty", BASE, put("mask", {"padding": []}),
     expect="mask.padding: expected 3 values (one per key), got 0")
case("mask-padding-not-list", BASE, put("mask", {"padding": True}),
     expect="mask.padding: expected 3 values (one per key), got none")
case("mask-padding-one-per-query-in-cross", CROSS, put("mask", {"padding": [False, False]}),
     expect="mask.padding: expected 3 values (one per key), got 2")
case("mask-padding-number-element", BASE, put("mask", {"padding": [False, 1, False]}),
     expect="mask.padding[1]: expected true or false")
case("mask-padding-null-element", BASE, put("mask", {"padding": [False, False, None]}),
     expect="mask.padding[2]: expected true or false")
case("mask-allowed-wrong-rows", BASE, put("mask", {"allowed": [[1, 1, 1], [1, 1, 1]]}),
     expect="mask.allowed: expected 3x3 (queries x keys)")
case("mask-allowed-ragged", BASE, put("mask", {"allowed": [[1, 1, 1], [1, 1], [1, 1, 1]]}),
     expect="mask.allowed: expected 3x3 (queries x keys)")
case("mask-allowed-not-list", BASE, put("mask", {"allowed": 1}), expect="mask.allowed: expected 3x3 (queries x keys)")
case("mask-allowed-flat", BASE, put("mask", {"allowed": [1, 1, 1]}), expect="mask.allowed: expected 3x3 (queries x keys)")
case("mask-allowed-transposed-in-cross", CROSS, put("mask", {"allowed": [[1, 1], [1, 1], [1, 1]]}),
     expect="mask.allowed: expected 2x3 (queries x keys)")
case("mask-allowed-element-2", BASE, put("mask", {"allowed": [[1, 0, 0], [1, 1, 2], [1, 1, 1]]}),
     expect="mask.allowed[1][2]: expected 0 or 1")
case("mask-allowed-element-true", BASE, put("mask", {"allowed": [[1, 0, 0], [1, 1, 0], [True, 1, 1]]}),
     expect="mask.allowed[2][0]: expected 0 or 1")
case("mask-allowed-element-false", BASE, put("mask", {"allowed": [[1, False, 0], [1, 1, 0], [1, 1, 1]]}),
     expect="mask.allowed[0][1]: expected 0 or 1")
case("mask-allowed-element-string", BASE, put("mask", {"allowed": [[1, 0, 0], [1, "1", 0], [1, 1, 1]]}),
     expect="mask.allowed[1][1]: expected 0 or 1")
case("mask-allowed-element-fraction", BASE, put("mask", {"allowed": [[1, 0, 0], [1, 1, 0], [1, 0.5, 1]]}),
     expect="mask.allowed[2][1]: expected 0 or 1")
case("mask-allowed-element-negative", BASE, put("mask", {"allowed": [[-1, 0, 0], [1, 1, 0], [1, 1, 1]]}),
     expect="mask.allowed[0][0]: expected 0 or 1")
case("mask-causal-checked-before-padding", BASE, put("mask", {"causal": "yes", "padding": []}),
     expect="mask.causal: expected true or false")

# ---- mask_fill
case("mask-fill-string-inf", BASE, put("mask_fill", "inf"), expect='mask_fill: expected "-inf" or a finite number')
case("mask-fill-string-minus-infinity", BASE, put("mask_fill", "-Infinity"),
     expect='mask_fill: expected "-inf" or a finite number')
case("mask-fill-string-number", BASE, put("mask_fill", "-1e9"),
     expect='mask_fill: expected "-inf" or a finite number')
case("mask-fill-bool", BASE, put("mask_fill", False), expect="mask_fill: expected a finite number")
case("mask-fill-null", BASE, put("mask_fill", None), expect="mask_fill: expected a finite number")
case("mask-fill-list", BASE, put("mask_fill", [-1e9]), expect="mask_fill: expected a finite number")

# ---- scale
case("scale-not-object", BASE, put("scale", "sqrt_dk"), expect="scale: expected an object")
case("scale-null", BASE, put("scale", None), expect="scale: expected an object")
case("scale-unknown-field", BASE, put("scale", {"kind": "sqrt_dk", "temperature": 2}),
     expect="scale.temperature: unknown field")
case("scale-kind-bad", BASE, put("scale", {"kind": "sqrt"}),
     expect="scale.kind: expected sqrt_dk, sqrt_dmodel, none or divisor")
case("scale-kind-null", BASE, put("scale", {"kind": None}),
     expect="scale.kind: expected sqrt_dk, sqrt_dmodel, none or divisor")
case("scale-divisor-missing", BASE, put("scale", {"kind": "divisor"}), expect="scale.divisor: required with kind divisor")
case("scale-divisor-zero", BASE, put("scale", {"kind": "divisor", "divisor": 0}), expect="scale.divisor: must be positive")
case("scale-divisor-negative", BASE, put("scale", {"kind": "divisor", "divisor": -2.0}),
     expect="scale.divisor: must be positive")
case("scale-divisor-string", BASE, put("scale", {"kind": "divisor", "divisor": "2"}),
     expect="scale.divisor: expected a finite number")
case("scale-divisor-bool", BASE, put("scale", {"kind": "divisor", "divisor": True}),
     expect="scale.divisor: expected a finite number")
case("scale-divisor-with-sqrt-dk", BASE, put("scale", {"kind": "sqrt_dk", "divisor": 2.0}),
     expect="scale.divisor: only with kind divisor")
case("scale-divisor-with-none", BASE, put("scale", {"kind": "none", "divisor": 1.0}),
     expect="scale.divisor: only with kind divisor")
case("scale-divisor-without-kind", BASE, put("scale", {"divisor": 2.0}), expect="scale.divisor: only with kind divisor")

# ---- overflow in compute()
OVERFLOW = "scores: overflow (values too large to represent)"
case("overflow-identity-huge-embeddings", IDENT, put("embeddings", [[1e200, 0.0], [0.0, 1e200]]),
     put("scale", {"kind": "none"}), expect=OVERFLOW)
case("overflow-with-default-scale", IDENT, put("embeddings", [[1e200, 1e200], [1.0, 1.0]]), expect=OVERFLOW)
case("overflow-only-after-scaling", IDENT, put("embeddings", [[1e60, 0.0], [0.0, 1.0]]),
     put("scale", {"kind": "divisor", "divisor": 1e-200}), expect=OVERFLOW)
case("overflow-in-masked-position", IDENT, put("embeddings", [[1e200, 0.0], [0.0, 1.0]]),
     put("scale", {"kind": "none"}), put("mask", {"allowed": [[0, 1], [1, 1]]}), expect=OVERFLOW)
case("overflow-in-second-head", IDENT, put("embeddings", [[1.0, 1e200], [1.0, 0.0]]), put("heads", 2),
     put("scale", {"kind": "none"}), expect=OVERFLOW)
case("overflow-negative-scores", IDENT, put("embeddings", [[1e200, 0.0], [-1e200, 0.0]]),
     put("scale", {"kind": "none"}), expect=OVERFLOW)
case("overflow-cross-attention", CROSS,
     put("source.embeddings", [[1e200, 0.0], [0.0, 1.0], [1.0, 0.0]]), put("embeddings", [[1e200, 0.0], [0.0, 1.0]]),
     expect=OVERFLOW)
case("overflow-init-huge-uniform", INIT, put("init.distribution", "uniform"), put("init.low", -1e200),
     put("init.high", 1e200), expect=OVERFLOW)


# ---------------------------------------------------------------- coverage of the reference's error sites
def error_sites(ref_path):
    """Line numbers of every fail(...) call and every `raise SceneError` outside fail() itself."""
    tree = ast.parse(open(ref_path).read(), ref_path)
    sites = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or fn.name == "fail":
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "fail":
                sites.add(node.lineno)
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "SceneError"):
                sites.add(node.lineno)
    return sites


def raising_site(exc, ref_path):
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == ref_path:
            frames.append((tb.tb_frame.f_code.co_name, tb.tb_lineno))
        tb = tb.tb_next
    if frames and frames[-1][0] == "fail":
        frames.pop()
    return frames[-1][1] if frames else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ref_path = os.path.realpath(sys.argv[1])
    ref = load_reference(ref_path)

    for name, base in BASES.items():
        try:
            ref.compute(json.loads(json.dumps(base, allow_nan=False)))
        except Exception as e:  # noqa: BLE001
            sys.exit(f"base scene {name} is not valid: {e!r}")

    names = [c[0] for c in CASES]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        sys.exit(f"duplicate case names: {', '.join(dup)}")

    out, covered, problems = [], set(), []
    for name, scene, expect in CASES:
        # run on the scene exactly as a reader of the output will see it
        scene = json.loads(json.dumps(scene, allow_nan=False))
        try:
            ref.compute(copy.deepcopy(scene))
        except ref.SceneError as e:
            msg = str(e)
            covered.add(raising_site(e, ref_path))
        except Exception as e:  # noqa: BLE001
            problems.append(f"{name}: raised {e!r} instead of SceneError")
            continue
        else:
            problems.append(f"{name}: accepted by the reference")
            continue
        if not msg.startswith(expect):
            problems.append(f"{name}: expected an error starting {expect!r}, got {msg!r}")
        out.append({"name": name, "scene": scene, "error": msg})

    missed = sorted(error_sites(ref_path) - covered)
    if missed:
        problems.append("no case reaches the error raised at reference line(s) " + ", ".join(map(str, missed)))
    if problems:
        sys.exit("make_error_cases: aborting\n  " + "\n  ".join(problems))

    json.dump(out, sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")
    print(f"{len(out)} cases, {len({c['error'] for c in out})} distinct messages, "
          f"{len(covered)} error sites covered", file=sys.stderr)


if __name__ == "__main__":
    main()
