"""Roofline of the samplers of Zhang, Dai & Jordan (2011) (ZDJ) and of Mallick, Ghosh & Ghosh's
BSVM on one core: each step of a sweep, its flops, its flop rate against dgemm's on the same
shapes in the same run, and its share of the sweep.

Every step of a sweep is timed in the chains' own state: the sweep loops of
:func:`gpcbench.mcmc.gkm.run_chain` (FBGKM; SGPC runs the same chain and differs in its
predictions only), :func:`gpcbench.mcmc.bgkm.run_bgkm` (BGKM) and
:func:`gpcbench.mcmc.bayes_svm.run_chain` (BSVM) are re-assembled here from the library's own
step functions with a clock between the steps, and each run checks that the re-assembled loop
draws exactly what the library's chain draws from the same seed. After every sweep, dgemm
(the same OpenBLAS, through :func:`gpcbench.mcmc.lapack.gemm`) runs once on each step's
reference shape (m, n, k) at that sweep's n_gamma: C (m x n) = A (m x k) B (k x n). A step's
ratio is its flop rate over dgemm's in the same sweep, the median over the sweeps; 1 means the
step's flops run at dgemm's rate. Steps that are matrix-vector products by nature (n = 1 or 2)
are set against n dgemv calls instead (y = A x, A m x k; bound by memory, not by the FPU:
OpenBLAS's dgemm with one column runs at a fraction of dgemv's rate, so it would flatter them).
Flops are the step's arithmetic as a dense algorithm counts it (n n_gamma^2 for the
triangular solve W = L^-1 K~', n_gamma^3 / 3 for a Cholesky factorisation, 2 m k for a
matrix-vector product); steps without matrix products (Gamma draws, BSVM's likelihoods) have
no ratio.

Times are the thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID), about 1 us a call),
so time the scheduler gives to other processes on a shared machine is not counted; cache and
memory-bandwidth contention from them is, which is why each ratio pairs the step with a dgemm
measured in the same sweep. Sweeps/s are per CPU-second: of the re-assembled loop (its step
times summed) and of the library's chain itself (``run_chain`` / ``run_bgkm`` / ``run_chain``,
timed whole on the same seed).

Shapes (config/config.yaml, experiments zhang2011, zhang2011_newsgroups, zhang2011_kl): FBGKM /
SGPC at (n, k_max) = (300, 100) BCI, Letters; (500, 200) USPS, NewsGroups; (2000, 200) Splice;
(4000, 200) Astroparticle, Mushrooms; (400, 400) Ringnorm, Twonorm, Waveform; (800, 700) the
NewsGroups k_max sweep; (1000, 100) with ARD widths learned (+KL, p = 60 as Splice);
``--all`` adds (300, 200) g241d, Digit1, COIL2; (800, 200) the NewsGroups n sweep; (6000, 200)
Adult1; (20000, 200) Adult2. BGKM and BSVM at n = 300, 500, 800 (Table 2's sets and the
NewsGroups n sweep). Synthetic inputs (p = 60 standard normal, labels from a noisy quadratic, as
bench_mcmc.py), chains started at n_gamma = k_max (ZDJ Table 7: chains sit near k_max).

Usage: PYTHONPATH=src python benchmarks/sampler_roofline.py [--all] [--seconds 2]
"""

from __future__ import annotations

import argparse
import math
import time
from collections import namedtuple

import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address
from threadpoolctl import threadpool_limits

from gpcbench.jit import njit
from gpcbench.kernels.rbf import kernel_block, mean_distance, rbf, weights
from gpcbench.mcmc import bayes_svm
from gpcbench.mcmc.active_set import chain_state, factor_upsilon, initial_state
from gpcbench.mcmc.bgkm import (EigenState, coefficients, eigenbasis, precision_terms, rotate,
                                run_bgkm)
from gpcbench.mcmc.cholesky import backward_t, dot, multiply_lower
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.mcmc.eigen_whitening import (accepted_moves, allocate_eigenbasis, eigen_step_a,
                                           new_history, note_sweep, ready_basis)
