"""libgotensor.so through ctypes, in a separate process (one Go runtime per
process: this one already runs the gopy extension's)."""

import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.environ.get("GOTENSOR_CSHARED_LIB") or os.path.join(HERE, "..", "..", "build", "cshared", "libgotensor.so")

SCRIPT = textwrap.dedent(r"""
    import ctypes, sys
    import numpy as np
    lib = ctypes.CDLL(sys.argv[1])
    lib.gt_last_error.restype = ctypes.c_char_p
    lib.gt_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]
    lib.gt_write_tensor.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, ctypes.c_char_p]
    lib.gt_read_tensor.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.gt_close.argtypes = [ctypes.c_int64]
    assert lib.gt_abi_version() == 1
    s = ctypes.c_int64()
    assert lib.gt_open(b"mem://", ctypes.byref(s)) == 0
    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    shape = (ctypes.c_int64 * 2)(64, 32)
    assert lib.gt_write_tensor(s, b"w", a.ctypes.data, a.nbytes, 12, shape, 2, b"none") == 0
    out = np.empty_like(a)
    assert lib.gt_read_tensor(s, b"w", out.ctypes.data, out.nbytes, None) == 0
    assert (out == a).all()
    small = np.empty(10, dtype=np.float32)
    assert lib.gt_read_tensor(s, b"w", small.ctypes.data, small.nbytes, None) == 11
    assert b"too small" in lib.gt_last_error()
    assert lib.gt_read_tensor(s, b"nope", out.ctypes.data, out.nbytes, None) == 3
    assert b"KeyNotFound" in lib.gt_last_error()
    assert lib.gt_close(s) == 0
    print("ctypes ok")
""")


def test_ctypes_round_trip_in_its_own_process():
    if not os.path.exists(LIB):
        if os.environ.get("CI"):
            pytest.fail(f"{LIB} missing: `make test` builds it (make cshared)")
        pytest.skip("libgotensor.so not built (make cshared)")
    r = subprocess.run([sys.executable, "-c", SCRIPT, LIB], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ctypes ok" in r.stdout
