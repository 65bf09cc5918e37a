"""Bradley-Terry strengths from pair-wise outcomes, with a small prior that keeps them finite.

Model: P(i beats j) = sigmoid(theta_i - theta_j). A tie counts as half a win for each side. The
prior gives every player `prior` virtual games against a fixed reference player (theta = 0),
half of them won, which is a log-concave penalty: perfect separation and players that only tie
still get finite strengths. The penalized log-likelihood is strictly concave for prior > 0, so
Newton's method with backtracking converges in a handful of steps.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Outcome = tuple[int, int, float]  # (i, j, score of i: 1 win, 0.5 tie, 0 loss)


def win_matrix(n: int, outcomes: Sequence[Outcome]) -> np.ndarray:
    """W[i, j] = (fractional) wins of i over j."""
    w = np.zeros((n, n))
    for i, j, s in outcomes:
        if i == j:
            raise ValueError(f"a player cannot play itself (index {i})")
        if not 0.0 <= s <= 1.0:
            raise ValueError(f"outcome {s} for ({i}, {j}) must lie in [0, 1]")
        w[i, j] += s
        w[j, i] += 1.0 - s
    return w


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def log_likelihood(theta: np.ndarray, wins: np.ndarray, prior: float) -> float:
    """The penalized log-likelihood the fit maximizes."""
    d = theta[:, None] - theta[None, :]
    ll = float(np.sum(wins * -np.logaddexp(0.0, -d)))
    ll += prior * float(np.sum(-0.5 * np.logaddexp(0.0, -theta) - 0.5 * np.logaddexp(0.0, theta)))
    return ll


def fit_bradley_terry(
    n: int,
    outcomes: Sequence[Outcome],
    *,
    prior: float = 0.1,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> np.ndarray:
    """Log-strengths (centered to mean 0) of `n` players from their pair-wise outcomes."""
    if n == 0:
        return np.zeros(0)
    if prior < 0:
        raise ValueError(f"prior={prior} must be >= 0")
    wins = win_matrix(n, outcomes)
    games = wins + wins.T
    theta = np.zeros(n)
    obj = log_likelihood(theta, wins, prior)
    for _ in range(max_iter):
        s = _sigmoid(theta[:, None] - theta[None, :])
        sp = _sigmoid(theta)
        grad = wins.sum(1) - (games * s).sum(1) + prior * (0.5 - sp)
        c = games * s * (1.0 - s)
        hess = c - np.diag(c.sum(1) + prior * sp * (1.0 - sp))
        step = np.linalg.lstsq(hess, -grad, rcond=None)[0]
        t = 1.0
        while True:
            cand = theta + t * step
            new = log_likelihood(cand, wins, prior)
            if new >= obj - 1e-12 or t < 1e-6:
                break
            t *= 0.5
        theta, delta, obj = cand, float(np.max(np.abs(cand - theta))), new
        if delta < tol:
            break
    return theta - theta.mean()