from gpcbench.mcmc.holmes_held import WhitenedState, holmes_held, whiten
from gpcbench.mcmc.lapack import gemm
from gpcbench.mcmc.moves import (BIRTH, DEATH, PROPOSED, SWAP, draw_eta, draw_g, draw_precisions,
                                 gamma_move, sampler_settings, theta_move)

_clock = types.ExternalFunction("clock_gettime", types.intc(types.intc, types.voidptr))
llvm.add_symbol("roofline_dgemv", get_cython_function_address("scipy.linalg.cython_blas", "dgemv"))
llvm.add_symbol("roofline_dtrsm", get_cython_function_address("scipy.linalg.cython_blas", "dtrsm"))
_dgemv = types.ExternalFunction("roofline_dgemv", types.void(*[types.voidptr] * 11))
_dtrsm = types.ExternalFunction("roofline_dtrsm", types.void(*[types.voidptr] * 11))
THREAD_CPUTIME = 3  # CLOCK_THREAD_CPUTIME_ID
N, T = ord("N"), ord("T")
PRIORS = dict(a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=np.inf, b_alpha=np.inf,
              jitter=1e-6, theta_step=0.2)  # the estimators' defaults
GKM_SHAPES = [(300, 100), (500, 200), (2000, 200), (4000, 200), (400, 400), (800, 700)]
GKM_MORE = [(300, 200), (800, 200), (6000, 200), (20000, 200)]
KL_SHAPE = (1000, 100)
BGKM_SIZES = [300, 500, 800]


@njit
def cpu_now(buf):
    """Thread CPU time in seconds."""
    _clock(THREAD_CPUTIME, buf.ctypes)
    return buf[0] + 1e-9 * buf[1]


@njit
def gemv(m, k, A, x, y):
    """y[:m] = A x[:k], A (m x k) row-major (dgemv)."""
    chars = np.array([T], dtype=np.uint8)
    ints = np.array([k, m, 1], dtype=np.int32)
    scalars = np.array([1.0, 0.0])
    _dgemv(chars.ctypes, ints[0:].ctypes, ints[1:].ctypes, scalars[0:].ctypes, A.ctypes,
           ints[0:].ctypes, x.ctypes, ints[2:].ctypes, scalars[1:].ctypes, y.ctypes,
           ints[2:].ctypes)


@njit
def dtrsm_whiten(Kt, k1, L, W):
    """W[:, :k1] = K~ L^-T by one dtrsm: step (a)'s whitening as it was before block forward
    substitution (gpcbench.mcmc.lapack.solve_lower_rows), for comparison."""
    n = Kt.shape[0]
    for i in range(n):
        for j in range(k1):
            W[i, j] = Kt[i, j]
    chars = np.array([ord("L"), ord("U"), T, N], dtype=np.uint8)
    ints = np.array([k1, n, L.shape[1], W.shape[1]], dtype=np.int32)
    alpha = np.ones(1)
    _dtrsm(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes,
           ints[0:].ctypes, ints[1:].ctypes, alpha.ctypes, L.ctypes, ints[2:].ctypes, W.ctypes,
           ints[3:].ctypes)


@njit
def dgemm_seconds(m, n, k, A, B, C, buf):
    """CPU seconds of one dgemm C (m x n) = A (m x k) B (k x n) (row-major; A, B, C buffers at
    least that large), or of n dgemv calls C[:m] = A B[:k] when n <= 2, repeated until 20 us
    have passed."""
    reps, start = 0, cpu_now(buf)
    while True:
        if n <= 2:
            for _ in range(n):
                gemv(m, k, A, B, C)
        else:
            gemm(N, N, n, m, k, 1.0, B, 0, n, A, 0, k, 0.0, C, 0, n)
        reps += 1
        elapsed = cpu_now(buf) - start
        if elapsed > 2e-5:
            return elapsed / reps


@njit
def references(shapes, A, B, C, out, buf):
    """out[i] = :func:`dgemm_seconds` of shapes[i] = (m, n, k); rows with m = 0 are skipped."""
    for i in range(shapes.shape[0]):
        if shapes[i, 0] > 0:
            out[i] = dgemm_seconds(shapes[i, 0], shapes[i, 1], shapes[i, 2], A, B, C, buf)


# --- FBGKM / SGPC ----------------------------------------------------------------------------

