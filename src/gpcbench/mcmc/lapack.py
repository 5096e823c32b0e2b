"""BLAS-3 and LAPACK kernels callable from numba code: scipy's ``cython_blas`` / ``cython_lapack``
(the same OpenBLAS as scipy.linalg, so ``threadpoolctl`` limits its threads).

The routines are registered with LLVM under their own symbol names and declared as external
functions, which keeps the numba functions that call them cacheable. Matrices are C-ordered
row-major buffers; a C-ordered lower triangle is a Fortran (column-major) upper triangle of the
same buffer, which is how the arguments below are passed. The thin wrappers (:func:`gemm`,
:func:`trmm`, :func:`trtri`) take each matrix as a buffer, the flat offset of its first entry and
its leading dimension, all read column-major (Fortran), so a block of a C-ordered array is
passed without a copy.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

from gpcbench.jit import njit

_P = types.voidptr
for _name, _lib in (("dtrsm", "blas"), ("dgemm", "blas"), ("dtrmm", "blas"),
                    ("dpotrf", "lapack"), ("dtrtri", "lapack")):
    llvm.add_symbol(f"gpcbench_{_name}",
                    get_cython_function_address(f"scipy.linalg.cython_{_lib}", _name))
_dtrsm = types.ExternalFunction("gpcbench_dtrsm", types.void(*[_P] * 11))
_dgemm = types.ExternalFunction("gpcbench_dgemm", types.void(*[_P] * 13))
_dtrmm = types.ExternalFunction("gpcbench_dtrmm", types.void(*[_P] * 11))
_dpotrf = types.ExternalFunction("gpcbench_dpotrf", types.void(*[_P] * 5))
_dtrtri = types.ExternalFunction("gpcbench_dtrtri", types.void(*[_P] * 6))

# character arguments as bytes: side / uplo / trans / diag
_LEFT, _UPPER, _TRANS, _NONUNIT = ord("L"), ord("U"), ord("T"), ord("N")
_NOTRANS = ord("N")  # trans


@njit(cache=True)
def gemm(transa, transb, m, n, k, alpha, A, a0, lda, B, b0, ldb, beta, C, c0, ldc):
    """C <- alpha op(A) op(B) + beta C (dgemm; op(A) m x k, op(B) k x n, C m x n), each matrix
    read column-major from its flat offset (module docstring); ``trans*`` is ord('N' or 'T')."""
    chars = np.array([transa, transb], dtype=np.uint8)
    ints = np.array([m, n, k, lda, ldb, ldc], dtype=np.int32)
    scalars = np.array([alpha, beta])
    if m == 0 or n == 0:
        return
    _dgemm(chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, ints[1:].ctypes,
           ints[2:].ctypes, scalars[0:].ctypes, A.reshape(-1)[a0:].ctypes, ints[3:].ctypes,
           B.reshape(-1)[b0:].ctypes, ints[4:].ctypes, scalars[1:].ctypes,
           C.reshape(-1)[c0:].ctypes, ints[5:].ctypes)


@njit(cache=True)
def trmm(m, n, A, a0, lda, B, b0, ldb):
    """B <- U' B for the m x m upper triangle U of A and the m x n matrix B (dtrmm, side L,
    uplo U, trans T, non-unit diagonal), column-major from the flat offsets: with C-ordered
    buffers, U' is the C-ordered lower triangle at a0."""
    chars = np.array([_LEFT, _UPPER, _TRANS, _NONUNIT], dtype=np.uint8)
    ints = np.array([m, n, lda, ldb], dtype=np.int32)
    alpha = np.ones(1)
    if m == 0 or n == 0:
        return
    _dtrmm(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes,
           ints[0:].ctypes, ints[1:].ctypes, alpha.ctypes, A.reshape(-1)[a0:].ctypes,
           ints[2:].ctypes, B.reshape(-1)[b0:].ctypes, ints[3:].ctypes)


@njit(cache=True)
def trtri(m, A, a0, lda):
    """Invert the m x m upper triangle of A in place (dtrtri, non-unit diagonal), column-major
    from the flat offset a0: with a C-ordered buffer, the lower triangle at a0. False if it is
    singular."""
    chars = np.array([_UPPER, _NONUNIT], dtype=np.uint8)
    ints = np.array([m, lda, 0], dtype=np.int32)
    if m == 0:
        return True
    _dtrtri(chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, A.reshape(-1)[a0:].ctypes,
            ints[1:].ctypes, ints[2:].ctypes)
    return ints[2] == 0


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
