"""The effective sample size for the mean, for many quantities at once.

``ess_mean(series)`` is ``arviz_stats.base.array_stats.ess(series,
method="mean")``: split chains, FFT autocovariances, Geyer's initial positive
and initial monotone sequences (Vehtari et al. 2021, "Rank-normalization,
folding, and localization", eqs. 10-11 without the rank normalisation;
arviz-stats ``_DiagnosticsBase._ess``), ``tau >= 1 / log10(n)``.

Why
---
ArviZ loops in Python over the quantities (``make_ufunc``), each with its own
FFT and its own ``while`` loop over the lags. The agreement test asks for
tens to a thousand quantities per check (a classifier's 946 covariances), and
a calibration study asks thousands of times: ``test_iid_null_is_calibrated``
spent half its time there. Here one FFT serves every quantity and the two
sequences are array operations over the lags: the same numbers (equal to
ArviZ's to round-off, ``tests/compare/core/test_ess.py``), the speed-up is
printed by ``benchmarks/ess.py``.

Quantities that ArviZ treats as special cases (fewer than 4 draws, a
non-finite value, a constant series) go to ArviZ itself, one by one, so every
answer is ArviZ's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ess_mean"]


def ess_mean(series: np.ndarray) -> np.ndarray:
    """ArviZ's ``ess(method="mean")`` of each quantity.

    Parameters
    ----------
    series : array of shape (quantity, chain, draw)

    Returns
    -------
    array of shape (quantity,)
        NaN where ArviZ gives NaN (a NaN draw, fewer than 4 draws).
    """
    x = np.asarray(series, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"series must have shape (quantity, chain, draw), got {x.shape}")
    n_q, _, n_draw = x.shape
    out = np.full(n_q, np.nan)
    if n_q == 0:
        return out
    half = n_draw // 2
    # The fast path needs what ArviZ's general case needs: >= 4 draws, finite
    # values, a series that is not constant (ArviZ's test: range < resolution).
    # The fast path is ArviZ's general case: >= 4 draws, finite values and (checked
    # on the split chains, as ArviZ checks) not a constant series.
    fast = np.zeros(n_q, dtype=bool)
    if n_draw >= 4:
        fast = np.isfinite(x).all(axis=(1, 2))
    if fast.any():
        values, ok = _ess_split(x[fast], half)
        idx = np.flatnonzero(fast)
        out[idx[ok]] = values[ok]
        fast[idx[~ok]] = False
    for q in np.flatnonzero(~fast):
        out[q] = _arviz_ess_mean(x[q])
    return out


#: The lags computed directly, as dot products, before the FFT: Geyer's sequence
#: stops within them for nearly independent draws (NUTS's usual case), where an FFT
#: of every lag costs most of ArviZ's time. A quantity whose sequence runs past them
#: gets every lag from one FFT, as ArviZ computes them.
DIRECT_LAGS = 12


def _ess_split(x: np.ndarray, half: int) -> tuple[np.ndarray, np.ndarray]:
    """ESS of each quantity of ``x`` (quantity, chain, draw), its chains split in two
    halves of ``half`` draws as ArviZ's ``_split_chains`` does; and whether each is
    ArviZ's general case (not constant after the split, a positive variance)."""
    with np.errstate(over="ignore", invalid="ignore"):  # such quantities go to ArviZ
        return _ess_split_finite(_split_chains(x, half))


def _ess_split_finite(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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

    tau, done = _geyer_tau(_autocorrelation(acov, mean_var, safe), n)
    late = np.flatnonzero(~done)
    if late.size:  # every lag, from one FFT
        every = _fft_autocovariance(centred[late])
        tau[late], _ = _geyer_tau(_autocorrelation(every, mean_var[late], safe[late]), n)
    size = float(n_chain * n)
    ess = size / np.maximum(tau, 1.0 / np.log10(size))
    return ess, ok & np.isfinite(ess)


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


def _geyer_tau(rho: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """ArviZ's ``tau_hat`` from the autocorrelations ``rho`` (quantity, lag) of the
    first lags of series of ``n`` draws, and whether those lags were enough.

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
    return -1.0 + 2.0 * total + after, done


def _split_chains(x: np.ndarray, half: int) -> np.ndarray:
    """ArviZ's split chains: each chain's first and last ``half`` draws as two chains,
    the first halves first; (quantity, chain, draw) -> (quantity, 2 chain, half)."""
    return np.concatenate([x[:, :, :half], x[:, :, -half:]], axis=1)


def _monotone(pairs: np.ndarray) -> np.ndarray:
    """Geyer's initial monotone sequence: each pair's sum capped by those before it
    (ArviZ sets a larger pair to the previous one's sum), a running minimum."""
    return np.minimum.accumulate(pairs, axis=1)


def _arviz_ess_mean(values: np.ndarray) -> float:
    """ArviZ's own answer for one quantity (chain, draw)."""
    from arviz_stats.base import array_stats  # heavy: ArviZ only when draws are checked

    return float(np.asarray(array_stats.ess(values, method="mean"), dtype=float))