GKM_STEPS = ("a  W = L^-1 K~' (whiten)", "a  Holmes-Held loop (ZDJ alg. 1)",
             "a  C = L Z; beta~ (ZDJ eq. 9)", "b  eta, g; Upsilon = L L'",
             "b  theta move (ZDJ eq. 8)", "c  gamma move (ZDJ sec. 3.2)",
             "a  eigenbasis: build", "a  eigenbasis: W, Holmes-Held, C")
THETA_ROW = 4


def gkm_shapes(n, k, p, learn, kind):
    """Per GKM_STEPS: flops and the reference (m, n, k) at n_gamma = k when the sweep's gamma
    move is a birth (kind 0), death (1) or swap (2): a birth's kernel column (3 n p) and
    K~'k_j (2 n k1), or a death's two Cholesky downdates (about k1^2 each), each with its
    factor's forward solves (k1^2); the theta move (``learn``): the kernel block (3 n k p), the
    Gram matrix K~'K~ (n k1^2), K~'s and two Cholesky factorisations; the eigenbasis
    (gpcbench.mcmc.eigen_whitening): its build (a solve, two products: 5 n k1^2, and an
    eigendecomposition, about 9 k1^3) and its step (W and the Holmes-Held loop, 10 n k1)."""
    k1 = k + 1
    birth, death = 3.0 * n * p + 2.0 * n * k1 + 4.0 * n + 3.0 * k1 * k1, 3.0 * k1 * k1
    theta = 3.0 * n * k * p + n * k1 * k1 + 2.0 * n * k1 + (k ** 3 + k1 ** 3) / 3 if learn else 0
    flops = [n * k1 * k1, 6.0 * n * k1, 2.0 * k1 * k1, k1 ** 3 / 3 + 4.0 * k1 * k1, theta,
             (birth, death, birth + death)[kind], 5.0 * n * k1 * k1 + 9.0 * k1 ** 3,
             10.0 * n * k1]
    shapes = [(n, k1, k1), (n, 1, k1), (k1, 1, k1), (k1, k1, k1),
              (k1, k1, n) if learn else (0, 0, 0), (k1, 1, k1) if kind == 1 else (n, 1, k1),
              (n, k1, k1), (n, 1, k1)]
    return np.array(flops, dtype=float), np.array(shapes, dtype=np.int64)


GkmTiming = namedtuple("GkmTiming", ("trace", "counts", "times", "ref_shapes", "ref_times",
                                     "n_gamma", "kinds", "old_times", "paths"))
GkmTiming.__doc__ = """What :func:`gkm_sweeps` fills: the chain's trace and move counts, each
step's time per sweep, the references' shapes and times, each sweep's starting n_gamma and
gamma move kind, the time of :func:`dtrsm_whiten` on the sweep's K~ and L, and each sweep's
step (a) path (:data:`SOLVE`, :data:`EIGEN`, :data:`BUILD`: the eigenbasis built first)."""
SOLVE, EIGEN, BUILD = 0, 1, 2


