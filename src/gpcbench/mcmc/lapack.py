"""BLAS-3 and LAPACK kernels callable from numba code: scipy's ``cython_blas`` / ``cython_lapack``
(the same OpenBLAS as scipy.linalg, so ``threadpoolctl`` limits its threads).

The routines are registered with LLVM under their own symbol names and declared as external
functions, which keeps the numba functions that call them cacheable. Matrices are C-ordered
row-major buffers; a C-ordered lower triangle is a Fortran (column-major) upper triangle of the
same buffer, which is how the arguments below are passed.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

from gpcbench.jit import njit

_P = types.voidptr
llvm.add_symbol("gpcbench_dtrsm", get_cython_function_address("scipy.linalg.cython_blas", "dtrsm"))
llvm.add_symbol("gpcbench_dpotrf",
                get_cython_function_address("scipy.linalg.cython_lapack", "dpotrf"))
_dtrsm = types.ExternalFunction("gpcbench_dtrsm", types.void(*[_P] * 11))
_dpotrf = types.ExternalFunction("gpcbench_dpotrf", types.void(*[_P] * 5))

# character arguments as bytes: side / uplo / trans / diag
_LEFT, _UPPER, _TRANS, _NONUNIT = ord("L"), ord("U"), ord("T"), ord("N")


@njit(cache=True)
def solve_lower_rows(L, m, B, rows):
    """B[i, :m] <- L[:m, :m]^-1 B[i, :m] for i < rows, in place (one dtrsm).

    L is a C-ordered lower factor; each row of the C-ordered B is a right-hand side. In
    column-major terms B' (m x rows, leading dimension B.shape[1]) is overwritten by
    (L'_F)' ^-1 B' where L'_F, the buffer read column-major, is the upper triangle L'.
    """
    chars = np.array([_LEFT, _UPPER, _TRANS, _NONUNIT], dtype=np.uint8)
    ints = np.array([m, rows, L.shape[1], B.shape[1]], dtype=np.int32)
    alpha = np.ones(1)
    if m == 0 or rows == 0:
        return
    _dtrsm(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes,
           ints[0:].ctypes, ints[1:].ctypes, alpha.ctypes, L.ctypes, ints[2:].ctypes,
           B.ctypes, ints[3:].ctypes)


@njit(cache=True)
def cholesky_into(A, L, m):
    """Lower Cholesky factor of A[:m, :m] into L[:m, :m] (dpotrf on the lower triangle; L's
    strict upper triangle is not referenced). False if A[:m, :m] is not positive definite."""
    for i in range(m):
        for j in range(i + 1):
            L[i, j] = A[i, j]
    if m == 0:
        return True
    ints = np.array([m, L.shape[1], 0], dtype=np.int32)
    uplo = np.array([_UPPER], dtype=np.uint8)
    _dpotrf(uplo.ctypes, ints[0:].ctypes, L.ctypes, ints[1:].ctypes, ints[2:].ctypes)
    return ints[2] == 0
