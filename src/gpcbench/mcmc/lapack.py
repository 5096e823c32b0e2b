"""BLAS-3 and LAPACK kernels callable from numba code: scipy's ``cython_blas`` / ``cython_lapack``
(the same OpenBLAS as scipy.linalg, so ``threadpoolctl`` limits its threads).

The routines are registered with LLVM under their own symbol names and declared as external
functions, which keeps the numba functions that call them cacheable. Matrices are C-ordered
row-major buffers; a C-ordered lower triangle is a Fortran (column-major) upper triangle of the
same buffer, which is how the arguments below are passed. The thin wrappers (:func:`gemm`,
:func:`trmm`, :func:`trtri`) take each matrix as a buffer, the flat offset of its first entry and
its leading dimension, all read column-major (Fortran), so a block of a C-ordered array is
passed without a copy; :func:`trsv` and :func:`trmv` take a whole C-ordered array and a
contiguous vector.

:func:`solve_lower_rows` solves a lower triangular system for many right-hand sides by block
forward substitution, BLAS-3 throughout. It replaced one ``dtrsm`` in the samplers' step (a):
in their own sweeps, one thread, dtrsm ran at 0.5-0.65 of dgemm's rate on the same shapes and
this form at 0.6-0.7, in 4-23 % less time than dtrsm with 1,000-20,000 right-hand sides and a
factor of order 100-200, within 10 % of it with 300-800 (6-11 % slower at order 700);
benchmarks/sampler_roofline.py prints both.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

from gpcbench.jit import njit

_P = types.voidptr
for _name, _lib in (("dgemm", "blas"), ("dtrmm", "blas"), ("dtrsv", "blas"), ("dtrmv", "blas"),
                    ("dpotrf", "lapack"), ("dtrtri", "lapack")):
    llvm.add_symbol(f"gpcbench_{_name}",
                    get_cython_function_address(f"scipy.linalg.cython_{_lib}", _name))
_dgemm = types.ExternalFunction("gpcbench_dgemm", types.void(*[_P] * 13))
_dtrmm = types.ExternalFunction("gpcbench_dtrmm", types.void(*[_P] * 11))
_dtrsv = types.ExternalFunction("gpcbench_dtrsv", types.void(*[_P] * 8))
_dtrmv = types.ExternalFunction("gpcbench_dtrmv", types.void(*[_P] * 8))
_dpotrf = types.ExternalFunction("gpcbench_dpotrf", types.void(*[_P] * 5))
_dtrtri = types.ExternalFunction("gpcbench_dtrtri", types.void(*[_P] * 6))

# character arguments as bytes: side / uplo / trans / diag
_LEFT, _UPPER, _TRANS, _NONUNIT = ord("L"), ord("U"), ord("T"), ord("N")
_NOTRANS = ord("N")  # trans

#: Right-hand sides (rows of B) that :func:`solve_lower_rows` solves together: 512 rows of up to
#: 201 columns (0.8 MB) stay in a 1 MB L2 cache between the BLAS calls of one block of L.
ROWS = 512
#: Order of the diagonal blocks of L that :func:`solve_lower_rows` inverts (dtrtri).
BLOCK = 64


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
def trsv(trans, m, A, x):
    """x[:m] <- op(U)^-1 x[:m] for the m x m upper triangle U of A read column-major (dtrsv,
    non-unit diagonal): for a C-ordered lower L, U = L', so op 'T' solves L x = b and op 'N'
    solves L' x = b."""
    chars = np.array([_UPPER, trans, _NONUNIT], dtype=np.uint8)
    ints = np.array([m, A.shape[1], 1], dtype=np.int32)
    if m == 0:
        return
    _dtrsv(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, ints[0:].ctypes, A.ctypes,
           ints[1:].ctypes, x.ctypes, ints[2:].ctypes)


@njit(cache=True)
def trmv(trans, m, A, x):
    """x[:m] <- op(U) x[:m], U as in :func:`trsv` (dtrmv): op 'T' gives L x."""
    chars = np.array([_UPPER, trans, _NONUNIT], dtype=np.uint8)
    ints = np.array([m, A.shape[1], 1], dtype=np.int32)
    if m == 0:
        return
    _dtrmv(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, ints[0:].ctypes, A.ctypes,
           ints[1:].ctypes, x.ctypes, ints[2:].ctypes)


@njit(cache=True)
def invert_diagonal_blocks(L, m, inv):
    """inv[b0 + i, j] = (L[b0:b1, b0:b1]^-1)[i, j], j <= i, for the diagonal blocks
    b0 = 0, BLOCK, 2 BLOCK, .. of the lower triangle L[:m, :m] (inv: (m, BLOCK), its strict
    upper part unused). False if a block is singular."""
    ld = inv.shape[1]
    for b0 in range(0, m, BLOCK):
        b1 = min(m, b0 + BLOCK)
        for i in range(b0, b1):
            for j in range(b0, i + 1):
                inv[i, j - b0] = L[i, j]
        if not trtri(b1 - b0, inv, b0 * ld, ld):
            return False
    return True


@njit(cache=True)
def solve_lower_rows(L, m, A, B, rows):
    """B[i, :m] <- L[:m, :m]^-1 A[i, :m] for i < rows (A may be B): a lower triangular solve
    with every row a right-hand side, BLAS-3 throughout.

    Block forward substitution over the diagonal blocks L_bb of order :data:`BLOCK`:
    X_b = L_bb^-1 (A_b - sum_{c<b} L_bc X_c), one dgemm (the sum) and one dtrmm by the inverted
    diagonal block (:func:`invert_diagonal_blocks`, dtrtri) per block, on :data:`ROWS`
    right-hand sides at a time. Only the diagonal blocks are inverted, so the rounding
    error grows with their condition numbers, not with L's. L is a C-ordered lower factor; in
    column-major terms the rows of B are the columns X' = L^-1 A'.
    """
    inv = np.empty((m, BLOCK))
    if not invert_diagonal_blocks(L, m, inv):
        raise ValueError("singular triangular factor")
    ldl, ldb = L.shape[1], B.shape[1]
    for r0 in range(0, rows, ROWS):
        r1 = min(rows, r0 + ROWS)
        for i in range(r0, r1):
            for j in range(m):
                B[i, j] = A[i, j]
        first = r0 * ldb  # flat offset of X'[:, r0]
        for b0 in range(0, m, BLOCK):
            b1 = min(m, b0 + BLOCK)
            if b0 > 0:  # X'_b -= L[b0:b1, :b0] X'[:b0]; L's rows b0.. read column-major are
                # L[b0:b1, :b0]', hence op 'T'
                gemm(_TRANS, _NOTRANS, b1 - b0, r1 - r0, b0, -1.0, L, b0 * ldl, ldl, B, first,
                     ldb, 1.0, B, first + b0, ldb)
            trmm(b1 - b0, r1 - r0, inv, b0 * BLOCK, BLOCK, B, first + b0, ldb)


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