@njit
def gkm_sweeps(X, y, s, chain, settings, seed, timing):
    """:func:`gpcbench.mcmc.gkm.run_chain`'s sweeps (no kept draws), each step timed; after
    every sweep the references ``ref_shapes[k, kind]`` (n_gamma = k at the sweep's start, the
    kind of its gamma move, recorded in ``kinds``) are timed, and :func:`dtrsm_whiten` on the
    factor the sweep whitened with (``old_times``)."""
    np.random.seed(seed)
    n, k_max, steps = X.shape[0], chain.active.shape[0], settings.steps
    S = s.reshape((1, n))
    workspace = initial_state(X, S, chain, settings.jitter, steps.update_theta, 1.0)
    factors = workspace.factors
    Kt, L, C, Z = factors.design, factors.upsilon_factor, factors.projections, factors.whitened
    W, mu, row, x = np.zeros((n, k_max + 1)), np.zeros(1), np.zeros(1), np.zeros(1)
    w_row, beta = np.zeros(k_max + 1), np.zeros(k_max + 1)
    L_old, Kt_old, W_old = np.zeros_like(L), np.zeros_like(Kt), np.zeros_like(W)
    big = max(n, k_max + 1)
    A, B, Cr = np.full(big * (k_max + 1), 0.5), np.full(big * (k_max + 1), 0.5), \
        np.zeros(big * (k_max + 1))  # no draws: the chain's random stream is untouched
    buf = np.zeros(2, dtype=np.int64)
    counts, trace, times = timing.counts, timing.trace, timing.times
    basis, history = allocate_eigenbasis(n, k_max), new_history(k_max)
    fixed = not (steps.update_gamma or steps.update_theta)
    for t in range(settings.n_sweeps):
        k = chain.n_active[0]
        timing.n_gamma[t] = k
        k1 = k + 1
        accepted = accepted_moves(counts)
        L_old[:, :] = L  # step (a)'s K~ and L, for dtrsm_whiten after the sweep (untimed)
        Kt_old[:, :] = Kt
        t0 = cpu_now(buf)  # step (a), as run_chain
        stamp = basis.stamp[0]
        eigen = ready_basis(basis, history, accepted, Kt, k, factors.kernel_factor, fixed)
        t1 = cpu_now(buf)
        times[t, 6] = t1 - t0
        timing.paths[t] = (BUILD if basis.stamp[0] != stamp else EIGEN) if eigen else SOLVE
        if eigen:
            eigen_step_a(basis, k1, chain.eta[0], chain.g[0], factors.kernel_factor, L, W, S, y,
                         C, Z, mu, row, x)
            t2 = cpu_now(buf)
            times[t, 7] = t2 - t1
        else:
            whiten(Kt, k1, L, W)  # as whitened_step_a
            t1b = cpu_now(buf)
            holmes_held(WhitenedState(W, Z, k1), S, y, mu, row, x)
            t2 = cpu_now(buf)
            times[t, 0], times[t, 1] = t1b - t1, t2 - t1b
            for j in range(S.shape[0]):
                multiply_lower(L, k1, Z[j], C[j])
        for r in range(k1):
            w_row[r] = Z[0, r] + np.random.standard_normal()
        backward_t(L, k1, w_row, beta)
        trace[t, 0], trace[t, 1], trace[t, 2], trace[t, 3] = beta[0], chain.g[0], chain.eta[0], k
        t3 = cpu_now(buf)
        ss = 0.0  # steps (b) and (c), as moves.update_hyperparameters_and_active_set
        for j in range(S.shape[0]):
            ss += dot(S[j], S[j], S.shape[1])
        if steps.update_eta_g:
            eta, g = draw_precisions(beta.reshape((1, k_max + 1)), k, factors.kernel, 1.0,
                                     settings)
            chain.eta[0], chain.g[0] = eta, g
            factor_upsilon(factors, k, eta, g)
        t4 = cpu_now(buf)
        if steps.update_theta:
            theta_move(X, S, ss, chain, workspace, settings, counts)
        t5 = cpu_now(buf)
        proposed = counts[BIRTH, PROPOSED], counts[DEATH, PROPOSED]
        if steps.update_gamma:
            gamma_move(X, S, ss, chain, workspace, settings, counts)
        t6 = cpu_now(buf)
        kinds = timing.kinds
        kinds[t] = (BIRTH if counts[BIRTH, PROPOSED] > proposed[0]
                    else (DEATH if counts[DEATH, PROPOSED] > proposed[1] else SWAP))
        times[t, 2], times[t, 3], times[t, 4], times[t, 5] = t3 - t2, t4 - t3, t5 - t4, t6 - t5
        note_sweep(history, k, accepted_moves(counts) != accepted)
        references(timing.ref_shapes[k, kinds[t]], A, B, Cr, timing.ref_times[t], buf)
        t7 = cpu_now(buf)
        dtrsm_whiten(Kt_old, k1, L_old, W_old)
        timing.old_times[t] = cpu_now(buf) - t7


