"""ArviZ's convergence diagnostics for many quantities at once.

``ess_mean``, ``ess_bulk``, ``ess_tail`` and ``rhat_rank`` are
``arviz_stats.base.array_stats.ess(series, method="mean" | "bulk" | "tail")``
and ``rhat(series, method="rank")``: split chains, rank normalisation,
autocovariances, Geyer's initial positive and initial monotone sequences,
``tau >= 1 / log10(n)`` (Vehtari et al. 2021, "Rank-normalization, folding,
and localization", eqs. 10-11; arviz-stats ``_DiagnosticsBase``).

Why
---
ArviZ loops in Python over the quantities (``make_ufunc``), each with its own
FFT of every lag and its own ``while`` loop over them. The agreement test asks
for tens to a thousand quantities per check (a classifier's 946 covariances),
every run diagnoses each parameter, and a calibration study does both
thousands of times: ``test_iid_null_is_calibrated`` spent half its time in
ArviZ's ESS. Here the first lags are dot products over every quantity at once,
the sequences are array operations, and only quantities whose sequence runs
past those lags get one batched FFT: the same numbers (equal to ArviZ's to
round-off, ``tests/compare/core/test_ess.py``); ``benchmarks/ess.py`` prints
the speed-up.

Quantities that ArviZ treats as special cases (fewer than 4 draws, one chain
for R-hat, a non-finite value, a constant series) go to ArviZ itself, one by
one, so every answer is ArviZ's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["ess_bulk", "ess_mean", "ess_mean_lags", "ess_tail", "rhat_rank"]


def ess_mean(series: np.ndarray) -> np.ndarray:
    """ArviZ's ``ess(method="mean")`` of each quantity of ``series`` (quantity, chain,
    draw): an array of shape (quantity,), NaN where ArviZ gives NaN (a NaN draw,
    fewer than 4 draws). So for the functions below."""
    return _each(series, "mean", lambda x: _ess_split(_split_chains(x)))


def ess_mean_lags(series: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ess_mean` and, for each quantity, the number of autocorrelation lags
    Geyer's sequence summed (NaN where ArviZ answered: a constant series).

    The lags say how uncertain the ESS is: the sum of ``L`` estimated
    autocorrelations of ``N`` draws has a relative variance of about
    ``2 (2 L + 1) / N`` (Bartlett's formula for a flat window), which the
    agreement test turns into the degrees of freedom of its standard errors."""
    lags_out: list[tuple[np.ndarray, np.ndarray]] = []

    def fast(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ess, ok, lags = _ess_split(_split_chains(x), with_lags=True)
        lags_out.append((lags, ok))
        return ess, ok

    ess = _each(series, "mean", fast)
    lags = np.full(len(ess), np.nan)
    x = np.asarray(series, dtype=float)
    if lags_out:
        general = np.isfinite(x).all(axis=(1, 2)) if x.shape[2] >= 4 else np.zeros(len(x), bool)
        idx = np.flatnonzero(general)
        found, ok = lags_out[0]
        lags[idx[ok]] = found[ok]
    return ess, lags


def ess_bulk(series: np.ndarray) -> np.ndarray:
    """ArviZ's ``ess(method="bulk")``: the ESS of the rank-normalised split chains."""
    return _each(series, "bulk", lambda x: _ess_split(_z_scale(_split_chains(x))))


def ess_tail(series: np.ndarray, prob: tuple[float, float] = (0.05, 0.95)) -> np.ndarray:
    """ArviZ's ``ess(method="tail", prob=prob)``: the smaller ESS of the indicators
    ``x <= q`` at the two quantiles ``prob`` = (low, high), NumPy's linear quantiles
    of all the quantity's draws."""

    def tail(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cuts = np.quantile(x.reshape(len(x), -1), prob, axis=1)  # (2, quantity)
        below = x[None] <= cuts[:, :, None, None]  # (2, quantity, chain, draw)
        ess = ess_mean(below.reshape(-1, *x.shape[1:]).astype(float)).reshape(2, -1)
        return ess.min(axis=0), np.ones(len(x), dtype=bool)

    return _each(series, "tail", tail, prob=prob)


def rhat_rank(series: np.ndarray) -> np.ndarray:
    """ArviZ's ``rhat(method="rank")``: the larger split R-hat of the rank-normalised
    draws and of the rank-normalised distances from the median (Vehtari et al. 2021);
    NaN for one chain, as ArviZ."""

    def rank(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = _split_chains(x)
        median = np.median(y.reshape(len(y), -1), axis=1)[:, None, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # such quantities go to ArviZ
            rhat = np.maximum(_rhat(_z_scale(y)), _rhat(_z_scale(np.abs(y - median))))
        return rhat, np.isfinite(rhat)

    return _each(series, "rank", rank, min_chains=2)


def _each(
    series: np.ndarray,
    method: str,
    fast: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    *,
    min_chains: int = 1,
    **kwargs: Any,
) -> np.ndarray:
    """``fast`` on the quantities that are ArviZ's general case (>= 4 draws,
    ``min_chains``, finite values); ArviZ itself, one quantity at a time, on the
    others and on those ``fast`` marks as not its case (a constant series)."""
    x = np.asarray(series, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"series must have shape (quantity, chain, draw), got {x.shape}")
    n_q, n_chain, n_draw = x.shape
    out = np.full(n_q, np.nan)
    general = np.zeros(n_q, dtype=bool)
    if n_draw >= 4 and n_chain >= min_chains:
        general = np.isfinite(x).all(axis=(1, 2))
    if general.any():
        values, ok = fast(x[general])
        idx = np.flatnonzero(general)
        out[idx[ok]] = values[ok]
        general[idx[~ok]] = False
    for q in np.flatnonzero(~general):
        out[q] = _arviz(method, x[q], **kwargs)
    return out


def _z_scale(y: np.ndarray) -> np.ndarray:
    """ArviZ's ``_z_scale`` of each quantity of ``y`` (quantity, chain, draw): the
    normal quantiles of its average ranks over all its draws, Blom's offset 3/8.
    ``ndtri`` is what ``scipy.stats.norm.ppf`` computes inside (0, 1), where these
    probabilities lie, without its argument checks."""
    from scipy.special import ndtri  # heavy: SciPy only when draws are checked

    flat = y.reshape(len(y), -1)
    ranks = _average_ranks(flat)
    return ndtri((ranks - 3 / 8) / (flat.shape[1] - 2 * 3 / 8 + 1)).reshape(y.shape)


def _average_ranks(flat: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(flat, method="average", axis=1)`` for finite values:
    ranks from 1, ties given their mean rank (whole and half numbers, so exact)."""
    n_q, n = flat.shape
    order = np.argsort(flat, axis=1)
    ordered = np.take_along_axis(flat, order, axis=1)
    first = np.ones((n_q, n), dtype=bool)  # where a run of equal values starts
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    starts = np.flatnonzero(first)  # over all rows: a row always starts a run
    counts = np.diff(np.append(starts, n_q * n))
    mean_rank = (starts % n) + (counts + 1) / 2.0
    ranks = np.empty((n_q, n))
    np.put_along_axis(ranks, order, mean_rank[np.cumsum(first) - 1].reshape(n_q, n), axis=1)
    return ranks


def _rhat(y: np.ndarray) -> np.ndarray:
    """ArviZ's ``_rhat`` of each quantity of split chains ``y`` (quantity, chain, draw)."""
    n = y.shape[2]
    between = n * np.var(y.mean(axis=2), axis=1, ddof=1)
    within = np.var(y, axis=2, ddof=1).mean(axis=1)
    return np.sqrt((between / within + n - 1) / n)


#: The lags computed directly, as dot products, before the FFT: Geyer's sequence
#: stops within them for nearly independent draws (NUTS's usual case), where an FFT
#: of every lag costs most of ArviZ's time. A quantity whose sequence runs past them
#: gets every lag from one FFT, as ArviZ computes them.
DIRECT_LAGS = 12


def _ess_split(y: np.ndarray, *, with_lags: bool = False) -> Any:
    """ArviZ's ``_ess`` of each quantity of the split chains ``y`` (quantity, chain,
    half); and whether each is ArviZ's general case (not constant, as ArviZ checks
    after the split, and a positive variance); with ``with_lags`` also the number
    of lags Geyer's sequence summed."""
    with np.errstate(over="ignore", invalid="ignore"):  # such quantities go to ArviZ
        ess, ok, lags = _ess_split_finite(y)
    return (ess, ok, lags) if with_lags else (ess, ok)


def _ess_split_finite(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_ess_split` on the split chains ``y`` (quantity, chain, half)."""
    n_q, n_chain, n = y.shape
    varies = np.ptp(y.reshape(n_q, -1), axis=1) >= np.finfo(float).resolution
    centred = y - y.mean(axis=2, keepdims=True)
    lags = min(DIRECT_LAGS, n)
    acov = np.empty((n_q, n_chain, lags))
    for t in range(lags):
        acov[:, :, t] = np.einsum("qci,qci->qc", centred[:, :, : n - t], centred[:, :, t:]) / n
    mean_var = acov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if n_chain > 1:
        var_plus = var_plus + np.var(y.mean(axis=2), axis=1, ddof=1)
    ok = varies & np.isfinite(var_plus) & (var_plus > 0)
    safe = np.where(ok, var_plus, 1.0)

    tau, done, lags = _geyer_tau(_autocorrelation(acov, mean_var, safe), n)
    late = np.flatnonzero(~done)
    if late.size:  # every lag, from one FFT
        every = _fft_autocovariance(centred[late])
        tau[late], _, lags[late] = _geyer_tau(
            _autocorrelation(every, mean_var[late], safe[late]), n
        )
    size = float(n_chain * n)
    ess = size / np.maximum(tau, 1.0 / np.log10(size))
    return ess, ok & np.isfinite(ess), lags


def _autocorrelation(acov: np.ndarray, mean_var: np.ndarray, var_plus: np.ndarray) -> np.ndarray:
    """ArviZ's ``rho_hat`` at each lag of ``acov`` (quantity, chain, lag): (quantity, lag)."""
    return 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]


def _fft_autocovariance(centred: np.ndarray) -> np.ndarray:
    """Every lag's autocovariance of centred series (..., draw), as ArviZ's ``autocov``."""
    from scipy.fftpack import next_fast_len  # heavy: SciPy only when draws are checked

    n = centred.shape[-1]
    m = next_fast_len(2 * n)
    spectrum = np.fft.rfft(centred, n=m, axis=-1)
    spectrum *= np.conjugate(spectrum)
    return np.fft.irfft(spectrum, n=m, axis=-1)[..., :n] / n


def _geyer_tau(rho: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ArviZ's ``tau_hat`` from the autocorrelations ``rho`` (quantity, lag) of the
    first lags of series of ``n`` draws, whether those lags were enough, and the
    number of lags summed (``2 K``: the K pairs' lags and the one after them).

    Pairs ``P_0 = 1 + rho_1`` and ``P_k = rho_2k + rho_2k+1`` are summed while
    positive (ArviZ's ``while t < n - 3`` allows pairs k = 1..kmax), made monotone
    by a running minimum, and the first lag after them is added when ArviZ adds it.
    """
    n_q, n_lags = rho.shape
    kmax = max(0, (n - 3) // 2)  # pairs k with 2k - 1 < n - 3
    known = min(kmax, (n_lags - 2) // 2)  # the pairs these lags give
    ks = np.arange(1, known + 1)
    pairs = np.empty((n_q, known + 1))
    pairs[:, 0] = 1.0 + rho[:, 1]
    pairs[:, 1:] = rho[:, 2 * ks] + rho[:, 2 * ks + 1]
    # K = the loop's iterations: pair k is computed while pairs 0..k-1 are positive.
    stops = ~(pairs[:, :known] > 0)
    stopped = stops.any(axis=1)
    k_run = np.where(stopped, np.argmax(np.c_[stops, np.ones(n_q, bool)], axis=1), known)
    done = stopped | (known == kmax)
    monotone = _monotone(pairs)
    within = np.arange(known + 1)[None, :] < k_run[:, None]
    total = np.sum(np.where(within, monotone, 0.0), axis=1)
    rows = np.arange(n_q)
    last_pair = pairs[rows, k_run]
    last_even = rho[rows, 2 * k_run]
    # The lag after the summed pairs: ArviZ keeps the last computed pair's even term
    # when that pair was kept (sum >= 0) or the term is positive; 1 (rho_0) when no
    # pair was computed.
    after = np.where((last_pair >= 0) | (last_even > 0), last_even, 0.0)
    after = np.where(k_run == 0, 1.0, after)
    return -1.0 + 2.0 * total + after, done, 2.0 * k_run


def _split_chains(x: np.ndarray) -> np.ndarray:
    """ArviZ's split chains: each chain's first and last halves (the middle draw of
    an odd number dropped) as two chains, the first halves first:
    (quantity, chain, draw) -> (quantity, 2 chain, draw // 2)."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, -half:]], axis=1)


def _monotone(pairs: np.ndarray) -> np.ndarray:
    """Geyer's initial monotone sequence: each pair's sum capped by those before it
    (ArviZ sets a larger pair to the previous one's sum), a running minimum."""
    return np.minimum.accumulate(pairs, axis=1)


def _arviz(method: str, values: np.ndarray, **kwargs: Any) -> float:
    """ArviZ's own answer for one quantity (chain, draw): ``rhat`` for ``"rank"``,
    else ``ess`` by ``method``."""
    from arviz_stats.base import array_stats  # heavy: ArviZ only when draws are checked

    with np.errstate(all="ignore"):
        if method == "rank":
            value = array_stats.rhat(values, method="rank")
        else:
            value = array_stats.ess(values, method=method, **kwargs)
    return float(np.asarray(value, dtype=float))
