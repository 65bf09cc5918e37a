import numpy as np
import pytest
from hopforge.filters.bradley_terry import fit_bradley_terry, log_likelihood, win_matrix
from scipy.optimize import minimize

# A hand-made tournament of 4 players: (i, j, score of i); 0.5 is a tie.
TOURNAMENT = [
    (0, 1, 1.0), (0, 1, 1.0), (0, 1, 0.0),
    (0, 2, 1.0), (0, 2, 1.0), (0, 2, 0.5),
    (0, 3, 1.0), (3, 0, 1.0),
    (1, 2, 1.0), (2, 1, 1.0), (1, 2, 1.0),
    (1, 3, 0.5), (3, 1, 0.0),
    (2, 3, 0.0), (2, 3, 1.0),
]


def direct_mle(n: int, outcomes: list[tuple[int, int, float]], prior: float) -> np.ndarray:
    """Maximize the penalized likelihood directly with scipy (the reference)."""
    w = win_matrix(n, outcomes)
    res = minimize(lambda th: -log_likelihood(th, w, prior), np.zeros(n), method="BFGS",
                   options={"gtol": 1e-10})
    return res.x - res.x.mean()


@pytest.mark.parametrize("prior", [0.0, 0.1, 2.0])
def test_fit_matches_direct_likelihood_maximization(prior: float) -> None:
    theta = fit_bradley_terry(4, TOURNAMENT, prior=prior)
    assert theta == pytest.approx(direct_mle(4, TOURNAMENT, prior), abs=1e-4)
    assert abs(theta.mean()) < 1e-9


def test_unpenalized_fit_satisfies_the_score_equations() -> None:
    # At the MLE each player's expected wins equal its observed wins (ties count half).
    theta = fit_bradley_terry(4, TOURNAMENT, prior=0.0)
    w = win_matrix(4, TOURNAMENT)
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    assert ((w + w.T) * p).sum(1) == pytest.approx(w.sum(1), abs=1e-6)


def test_perfect_separation_and_ties_stay_finite() -> None:
    chain = [(0, 1, 1.0), (1, 2, 1.0), (0, 2, 1.0)]
    theta = fit_bradley_terry(3, chain, prior=0.1)
    assert np.all(np.isfinite(theta))
    assert theta[0] > theta[1] > theta[2]
    assert theta == pytest.approx(direct_mle(3, chain, 0.1), abs=1e-4)
    ties = fit_bradley_terry(3, [(0, 1, 0.5), (1, 2, 0.5)], prior=0.1)
    assert ties == pytest.approx(np.zeros(3), abs=1e-9)
    assert fit_bradley_terry(1, []).tolist() == [0.0]
    assert fit_bradley_terry(0, []).size == 0


def test_bad_outcomes_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot play itself"):
        fit_bradley_terry(2, [(1, 1, 1.0)])
    with pytest.raises(ValueError, match="must lie in"):
        fit_bradley_terry(2, [(0, 1, 2.0)])
