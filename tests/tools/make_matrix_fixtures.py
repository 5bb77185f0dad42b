#!/usr/bin/python3
"""Writes the small .npy and CSV fixtures under tests/data/matrices, once, with NumPy.

  /usr/bin/python3 tests/tools/make_matrix_fixtures.py tests/data/matrices

Every fixture holds the same 3x4 matrix M[r][c] = r - 0.25 * c + 0.5 (exact in float32 too),
in one layout each, so a test can check all of them against one expected matrix.
"""
import os
import sys

import numpy as np

out = sys.argv[1]
m = np.array([[r - 0.25 * c + 0.5 for c in range(4)] for r in range(3)])
for dtype in ("<f4", ">f4", "<f8", ">f8"):
    for order in ("C", "F"):
        name = f"m_{'le' if dtype[0] == '<' else 'be'}_{dtype[1:]}_{order}.npy"
        np.save(os.path.join(out, name), np.asarray(m, dtype=dtype, order=order))
np.save(os.path.join(out, "vector_f8.npy"), m[0].astype("<f8"))
np.save(os.path.join(out, "int64.npy"), np.arange(4, dtype="<i8"))
np.save(os.path.join(out, "cube_f8.npy"), np.zeros((2, 2, 2)))
np.save(os.path.join(out, "nan_f8.npy"), np.array([[1.0, np.nan]]))
with open(os.path.join(out, "m_comma.csv"), "w") as f:
    f.write("\n".join(",".join(repr(float(v)) for v in row) for row in m) + "\n")
with open(os.path.join(out, "m_semicolon_decimal_comma.csv"), "w") as f:
    f.write("\r\n".join(";".join(str(float(v)).replace(".", ",") for v in row) for row in m) + "\r\n")
