"""Our diagnostics (compare/core/ess.py) are ArviZ's, quantity by quantity.

The references are ``arviz_stats.base.array_stats.ess(method="mean" | "bulk" |
"tail")`` and ``rhat(method="rank")`` themselves. The two compute the same sums in
another order (dot products or one batched FFT against one FFT per quantity), so
they agree to round-off: rtol 1e-9, where the values differ at ~1e-14. The
cases reach every branch of Geyer's sequences:
a stop at the first pair (negatively correlated draws), a stop after a few
lags, a monotone cap, the lags running out (4 to 11 draws), the FFT past the
direct lags (phi = 0.95, 0.99), and ArviZ's own special cases (a NaN, an
infinite value, a constant series, one constant only after the split), and
ties among the ranks (rounded draws).
"""

from __future__ import annotations

import numpy as np
import pytest
from arviz_stats.base import array_stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compare.core.ess as ess_module
from compare.core.ess import ess_bulk, ess_mean, ess_tail, rhat_rank

RTOL = 1e-9

#: Ours and ArviZ's, by name.
METHODS = {
    "mean": (ess_mean, lambda a: array_stats.ess(a, method="mean")),
    "bulk": (ess_bulk, lambda a: array_stats.ess(a, method="bulk")),
    "tail": (ess_tail, lambda a: array_stats.ess(a, method="tail", prob=(0.05, 0.95))),
    "rhat": (rhat_rank, lambda a: array_stats.rhat(a, method="rank")),
}


def _arviz(series: np.ndarray, method: str = "mean") -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(METHODS[method][1](series), dtype=float)


def _same(series: np.ndarray, method: str) -> bool:
    return np.allclose(
        METHODS[method][0](series), _arviz(series, method), rtol=RTOL, equal_nan=True
    )


def _ar1(rng: np.random.Generator, phi: float, shape: tuple[int, ...]) -> np.ndarray:
    noise = rng.standard_normal(shape)
    out = np.empty(shape)
    out[..., 0] = noise[..., 0]
    for t in range(1, shape[-1]):
        out[..., t] = phi * out[..., t - 1] + noise[..., t]
    return out


def _cases(seed: int) -> list[np.ndarray]:
    """(quantity, chain, draw) series over draw counts, chain counts and correlations;
    the first quantity of each is an indicator, as the quantile tests give, and the
    second is rounded (ties among its ranks)."""
    rng = np.random.default_rng(seed)
    out = []
    for n_draw in (4, 5, 6, 7, 8, 9, 11, 20, 51, 400, 1001):
        for n_chain in (1, 2, 4):
            for phi in (-0.9, -0.5, 0.0, 0.3, 0.95, 0.99):
                x = _ar1(rng, phi, (4, n_chain, n_draw))
                x[0] = (x[0] > 0.2).astype(float)
                x[1] = np.round(x[1])
                out.append(x)
    return out


CASES = _cases(20261206)


@pytest.mark.parametrize("method", list(METHODS))
def test_equals_arviz_over_draws_chains_and_correlations(method):
    ours = METHODS[method][0]
    for x in CASES:
        np.testing.assert_allclose(
            ours(x), _arviz(x, method), rtol=RTOL, err_msg=str(x.shape), equal_nan=True
        )


@pytest.mark.parametrize("direct_lags", [2, 3, 1001])
def test_the_fft_past_the_direct_lags_gives_the_same(monkeypatch, direct_lags):
    """However many lags are computed directly (2: nearly every quantity goes on to
    the FFT; 1001: none does), the answer is ArviZ's."""
    monkeypatch.setattr(ess_module, "DIRECT_LAGS", direct_lags)
    for x in CASES[::5]:
        for method in ("mean", "bulk"):
            assert _same(x, method), (x.shape, method)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
def test_arvizs_special_cases_are_arvizs(rng):
    """ArviZ's answers, and no warning of ours (ArviZ warns of the NaN and overflow)."""
    x = _ar1(rng, 0.5, (7, 4, 101))
    x[1] = 3.0  # constant: ArviZ gives the number of draws after the split
    x[2, 0, 5] = np.nan  # a NaN: NaN
    x[3] = 1.0
    x[3, 0, 50] = 2.0  # odd draws: the split drops the middle draw, constant after it
    x[4, 1, 7] = np.inf
    x[5, 2, 3] = 1e300  # finite, but its square overflows
    for method, (ours, _) in METHODS.items():
        got, want = ours(x), _arviz(x, method)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=method)
        np.testing.assert_allclose(got, want, rtol=RTOL, err_msg=method)
        short = rng.standard_normal((2, 4, 3))  # fewer than 4 draws: NaN, as ArviZ
        assert np.isnan(ours(short)).all() and np.isnan(_arviz(short, method)).all()
        assert ours(np.empty((0, 4, 100))).shape == (0,)
    assert np.isnan(ess_mean(x)[2]) and ess_mean(x)[1] == ess_mean(x)[3] == 400.0
    one_chain = rng.standard_normal((2, 1, 100))  # R-hat needs two chains: NaN
    assert np.isnan(rhat_rank(one_chain)).all() and _same(one_chain, "rhat")


def test_a_series_that_is_not_quantity_chain_draw_is_refused():
    with pytest.raises(ValueError, match=r"\(quantity, chain, draw\)"):
        ess_mean(np.zeros((4, 100)))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    hnp.arrays(
        float,
        hnp.array_shapes(min_dims=3, max_dims=3, min_side=1, max_side=30),
        elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
    )
)
def test_equals_arviz_on_any_finite_series(x):
    for method, (ours, _) in METHODS.items():
        np.testing.assert_allclose(
            ours(x), _arviz(x, method), rtol=RTOL, equal_nan=True, err_msg=method
        )


@pytest.mark.parametrize(
    "method, helper, planted",
    [
        ("mean", "_monotone", lambda pairs: pairs),  # no monotone cap
        ("mean", "_split_chains", lambda x: x),  # chains not split
        (
            "mean",
            "_split_chains",  # an odd number of draws split at the wrong draw
            lambda x: np.concatenate(
                [x[..., : x.shape[2] // 2], x[..., x.shape[2] // 2 :][..., : x.shape[2] // 2]], 1
            ),
        ),
        ("bulk", "_average_ranks", lambda flat: np.argsort(np.argsort(flat, 1), 1) + 1.0),  # ties
        ("rhat", "_rhat", lambda y: np.sqrt(np.var(y.mean(axis=2), axis=1, ddof=1) + 1)),
    ],
    ids=["no-monotone-cap", "no-split", "split-off-by-one", "ties-not-averaged", "wrong-rhat"],
)
def test_a_planted_error_is_caught(monkeypatch, method, helper, planted):
    """Power: the cases above tell ArviZ's diagnostics from ones without Geyer's
    monotone cap, on unsplit chains, split at the wrong draw, with ties ranked
    apart, and with another R-hat formula."""
    monkeypatch.setattr(ess_module, helper, planted)
    assert any(not _same(x, method) for x in CASES)