def gkm_problem(n, k_max, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    act = rng.choice(n, k_max, replace=False).astype(np.int64)
    return X, y, act


def gkm_args(X, y, act, k_max, learn, n_sweeps, seed):
    """Fresh arguments of run_chain (FBGKM steps; ARD widths learned when ``learn``)."""
    p = X.shape[1]
    theta = np.full(p if learn else 1, mean_distance(X))
    settings = sampler_settings(**PRIORS, theta_bounds=np.outer([0.01, 10.0], theta),
                                steps=(1, 1, 1, learn), schedule=(n_sweeps, n_sweeps, 1))
    return (X, y, np.where(y > 0, 1.0, -1.0), chain_state(act.copy(), k_max, theta), settings,
            seed, new_record(n_sweeps, 0, k_max, theta.size, []))


def run_gkm(n, k_max, n_sweeps, learn=False, p=60, seed=0):
    X, y, act = gkm_problem(n, k_max, p, seed)
    args = gkm_args(X, y, act, k_max, learn, n_sweeps, seed)
    start = time.thread_time()
    run_chain(*args)
    chain_rate = n_sweeps / (time.thread_time() - start)
    tables = [[gkm_shapes(n, k, p, learn, kind) for kind in range(3)] for k in range(k_max + 1)]
    ref_shapes = np.array([[shapes for _, shapes in row] for row in tables])
    flops = np.array([[f for f, _ in row] for row in tables])
    X, y, s, chain, settings, seed, record = gkm_args(X, y, act, k_max, learn, n_sweeps, seed)
    timing = GkmTiming(np.zeros((n_sweeps, 4)), record.move_counts,
                       np.zeros((n_sweeps, len(GKM_STEPS))), ref_shapes,
                       np.zeros((n_sweeps, len(GKM_STEPS))), np.zeros(n_sweeps, dtype=np.int64),
                       np.zeros(n_sweeps, dtype=np.int64), np.zeros(n_sweeps),
                       np.zeros(n_sweeps, dtype=np.int64))
    gkm_sweeps(X, y, s, chain, settings, seed, timing)
    times, ref_times, ks, kinds, old_times = (timing.times, timing.ref_times, timing.n_gamma,
                                              timing.kinds, timing.old_times)
    if not np.array_equal(timing.trace, args[6].trace):
        raise AssertionError("the timed sweeps drew other values than run_chain")
    steps = [name if learn or i != THETA_ROW else None for i, name in enumerate(GKM_STEPS)]
    flops, ref_shapes = flops[ks, kinds], ref_shapes[ks, kinds]
    paths = timing.paths
    ran = np.ones(times.shape, dtype=bool)
    ran[:, 0] = ran[:, 1] = paths == SOLVE
    ran[:, 6], ran[:, 7] = paths == BUILD, paths != SOLVE
    solve = paths == SOLVE
    old_ratio = np.median(flops[solve, 0] / old_times[solve]
                          / (2.0 * ref_shapes[solve, 0].prod(axis=1) / ref_times[solve, 0]))
    note = (f"  step (a) from the eigenbasis on {np.mean(~solve):.3f} of the sweeps (built on "
            f"{np.mean(paths == BUILD):.3f}); on the sweeps that solve, one dtrsm on the same K~ "
            f"and L (the whitening before block forward substitution): ratio {old_ratio:.2f}, "
            f"whiten / dtrsm time {np.median(times[solve, 0] / old_times[solve]):.2f}")
    return (times, flops, ref_times, ref_shapes, chain_rate,
            f"n = {n}, k_max = {k_max}{' +KL (ARD)' if learn else ''}, p = {p}, "
            f"mean n_gamma {ks.mean():.1f}", steps, note, ran)


# --- BGKM ------------------------------------------------------------------------------------

BGKM_STEPS = ("a  Q^-1 terms D, r, d", "a  Holmes-Held loop (eigenbasis)",
              "   beta~ (ZDJ eq. 9): V's, V gamma", "b  eta, g")


@njit
def bgkm_sweeps(X, y, s, chain, settings, seed, timing):
    """:func:`gpcbench.mcmc.bgkm.run_bgkm`'s sweeps (no kept draws), each step timed; ``timing``
    a :class:`GkmTiming` of which the trace, times, ref_shapes (one row) and ref_times are
    used."""
    np.random.seed(seed)
    n, p = X.shape
    eta, g = chain.eta[0], chain.g[0]
    trace, times, ref_shapes, ref_times = (timing.trace, timing.times, timing.ref_shapes,
                                           timing.ref_times)
    Kt = np.zeros((n, n + 1))
    kernel_block(X, chain.active, n, weights(chain.theta, p), Kt)
    basis = eigenbasis(Kt, settings.jitter)
    V = basis.V
    D, r, d, gamma = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    beta = np.zeros(n + 1)
    S, a, rs = s.reshape((1, n)), rotate(V, s), np.zeros(1)
    mu, row, x = np.zeros(1), np.zeros(1), np.zeros(1)
    A, B, Cr = np.full(n * n, 0.5), np.full(n * n, 0.5), np.zeros(n * n)
    buf = np.zeros(2, dtype=np.int64)
    for t in range(settings.n_sweeps):
        t0 = cpu_now(buf)
        rho = precision_terms(basis, eta, g, D, r, d)
        rs[0] = dot(r, s, n)
        t1 = cpu_now(buf)
        holmes_held(EigenState(V, D, r, d, rho, a, rs), S, y, mu, row, x)
        t2 = cpu_now(buf)
        a = rotate(V, s)
        quad = coefficients(basis, eta, g, s.sum(), a, np.random.standard_normal(n + 1), gamma,
                            beta)
        trace[t, 0], trace[t, 1], trace[t, 2], trace[t, 3] = beta[0], g, eta, n
        t3 = cpu_now(buf)
        eta = draw_eta(beta[0], settings.a_eta, settings.b_eta)
        g = draw_g(quad, n, settings.a_g, settings.b_g)
        t4 = cpu_now(buf)
        times[t, 0], times[t, 1], times[t, 2], times[t, 3] = t1 - t0, t2 - t1, t3 - t2, t4 - t3
        references(ref_shapes, A, B, Cr, ref_times[t], buf)


def run_bgkm_steps(n, n_sweeps, p=60, seed=0):
    X, y, _ = gkm_problem(n, 1, p, seed)
    theta, s = np.array([mean_distance(X)]), np.where(y > 0, 1.0, -1.0)
    settings = sampler_settings(**PRIORS, theta_bounds=np.outer([0.01, 10.0], theta),
                                steps=(1, 1, 0, 0), schedule=(n_sweeps, n_sweeps, 1))
    record = new_record(n_sweeps, 0, n, 1, [])
    start = time.thread_time()
    run_bgkm(X, y, s.copy(), chain_state(np.arange(n), n, theta), settings, seed, record)
    chain_rate = n_sweeps / (time.thread_time() - start)
    flops = np.array([4.0 * n * n, 4.0 * n * n, 4.0 * n * n, 2.0 * n])
    shapes = np.array([(n, 2, n), (n, 2, n), (n, 2, n), (0, 0, 0)], dtype=np.int64)
    timing = GkmTiming(np.zeros((n_sweeps, 4)), record.move_counts, np.zeros((n_sweeps, 4)),
                       shapes, np.zeros((n_sweeps, 4)), np.zeros(0, dtype=np.int64),
                       np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64))
    bgkm_sweeps(X, y, s.copy(), chain_state(np.arange(n), n, theta), settings, seed, timing)
    times, ref_times = timing.times, timing.ref_times
    if not np.array_equal(timing.trace, record.trace):
        raise AssertionError("the timed sweeps drew other values than run_bgkm")
    return (times, np.tile(flops, (n_sweeps, 1)), ref_times, np.tile(shapes, (n_sweeps, 1, 1)),
            chain_rate, f"n = {n}, p = {p}", BGKM_STEPS)


