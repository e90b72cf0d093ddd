"""`make bench`, classification part: naive Bayes fit + predict at n = 1e6 rows
against the matching scikit-learn estimator (target: not slower, ratio <= 1).

"Fit" is the sufficient statistics and the conjugate update (the smoothed
estimates); "predict" is log P(y | x) for every row, normalised in log space.
Both sides get the same arrays and one BLAS thread; the best of three runs
is kept.  The multinomial variant is also timed with the exact posterior
predictive (Dirichlet-multinomial, lgamma per word and row), which
scikit-learn does not compute; so is the Gaussian one (Student-t per feature),
whose plug-in is GaussianNB's MLE (var_smoothing=0).
"""

from __future__ import annotations

import numpy as np
from _timing import best  # one BLAS thread: import it before numpy


def _data(variant: str, n: int, rng: np.random.Generator):
    c = 3
    y = rng.integers(0, c, size=n)
    if variant == "multinomial":
        v = 50
        rates = rng.gamma(1.0, 1.0, size=(c, v)) * 0.1
        x = rng.poisson(rates[y]).astype(float)
        sizes = None
    elif variant == "bernoulli":
        v = 50
        p = rng.uniform(0.05, 0.6, size=(c, v))
        x = (rng.random((n, v)) < p[y]).astype(float)
        sizes = None
    elif variant == "gaussian":
        v = 20
        x = rng.normal(rng.normal(size=(c, v))[y], rng.uniform(0.5, 2.0, size=(c, v))[y])
        sizes = None
    else:
        sizes = (4,) * 10
        x = np.column_stack([rng.integers(0, k, size=n) for k in sizes])
    return x, y, c, sizes


def one(variant: str, n: int = 1_000_000, alpha: float = 1.0) -> dict[str, float]:
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, MultinomialNB
    from threadpoolctl import threadpool_limits

    import analytic.naive_bayes as nb

    rng = np.random.default_rng(0)
    x, y, c, sizes = _data(variant, n, rng)
    names = (
        [f"f{j}" for j in range(x.shape[1])]
        if sizes is None
        else [f"f{j}={k}" for j, kk in enumerate(sizes) for k in range(kk)]
    )
    classes = [f"c{k}" for k in range(c)]

    def fit():
        return nb.solve(
            variant=variant,
            x=x,
            y=y,
            classes=classes,
            feature_names=names,
            alpha=alpha,
            class_concentration=1.0,
            n_categories=sizes,
        ).posterior

    post = fit()
    prior = post.class_mean  # scikit-learn gets E[pi | D] so the answers are the same
    if variant == "multinomial":
        sk = MultinomialNB(alpha=alpha, class_prior=prior)
    elif variant == "bernoulli":
        sk = BernoulliNB(alpha=alpha, binarize=None, class_prior=prior)
    elif variant == "gaussian":  # the MLE plug-in: class shares, means, variances
        sk = GaussianNB(var_smoothing=0.0)
    else:
        sk = CategoricalNB(alpha=alpha, class_prior=prior)

    def ours():
        p = fit()
        return nb.predict_log_proba(
            posterior=p, x=x, exact=variant not in ("multinomial", "gaussian")
        )

    def theirs():
        return sk.fit(x, y).predict_log_proba(x)

    with threadpool_limits(limits=1):
        t_ours, t_sk = best(ours), best(theirs)
        t_fit, t_sk_fit = best(fit), best(lambda: sk.fit(x, y))
        t_exact = (
            best(lambda: nb.predict_log_proba(posterior=post, x=x, exact=True), 1)
            if variant in ("multinomial", "gaussian")
            else None
        )
    np.testing.assert_allclose(ours(), theirs(), rtol=1e-8, atol=1e-10)
    return {
        "ours": t_ours,
        "sklearn": t_sk,
        "fit": t_fit,
        "sklearn_fit": t_sk_fit,
        "exact_predict": t_exact,
        "shape": x.shape,
    }


def main() -> None:
    print(
        "naive Bayes fit + predict_log_proba, n = 1e6 rows, 3 classes, one BLAS thread "
        "(same answers to 1e-8)"
    )
    print(
        f"   {'variant':12s} {'features':>9s} {'ours':>8s} {'sklearn':>8s} {'ratio':>6s}   "
        f"{'fit':>6s} {'sk fit':>6s}   target ours/sklearn <= 1"
    )
    for variant in ("multinomial", "bernoulli", "categorical", "gaussian"):
        r = one(variant)
        ratio = r["ours"] / r["sklearn"]
        print(
            f"   {variant:12s} {r['shape'][1]:9d} {r['ours']:7.3f}s {r['sklearn']:7.3f}s "
            f"{ratio:6.2f}   {r['fit']:5.3f}s {r['sklearn_fit']:5.3f}s   "
            f"{'ok' if ratio <= 1.0 else 'MISSED'}"
        )
        if r["exact_predict"] is not None:
            what = "Dirichlet-multinomial" if variant == "multinomial" else "Student-t"
            print(
                f"   {'':12s} exact {what} predictive (no sklearn "
                f"counterpart): {r['exact_predict']:.3f}s"
            )


if __name__ == "__main__":
    main()
