#!/usr/bin/env python3
"""Compares two behaviour snapshots (scripts/behaviour_snapshot.sh).

Every number in every JSON file must satisfy |a - b| / (1 + |b|) <= 1e-14,
every other JSON value must be equal, and every other file (the renders)
must be byte-identical. Prints each difference and exits 1 if there is one.
Usage: compare_snapshots.py NEW_DIR OLD_DIR [--tolerance 1e-14]
"""
import json
import math
import os
import sys


def compare(new, old, path, tolerance, problems):
    if isinstance(old, bool) or old is None or isinstance(old, str):
        if new != old:
            problems.append(f"{path}: {new!r} != {old!r}")
    elif isinstance(old, (int, float)):
        if not isinstance(new, (int, float)) or isinstance(new, bool):
            problems.append(f"{path}: {new!r} is not a number like {old!r}")
        elif math.isnan(old) or math.isinf(old) or math.isnan(new) or math.isinf(new):
            if not (new == old or (math.isnan(old) and math.isnan(new))):
                problems.append(f"{path}: {new!r} != {old!r}")
        elif abs(new - old) / (1 + abs(old)) > tolerance:
            problems.append(f"{path}: {new!r} vs {old!r}")
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            problems.append(f"{path}: list of {len(new) if isinstance(new, list) else '?'}"
                            f" != {len(old)}")
            return
        for i, (a, b) in enumerate(zip(new, old)):
            compare(a, b, f"{path}[{i}]", tolerance, problems)
    elif isinstance(old, dict):
        if not isinstance(new, dict) or set(new) != set(old):
            problems.append(f"{path}: keys differ: {sorted(set(new) ^ set(old))}")
            return
        for key in old:
            compare(new[key], old[key], f"{path}.{key}", tolerance, problems)


def load_json(path):
    """A JSON document, or a list of documents for JSON Lines."""
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    args = sys.argv[1:]
    tolerance = 1e-14
    if "--tolerance" in args:
        i = args.index("--tolerance")
        tolerance = float(args[i + 1])
        del args[i:i + 2]
    new_dir, old_dir = args
    problems = []
    old_files = sorted(os.listdir(old_dir))
    missing = sorted(set(old_files) - set(os.listdir(new_dir)))
    problems += [f"{name}: missing from {new_dir}" for name in missing]
    for name in old_files:
        if name in missing:
            continue
        new_path, old_path = os.path.join(new_dir, name), os.path.join(old_dir, name)
        if name.endswith(".json"):
            compare(load_json(new_path), load_json(old_path), name, tolerance, problems)
        else:
            with open(new_path, "rb") as a, open(old_path, "rb") as b:
                if a.read() != b.read():
                    problems.append(f"{name}: bytes differ")
    for problem in problems[:200]:
        print(problem)
    print(f"{len(old_files)} files compared, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