# --- BSVM ------------------------------------------------------------------------------------

BSVM_STEPS = ("1  Kt'z", "1  beta: dpotrf of Kt'Kt + D, 2 dtrtrs", "   f = Kt beta",
              "2, 3  sigma^2, lambda", "4  z by Metropolis-Hastings")


def bsvm_sweeps(Kt, y, n_sweeps, rng, ref_shapes, ref_times, likelihood="bsvm"):
    """Steps 1-4 of :func:`gpcbench.mcmc.bayes_svm.run_chain` (its defaults, step 5 off), each
    timed, then the dgemm references of ``ref_shapes``; returns the beta_0 trace and the
    (n_sweeps, 5) step times."""
    priors = bayes_svm.Priors()
    n = y.size
    KtK = Kt.T @ Kt
    s2, lam_now = 1.0, np.full(n, priors.a_lambda / priors.b_lambda)
    d = np.empty(n + 1)
    d[0] = priors.intercept_precision
    z = y * np.abs(rng.standard_normal(n))
    loglik = bayes_svm.log_likelihood(y, z, likelihood)
    shape_sigma = priors.a_sigma + n + 0.5
    big = (n + 1) * (n + 1)
    A, B, Cr, buf = np.full(big, 0.5), np.full(big, 0.5), np.zeros(big), np.zeros(2, np.int64)
    trace, times = np.zeros(n_sweeps), np.zeros((n_sweeps, len(BSVM_STEPS)))
    for t in range(n_sweeps):
        t0 = time.thread_time()
        d[1:] = lam_now
        Ktz = Kt.T @ z
        t1 = time.thread_time()
        beta = bayes_svm._draw_beta(KtK, Ktz, d, s2, rng, t)
        t2 = time.thread_time()
        f = Kt @ beta
        t3 = time.thread_time()
        r = z - f
        s2 = (priors.b_sigma + 0.5 * (r @ r + beta @ (d * beta))) / rng.gamma(shape_sigma)
        lam_now = rng.gamma(priors.a_lambda + 0.5,
                            1.0 / (priors.b_lambda + beta[1:] ** 2 / (2.0 * s2)))
        t4 = time.thread_time()
        proposal = f + math.sqrt(s2) * rng.standard_normal(n)
        log_u = np.log(rng.random(n))
        loglik_new = bayes_svm.log_likelihood(y, proposal, likelihood)
        accept = log_u < loglik_new - loglik
        z = np.where(accept, proposal, z)
        loglik = np.where(accept, loglik_new, loglik)
        t5 = time.thread_time()
        trace[t] = beta[0]
        times[t] = t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4
        references(ref_shapes, A, B, Cr, ref_times[t], buf)
    return trace, times


