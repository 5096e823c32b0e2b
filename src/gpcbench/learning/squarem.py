"""SQUAREM extrapolation of a fixed-point (EM) map (Varadhan & Roland 2008, scheme SqS3).

From three successive EM iterates theta0, theta1 = M(theta0), theta2 = M(theta1) the
extrapolated point is theta0 - 2 a r + a^2 v with r = theta1 - theta0, v = theta2 - 2 theta1 +
theta0 and step a = -|r| / |v| (capped at -1, where the point is theta2 itself). It has the
same fixed points as the EM map; the caller evaluates it and keeps it only if its objective
is no worse than theta2's (the safeguard that makes the accelerated EM as reliable as EM).
"""

from __future__ import annotations

import numpy as np


def squarem_point(theta0, theta1, theta2):
    """The SqS3 point from three EM iterates, or None where it is theta2 (step -1) or undefined."""
    points = [np.asarray(p, dtype=float) for p in (theta0, theta1, theta2)]
    if not all(np.all(np.isfinite(p)) for p in points):
        return None
    r = points[1] - points[0]
    v = points[2] - 2 * points[1] + points[0]
    if not np.any(v):
        return None
    step = min(-np.linalg.norm(r) / np.linalg.norm(v), -1.0)
    if step == -1.0:
        return None
    return points[0] - 2 * step * r + step**2 * v
