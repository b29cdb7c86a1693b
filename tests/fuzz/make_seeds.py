#!/usr/bin/env python3
"""Writes the checked-in seed corpora of the fuzz targets (tests/fuzz/<target>/corpus).

Pure Python (no NumPy), deterministic: run it again and `git diff` shows nothing. The files are
tiny on purpose; libFuzzer grows its own corpus from them (tests/fuzz/run.sh keeps that in a
scratch directory, not here).
"""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(shape, values, dtype="<f4", fortran=False, version=1):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (dtype, fortran, dims)
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    out = b"\x93NUMPY" + bytes([version, 0])
    out += struct.pack("<H" if version == 1 else "<I", len(header)) + header.encode("latin1")
    fmt = "<%d%s" % (len(values), "f" if dtype == "<f4" else "d")
    return out + struct.pack(fmt, *values)


def seq(n, scale=0.1):
    return [round(scale * (i + 1) - 0.3, 3) for i in range(n)]


def write(target, name, data):
    folder = os.path.join(HERE, target, "corpus")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("latin1"))


# --- npy: one whole file each
write("npy", "f4-2x3", npy((2, 3), seq(6)))
write("npy", "f8-vector", npy((4,), seq(4), dtype="<f8"))
write("npy", "f4-fortran-2x2", npy((2, 2), [1, 2, 3, 4], fortran=True))
write("npy", "f4-v2-1x2x2", npy((1, 2, 2), seq(4), version=2))
write("npy", "f4-scalar", npy((), [0.5]))
write("npy", "f4-nan-inf", npy((2, 2), [1, math.nan, math.inf, -math.inf]))
write("npy", "f8-overflow", npy((2,), [1e300, -1.0], dtype="<f8"))
write("npy", "f4-truncated", npy((3, 3), seq(9))[:-5])
write("npy", "f4-empty-axis", npy((3, 0), []))

# --- text_matrix: one whole file each
write("text_matrix", "csv", "1,2,3\n4,5,6\n")
write("text_matrix", "comments-spaces", "# x for two tokens\n0.5 0.25 1e-3\n\n-1\t2\t3e2\n")
write("text_matrix", "bom-crlf", "\xef\xbb\xbf1;2\r\n3;4\r\n")
write("text_matrix", "nonfinite", "1e39, 0x1p-3\nnan, -inf\n")
write("text_matrix", "underflow", "1e-320, 1e-40\n")
write("text_matrix", "empty-field", "1,,3\n4,,6\n")
write("text_matrix", "ragged", "1 2 3\n4 5\n")

# --- weights_dir: control byte, then the files split by ATTNFILE (fuzz_weights_dir.cpp)
M = b"ATTNFILE"
SELF, CAUSAL, HEADS, BAHDANAU, LUONG = 0, 1, 2, 3, 4
TORCH, ALLOW = 8, 16


def case(control, files):
    return bytes([control]) + M.join(files)


three = [npy((3, 2), seq(6)), npy((3, 2), seq(6, 0.2)), npy((3, 2), seq(6, 0.05))]
write("weights_dir", "self-attention-math", case(SELF, three))
write("weights_dir", "causal-torch-input",
      case(CAUSAL | TORCH, [npy((2, 3), seq(6)), npy((2, 3), seq(6)), npy((2, 3), seq(6)), npy((4, 3), seq(12))]))
write("weights_dir", "causal-nan-allowed",
      case(CAUSAL | ALLOW, three + [npy((2, 3), [0.1, math.nan, 0.3, 0.4, 0.5, 0.6])]))
heads = [npy((3, 4), seq(12)), npy((3, 4), seq(12)), npy((3, 4), seq(12)), npy((4, 4), seq(16)),
         npy((4,), seq(4)), npy((4,), seq(4)), npy((4,), seq(4)), npy((4,), seq(4))]
write("weights_dir", "heads-bias-input", case(HEADS, heads + [npy((2, 5, 3), seq(30))]))
write("weights_dir", "bahdanau-torch-states",
      case(BAHDANAU | TORCH, [npy((3, 4), seq(12)), npy((3, 5), seq(15)), npy((3,), seq(3)),
                              npy((4, 5), seq(20)), npy((4,), seq(4))]))
write("weights_dir", "luong-torch-states",
      case(LUONG | TORCH, [npy((4, 5), seq(20)), npy((3, 9), seq(27)), npy((1, 3), seq(3)),
                           npy((4, 5), seq(20)), npy((2, 4), seq(8))]))
write("weights_dir", "luong-states-only", case(LUONG, [b"", b"", b"", npy((3, 2), seq(6)), npy((2,), seq(2))]))

for target in ("npy", "text_matrix", "weights_dir"):
    crashes = os.path.join(HERE, target, "crashes")
    os.makedirs(crashes, exist_ok=True)
    open(os.path.join(crashes, ".keep"), "w").close()