def run_bsvm(n, n_sweeps, p=60, seed=0):
    X, y01, _ = gkm_problem(n, 1, p, seed)
    y = np.where(y01 > 0, 1.0, -1.0)
    Kt = np.hstack([np.ones((n, 1)), rbf(X, X, mean_distance(X))])
    start = time.thread_time()
    chain = bayes_svm.run_chain(Kt, y, "bsvm", bayes_svm.Priors(), (n_sweeps, 0, 1),
                                np.random.default_rng(seed))
    chain_rate = n_sweeps / (time.thread_time() - start)
    n1 = n + 1
    flops = np.array([2.0 * n * n1, n1 ** 3 / 3 + 2.0 * n1 * n1, 2.0 * n * n1, 0, 0])
    shapes = np.array([(n1, 1, n), (n1, n1, n1), (n, 1, n1), (0, 0, 0), (0, 0, 0)], dtype=np.int64)
    ref_times = np.zeros((n_sweeps, len(BSVM_STEPS)))
    trace, times = bsvm_sweeps(Kt, y, n_sweeps, np.random.default_rng(seed), shapes, ref_times)
    if not np.array_equal(trace, chain.trace[:, 0]):
        raise AssertionError("the timed sweeps drew other values than bayes_svm.run_chain")
    return (times, np.tile(flops, (n_sweeps, 1)), ref_times, np.tile(shapes, (n_sweeps, 1, 1)),
            chain_rate, f"n = {n}, p = {p}", BSVM_STEPS)


# --- the table -------------------------------------------------------------------------------

