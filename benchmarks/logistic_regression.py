"""`make bench`, logistic-regression part: MAP fit + predict at n = 1e6 rows against
scikit-learn's LogisticRegression (lbfgs) with the matching C (target: not slower).

Ours: Newton/IRLS (``analytic.logistic_regression.fit_map``) then
``sigmoid(Phi w)``.  Theirs: ``LogisticRegression(C=prior_sd**2,
fit_intercept=False, solver="lbfgs")`` on the same Phi (intercept as a column,
so penalised like ours) then ``predict_proba``.  Both get the same arrays and
one BLAS thread; the best of three runs is kept, and the two optima are
compared so that a fast but wrong fit cannot win.
"""

from __future__ import annotations

import numpy as np
from _timing import best_with_result  # one BLAS thread: import it before numpy
from scipy import special


def one(n: int = 1_000_000, p: int = 4, prior_sd: float = 1.0, seed: int = 0) -> dict:
    from sklearn.linear_model import LogisticRegression

    import analytic.logistic_regression as alr

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p))
    phi = np.column_stack([np.ones(n), x])
    w_true = np.linspace(-0.5, 1.0, p + 1)
    y = (rng.uniform(size=n) < special.expit(phi @ w_true)).astype(float)

    def ours():
        w = alr.fit_map(phi=phi, y=y, prior_sd=prior_sd).w
        return w, special.expit(phi @ w)

    def theirs():
        model = LogisticRegression(
            C=prior_sd**2, fit_intercept=False, solver="lbfgs", max_iter=1000
        ).fit(phi, y)
        return model.coef_[0], model.predict_proba(phi)[:, 1]

    t_ours, (w_ours, p_ours) = best_with_result(ours)
    t_theirs, (w_theirs, p_theirs) = best_with_result(theirs)
    return {
        "n": n,
        "d": p + 1,
        "ours_s": t_ours,
        "sklearn_s": t_theirs,
        "ratio": t_ours / t_theirs,
        "max_abs_w_diff": float(np.max(np.abs(w_ours - w_theirs))),
        "max_abs_prob_diff": float(np.max(np.abs(p_ours - p_theirs))),
    }


def main() -> None:
    r = one()
    print(
        f"logistic-regression MAP fit + predict, n={r['n']:,}, d={r['d']}: "
        f"ours {r['ours_s']:.3f} s, scikit-learn lbfgs {r['sklearn_s']:.3f} s, "
        f"ratio {r['ratio']:.2f} (target <= 1); max |w diff| {r['max_abs_w_diff']:.1e}, "
        f"max |prob diff| {r['max_abs_prob_diff']:.1e}"
    )


if __name__ == "__main__":
    main()
