"""`make bench`, gaussian-classifier part: fit + predict_proba at n = 1e6 rows against
scikit-learn's LinearDiscriminantAnalysis(solver='lsqr') and
QuadraticDiscriminantAnalysis (target: not slower, ratio <= 1).

"Fit" is the per-class sufficient statistics and the MLE (plus, for the
linear rule, the discriminants w_k, w_k0; for the quadratic rule, the
per-class precision factors); "predict" is P(C_k | x) for every row,
normalised in log space.  Both sides get the same arrays (K = 3 classes,
d = 10) and one BLAS thread; the best of three runs is kept.  The Bayesian
Student-t predictive is timed too (scikit-learn has no counterpart).

    .venv/bin/python benchmarks/gaussian_classifier.py
"""

from __future__ import annotations

import numpy as np
from _timing import best  # one BLAS thread: import it before numpy


def run(n: int = 1_000_000, d: int = 10, k: int = 3) -> dict[str, float]:
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as LDA
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA
    from threadpoolctl import threadpool_limits

    import analytic.gaussian_classifier as gc

    rng = np.random.default_rng(0)
    y = rng.integers(0, k, size=n)
    centres = rng.normal(size=(k, d)) * 2.0
    scales = rng.uniform(0.5, 1.5, size=(k, d))
    x = centres[y] + rng.normal(size=(n, d)) * scales[y]

    def ours_lda():
        fit = gc.fit(x=x, labels=y, n_classes=k)
        lin = gc.linear_discriminant(
            priors=fit.priors, means=fit.means, covariance=fit.pooled_covariance
        )
        return np.exp(lin.log_proba(x))

    def ours_qda():
        fit = gc.fit(x=x, labels=y, n_classes=k)
        quad = gc.quadratic_discriminant(
            priors=fit.priors, means=fit.means, covariances=fit.covariances
        )
        return np.exp(quad.log_proba(x))

    def sk_lda():
        return LDA(solver="lsqr").fit(x, y).predict_proba(x)

    def sk_qda():
        return QDA(reg_param=0.0).fit(x, y).predict_proba(x)

    def ours_bayes():
        stats = gc.class_stats(x=x, labels=y, n_classes=k)
        ans = gc.answer_from_stats(stats=stats, prior=gc.default_prior(x=x[:1000]))
        return np.exp(ans.predictive.log_proba(x))

    with threadpool_limits(limits=1):
        # Same answers first (a benchmark of different computations means nothing).
        np.testing.assert_allclose(ours_lda()[:1000], sk_lda()[:1000], atol=1e-8)
        np.testing.assert_allclose(ours_qda()[:1000], sk_qda()[:1000], atol=1e-8)
        out = {
            "lda_ours": best(ours_lda),
            "lda_sklearn": best(sk_lda),
            "qda_ours": best(ours_qda),
            "qda_sklearn": best(sk_qda),
            "bayes_student_t": best(ours_bayes),
        }
    return out


def main() -> None:
    t = run()
    print("gaussian-classifier: fit + predict_proba, n = 1e6 rows, d = 10, K = 3, 1 thread")
    for rule in ("lda", "qda"):
        ours, sk = t[f"{rule}_ours"], t[f"{rule}_sklearn"]
        print(
            f"  {rule.upper()}: ours {ours:.3f} s, scikit-learn {sk:.3f} s, "
            f"ratio {ours / sk:.2f} ({'not slower' if ours <= sk else 'SLOWER'})"
        )
    print(
        f"  Bayesian Student-t predictive (stats + posterior + predict): "
        f"{t['bayes_student_t']:.3f} s"
    )


if __name__ == "__main__":
    main()