def report(times, flops, ref_times, shapes, chain_rate, title, steps, note=None, ran=None):
    """Print one sampler's table (``steps``: names, None for a step not run; a reference
    shape printed is the median over the sweeps; ``ran``: per sweep and step, whether the step
    ran, default every one, rates and ratios over those sweeps); return {step: (share, ratio)}
    and the sweep's ms."""
    sweep = times.sum(axis=1)
    ref_flops = 2.0 * shapes.prod(axis=2)
    ran = np.ones(times.shape, dtype=bool) if ran is None else ran
    with np.errstate(divide="ignore", invalid="ignore"):
        rate, ref_rate = flops / times, ref_flops / ref_times
    ratio = [np.median(rate[ran[:, i], i] / ref_rate[ran[:, i], i]) if ran[:, i].any()
             else np.nan for i in range(len(steps))]
    ms = 1e3 * sweep.mean()
    print(f"\n{title}: {ms:.3f} ms a sweep, {1e3 / ms:.0f} sweeps/s timed, "
          f"{chain_rate:.0f} sweeps/s the library's chain (CPU time)")
    print(f"  {'step':<38} {'share':>6} {'ms':>8} {'MFLOP':>8} {'GFLOP/s':>8} "
          f"{'reference (m, n, k)':>26} {'GFLOP/s':>8} {'ratio':>6}")
    result = {}
    for i, name in enumerate(steps):
        share = times[:, i].sum() / sweep.sum()
        if name is None:
            continue
        has_ref = shapes[0, i, 0] > 0
        shape = tuple(int(v) for v in np.median(shapes[:, i], axis=0)) if has_ref else None
        blas = "" if not has_ref else "dgemm " if shape[1] > 2 else f"{shape[1]} dgemv "
        runs = ran[:, i]
        if not runs.any():
            print(f"  {name:<38} {share:>6.3f} {'(no sweep)':>8}")
            continue
        cells = (f"{np.median(rate[runs, i]) / 1e9:>8.2f} {blas + str(shape):>26} "
                 f"{np.median(ref_rate[runs, i]) / 1e9:>8.2f} {ratio[i]:>6.2f}" if has_ref
                 else f"{'':>8} {'-':>26} {'':>8} {'-':>6}")
        print(f"  {name:<38} {share:>6.3f} {1e3 * times[:, i].mean():>8.3f} "
              f"{flops[runs, i].mean() / 1e6:>8.2f} {cells}")
        result[name] = (share, ratio[i] if has_ref else float("nan"))
    if note:
        print(note)
    return result, ms


def sweeps_for(seconds, seconds_a_sweep, low=20, high=3000):
    return int(min(high, max(low, seconds / seconds_a_sweep)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="also the other protocol shapes")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="CPU seconds of sweeps a shape (about; as many again for dgemm)")
    args = parser.parse_args()
    run_gkm(60, 20, 3)  # compile
    run_gkm(60, 10, 3, learn=True, p=4)
    run_bgkm_steps(40, 3)
    run_bsvm(40, 3)
    print("FBGKM / SGPC (gpcbench.mcmc.gkm.run_chain; SGPC's sweeps are FBGKM's)")
    shapes = GKM_SHAPES + (GKM_MORE if args.all else [])
    results = {}
    for n, k_max in sorted(shapes):
        guess = 3.0 * n * (k_max + 1) ** 2 / 2e10 + 2e-5 * n / 100
        results[n, k_max] = report(*run_gkm(n, k_max, sweeps_for(args.seconds, guess)))
    n, k_max = KL_SHAPE
    report(*run_gkm(n, k_max, sweeps_for(args.seconds, 0.02), learn=True))
    print("\nBGKM (gpcbench.mcmc.bgkm.run_bgkm: every point active, eigenbasis of K)")
    for n in BGKM_SIZES:
        report(*run_bgkm_steps(n, sweeps_for(args.seconds, 5e-9 * 16 * n * n)))
    print("\nBSVM (gpcbench.mcmc.bayes_svm.run_chain, Mallick, Ghosh & Ghosh 2005)")
    for n in BGKM_SIZES:
        report(*run_bsvm(n, sweeps_for(args.seconds, (n + 1) ** 3 / 3 / 1e10 + 3e-4)))
    steps, ms = results[2000, 200]
    share, ratio = steps[GKM_STEPS[0]]
    eigen = steps[GKM_STEPS[6]][0] + steps[GKM_STEPS[7]][0]
    print(f"\nFBGKM at (n, k_max) = (2000, 200): step (a)'s W = L^-1 K~' at {ratio:.2f} of dgemm's "
          f"rate on its shape on the sweeps that solve, {share:.2f} of the sweeps' time; step (a) "
          f"from the eigenbasis {eigen:.2f}; {1e3 / ms:.0f} sweeps a CPU-second")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
