#!/usr/bin/env python3
"""Checks a trained scene against its task, from the files alone.

    check_training.py TASK TRAINED.json RESULT.json

RESULT.json is `attention-explorer export TRAINED.json -o RESULT.json`. The target keys come from
the scene's tokens (previous-token: i-1 for i >= 1; first-token: 0; match: the first position with
the same token); the weights are the engine's. Prints the best head's mean weight on the targets
and exits 0 if it is at least 0.9, 1 otherwise.
"""
import json
import sys

task, scene_file, result_file = sys.argv[1:4]
tokens = json.load(open(scene_file))["tokens"]
heads = json.load(open(result_file))["heads"]
targets = {
    "previous-token": lambda i: i - 1,
    "first-token": lambda i: 0,
    "match": lambda i: tokens.index(tokens[i]),
}[task]
rows = [i for i in range(len(tokens)) if targets(i) >= 0]
means = [sum(h["weights"][i][targets(i)] for i in rows) / len(rows) for h in heads]
best = max(range(len(means)), key=lambda h: means[h])
print(f"{task}: head {best} mean target weight {means[best]:.4f}")
sys.exit(0 if means[best] >= 0.9 else 1)
