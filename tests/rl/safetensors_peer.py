#!/usr/bin/env python3
"""rl/safetensors against the reference implementation (the `safetensors` Python package).

  safetensors_peer.py <path to safetensors_tool>

1. Our writer -> safetensors.numpy.load_file: every tensor (dtype, shape, bytes) and the metadata
   of the tool's known file must come back exactly.
2. safetensors.numpy.save_file -> our reader: files with every supported dtype, scalars, empty and
   multi-dimensional tensors, NaN/inf, with and without metadata, must be read exactly.
3. Our reader must refuse a dtype we do not support (F16) written by the reference, naming it.

Exits 77 (ctest: skipped) when numpy or safetensors cannot be imported.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError as e:
    print(f"SKIP: {e} (pip install safetensors numpy)")
    sys.exit(77)

DTYPE_NAMES = {
    np.dtype("<f4"): "F32",
    np.dtype("<f8"): "F64",
    np.dtype("<i4"): "I32",
    np.dtype("<i8"): "I64",
    np.dtype("u1"): "U8",
    np.dtype("<u4"): "U32",
}

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}")


def known_file():
    """Keep in step with known_file() in safetensors_tool.cpp."""
    tensors = {
        "actor.w0": (np.arange(6, dtype=np.float32) * np.float32(0.5) - np.float32(1.0)).reshape(2, 3),
        "obs_norm.mean": np.array([0.1, -1e300, 3.141592653589793, -0.0], dtype=np.float64),
        "counts": np.array([-1, 0, 2**31 - 1, -(2**31)], dtype=np.int32),
        "global_step": np.array(1 << 40, dtype=np.int64),
        "mask": np.array([0, 1, 255, 7, 9], dtype=np.uint8),
        "rng": np.array([0xDEADBEEF, 0, 4000000000, 1], dtype=np.uint32).reshape(2, 1, 2),
        "empty": np.zeros((0, 4), dtype=np.float32),
    }
    metadata = {"format": "rltrain-peer-test", "iteration": "12345", "note": 'quote " and \u00e9'}
    return tensors, metadata


def same_tensor(name, got, want):
    check(got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}")
    check(got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}")
    check(got.tobytes() == want.tobytes(), f"{name}: bytes differ: {got!r} vs {want!r}")


def ours_to_theirs(tool, workdir):
    path = os.path.join(workdir, "ours.safetensors")
    subprocess.run([tool, "write", path], check=True)
    want, want_metadata = known_file()
    got = load_file(path)
    check(sorted(got) == sorted(want), f"tensor names {sorted(got)} != {sorted(want)}")
    for name in want:
        if name in got:
            same_tensor(name, got[name], want[name])
    with safe_open(path, framework="numpy") as f:
        check(f.metadata() == want_metadata, f"metadata {f.metadata()} != {want_metadata}")
    with open(path, "rb") as f:
        header_len = int.from_bytes(f.read(8), "little")
    check(header_len % 8 == 0, f"header length {header_len} is not a multiple of 8")
    print(f"ours -> safetensors: {len(want)} tensors and metadata match")


def dump(tool, path):
    out = subprocess.run([tool, "dump", path], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def theirs_to_ours(tool, workdir):
    rng = np.random.default_rng(7)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, np.finfo(np.float64).max])
    cases = {
        "with_metadata": (
            {
                "policy.actor.w0": rng.standard_normal((64, 17)).astype(np.float32),
                "policy.actor.b0": rng.standard_normal(64).astype(np.float32),
                "adam.m": rng.standard_normal((3, 4, 5)).astype(np.float64),
                "special_f64": special,
                "special_f32": np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, np.finfo(np.float32).max],
                                        dtype=np.float32),
                "step": np.array(123456789012, dtype=np.int64),
                "ints": rng.integers(-(2**31), 2**31 - 1, size=33, dtype=np.int32),
                "bytes": rng.integers(0, 256, size=11, dtype=np.uint8),
                "words": rng.integers(0, 2**32 - 1, size=(2, 7), dtype=np.uint32),
                "empty": np.zeros((3, 0), dtype=np.int64),
            },
            {"framework": "numpy", "iteration": "7", "unicode": "\u00fc\u00df\u4e2d"},
        ),
        "no_metadata": ({"x": np.arange(5, dtype=np.float32)}, None),
    }
    for case, (tensors, metadata) in cases.items():
        path = os.path.join(workdir, f"theirs_{case}.safetensors")
        save_file(tensors, path, metadata=metadata)
        got = dump(tool, path)
        check(got["metadata"] == (metadata or {}), f"{case}: metadata {got['metadata']} != {metadata}")
        by_name = {t["name"]: t for t in got["tensors"]}
        check(sorted(by_name) == sorted(tensors), f"{case}: names {sorted(by_name)} != {sorted(tensors)}")
        for name, want in tensors.items():
            t = by_name.get(name)
            if t is None:
                continue
            check(t["dtype"] == DTYPE_NAMES[want.dtype], f"{case}/{name}: dtype {t['dtype']} != {want.dtype}")
            check(tuple(t["shape"]) == want.shape, f"{case}/{name}: shape {t['shape']} != {want.shape}")
            check(t["hex"] == want.tobytes().hex(), f"{case}/{name}: bytes differ")
        print(f"safetensors -> ours ({case}): {len(tensors)} tensors match")


def unsupported_dtype(tool, workdir):
    path = os.path.join(workdir, "f16.safetensors")
    save_file({"half": np.ones(3, dtype=np.float16)}, path)
    out = subprocess.run([tool, "dump", path], capture_output=True, text=True)
    check(out.returncode == 1, f"F16 file: exit {out.returncode}, expected 1")
    check(path in out.stderr and '"half"' in out.stderr and "F16" in out.stderr,
          f"F16 file: message does not name file, tensor and dtype: {out.stderr.strip()}")
    print(f"unsupported dtype refused: {out.stderr.strip()}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as workdir:
        ours_to_theirs(tool, workdir)
        theirs_to_ours(tool, workdir)
        unsupported_dtype(tool, workdir)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("safetensors peer: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
