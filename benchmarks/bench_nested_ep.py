"""Benchmark of nested EP for the multinomial probit GP (issue 46). Everything compared is
measured in this run.

1. Time per outer sweep of nested EP (:func:`gpcbench.inference.nested_ep.nested_ep`) over the
   time per sweep of the project's binary EP (:func:`gpcbench.inference.ep
   .expectation_propagation`, default sequential schedule, class 0 against the rest) on the
   same n points, for J = 3, 6, 10 and n = 200, 500, 1000 (synthetic: J Gaussian blobs in 3-D),
   against the issue's target of 2 J. Each is the best over ``--repeat`` runs of a fixed number
   of sweeps (``--binary-sweeps``, ``--nested-sweeps``; tolerances 0 so none stops early),
   divided by the sweeps, the two runs alternating; wall and CPU time (with one BLAS thread
   the CPU time is robust to other processes' load). A nested sweep includes its evidence,
   cavities, inner EP and the
   structured posterior (J Choleskys, 3 J triangular solves of n x n, one Cholesky of S); a
   binary sweep includes its share of the refactorisation every 10 sweeps.
2. Sweeps to convergence against the damping of the outer updates (n = 200, J = 3 and 6,
   theta0 = 3, 30, 300; the optimiser's tolerances, tol 1e-7 on log Z and 1e-5 on the moment
   gap), the table behind ``nested_ep.DEFAULT_DAMPING``.
3. With ``--kg``: Kim & Ghahramani's class-difference EP (issue 5) on the same problems at
   n = 200, its sweep over the binary one, beside nested EP's (it costs about (J-1)^3 binary
   sweeps).

What the ratio can be. A binary sequential sweep costs about n^3 flops (rank-b updates of the
n x n posterior covariance, bench_ep.py) plus per-site work in compiled code; a nested sweep
about 3.3 J n^3 + n^3 / 3 (the per-class Cholesky and three triangular solves, and S's
Cholesky) plus O(J^2 n^2) for the J x J marginals and O(n J^3) for cavities and inner EP.

Usage: ``python benchmarks/bench_nested_ep.py [--repeat R] [--threads T] [--kg]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_ep import best_time
from threadpoolctl import threadpool_limits

from gpcbench.inference.ep import expectation_propagation
from gpcbench.inference.nested_ep import nested_ep
from gpcbench.kernels.covariance import Covariance
from gpcbench.kernels.multiclass import ClassDifferenceCovariance
from gpcbench.likelihoods import NoisyThresholdLikelihood

#: Binary EP's prior (K&G eq. 13 with a soft threshold) and nested EP's (no latent noise: the
#: multinomial probit's unit noise takes its place).
BINARY = Covariance(theta0=1.0, theta1=1e-4, theta2=0.1, inverse_lengthscale=0.5)
NESTED = Covariance(theta0=10.0, theta1=1e-3, theta2=1e-3, inverse_lengthscale=0.5)


def blobs(n, J, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(J, 3))
    y = np.arange(n) % J
    return centres[y] + rng.normal(size=(n, 3)), y


def per_sweep(function, repeat):
    """Best wall time over ``repeat`` runs divided by the sweeps of the last run."""
    seconds, result = best_time(function, repeat)
    return seconds / result.n_sweeps, result


def interleaved_per_sweep(functions, repeat):
    """Per function, the least wall and the least CPU time per sweep over ``repeat`` rounds
    that call every function once in turn (so that a change of the machine's load between
    two measurements hits both; the CPU time of a one-thread run leaves out the time the
    process waited for a core)."""
    wall = np.full(len(functions), np.inf)
    cpu = np.full(len(functions), np.inf)
    for _ in range(repeat):
        for k, function in enumerate(functions):
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            result = function()
            wall[k] = min(wall[k], (time.perf_counter() - start_wall) / result.n_sweeps)
            cpu[k] = min(cpu[k], (time.process_time() - start_cpu) / result.n_sweeps)
    return wall, cpu


def part_sweeps(sizes, classes, args, lik):
    print("\n== 1. Time per sweep: nested EP (outer sweep) / binary EP, same n ==")
    print(f"{'n':>5} {'J':>3} | {'binary s':>9} {'cpu s':>8} | {'nested s':>9} {'cpu s':>8} | "
          f"{'ratio':>6} {'cpu':>6} {'2J':>4}")
    for n in sizes:
        for J in classes:
            X, y = blobs(n, J)
            C, K = BINARY(X), np.broadcast_to(NESTED(X), (J, n, n))
            signs = np.where(y == 0, 1.0, -1.0)
            wall, cpu = interleaved_per_sweep([
                lambda: expectation_propagation(C, signs, lik, max_sweeps=args.binary_sweeps,
                                                tol=0.0, site_tol=0.0),
                lambda: nested_ep(K, y, max_sweeps=args.nested_sweeps, tol=0.0,
                                  moment_tol=0.0)], args.repeat)
            print(f"{n:5d} {J:3d} | {wall[0]:9.4f} {cpu[0]:8.4f} | {wall[1]:9.4f} {cpu[1]:8.4f} |"
                  f" {wall[1] / wall[0]:6.2f} {cpu[1] / cpu[0]:6.2f} {2 * J:4d}", flush=True)


def part_damping():
    print("\n== 2. Outer sweeps to convergence by damping (n = 200; tol 1e-7, moment gap 1e-5;"
          " '!' = not converged in 300, (d) = damping at the end) ==")
    dampings = (0.3, 0.5, 0.7, 0.85, 1.0)
    print(f"{'J':>3} {'theta0':>7} | " + " | ".join(f"d = {d:<4}" for d in dampings))
    for J in (3, 6):
        X, y = blobs(200, J)
        for theta0 in (3.0, 30.0, 300.0):
            K = np.broadcast_to(Covariance(theta0, 0.01, 1e-3, 0.5)(X), (J, 200, 200))
            cells = []
            for damping in dampings:
                result = nested_ep(K, y, damping=damping, tol=1e-7, moment_tol=1e-5,
                                   max_sweeps=300)
                flag = "" if result.converged else "!"
                cells.append(f"{result.n_sweeps:3d}{flag} ({result.damping:g})")
            print(f"{J:3d} {theta0:7g} | " + " | ".join(f"{c:>8}" for c in cells), flush=True)


def part_kg(classes, args, lik):
    print("\n== 3. Class-difference EP (K&G sec. 4) beside nested EP, n = 200, per sweep ==")
    print(f"{'J':>3} | {'binary s':>9} | {'K&G s':>9} {'ratio':>7} | {'nested s':>9} {'ratio':>6}")
    n = 200
    for J in classes:
        X, y = blobs(n, J)
        signs = np.where(y == 0, 1.0, -1.0)
        t_binary, _ = per_sweep(lambda: expectation_propagation(
            BINARY(X), signs, lik, max_sweeps=args.binary_sweeps, tol=0.0, site_tol=0.0),
            args.repeat)
        D = ClassDifferenceCovariance(BINARY, y, J)(X)
        t_kg, _ = per_sweep(lambda: expectation_propagation(
            D, np.ones(D.shape[0]), lik, max_sweeps=args.binary_sweeps, tol=0.0, site_tol=0.0),
            args.repeat)
        K = np.broadcast_to(NESTED(X), (J, n, n))
        t_nested, _ = per_sweep(lambda: nested_ep(
            K, y, max_sweeps=args.nested_sweeps, tol=0.0, moment_tol=0.0), args.repeat)
        print(f"{J:3d} | {t_binary:9.4f} | {t_kg:9.4f} {t_kg / t_binary:7.1f} | "
              f"{t_nested:9.4f} {t_nested / t_binary:6.2f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--binary-sweeps", type=int, default=10)
    parser.add_argument("--nested-sweeps", type=int, default=10)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000])
    parser.add_argument("--classes", type=int, nargs="+", default=[3, 6, 10])
    parser.add_argument("--kg", action="store_true", help="also time K&G's class-difference EP")
    args = parser.parse_args(argv)
    lik = NoisyThresholdLikelihood()
    expectation_propagation(np.eye(4), np.ones(4), lik)  # numba warm-up
    nested_ep(np.broadcast_to(np.eye(3), (3, 3, 3)), np.arange(3))
    with threadpool_limits(args.threads):
        print(f"BLAS threads: {args.threads or 'all'}")
        part_sweeps(args.sizes, args.classes, args, lik)
        part_damping()
        if args.kg:
            part_kg([J for J in args.classes if J <= 6], args, lik)


if __name__ == "__main__":
    main()
