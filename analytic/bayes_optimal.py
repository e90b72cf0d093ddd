"""Finite hypothesis spaces: exact posterior, MAP, Bayes-optimal and Gibbs classifiers.

Model (Mitchell 1997, ch. 6.2-6.8)::

    h ~ prior over H = {h_1, ..., h_M}
    y_i | h ~ Bernoulli(q_hi),  q_hi = P(y_i = 1 | h) (1 - noise) + (1 - P(y_i = 1 | h)) noise

``P(y = 1 | h)`` is 0 or 1 for a deterministic hypothesis (a concept) and any
probability for a probabilistic one (a diagnosis given a test result);
``noise`` flips each observed label with that probability.  The posterior is
``P(h | D) = P(D | h) P(h) / P(D)``, computed in log space and normalised
with ``logsumexp``.

On a new instance x, with ``p(x) = P(+ | x, D) = sum_h P(+ | h, x) P(h | D)``:

* the **MAP** classifier answers with the most probable hypothesis h_MAP;
* the **Bayes-optimal** classifier answers ``+`` when p(x) > 1/2 (Mitchell
  eq. 6.18): no classifier using the same space and prior does better on
  average;
* the **Gibbs** algorithm draws h ~ P(h | D) and answers with it.

If the true label of x is drawn from the posterior predictive (the target is
a hypothesis drawn from P(h | D), the Bayesian setting of Haussler, Kearns &
Schapire 1994), the expected errors at x are ``min(p, 1 - p)`` (Bayes-optimal),
``p`` or ``1 - p`` (MAP, by its answer) and ``2 p (1 - p)`` (Gibbs), so
``E[error_Gibbs] <= 2 E[error_BayesOptimal]`` pointwise and on average.

Concept learning (Mitchell ch. 2): with noise-free data and a uniform prior,
``P(h | D) = 1 / |VS|`` on the version space VS (the hypotheses consistent
with D) and 0 elsewhere (Mitchell eq. 6.4).  :func:`conjunctions` builds the
space of conjunctive hypotheses over attribute values (each attribute
constrained to one value or ``?``, plus the empty hypothesis that says
``-`` everywhere): ``prod_a (K_a + 1) + 1`` semantically distinct hypotheses
(973 for EnjoySport).

What is compared with MCMC: a discrete posterior has no density to whiten,
so the parameters are the indicators ``1{h in B_b}`` of a partition of H into
buckets (:func:`buckets`): the most probable hypotheses one by one, the rest
lumped as ``other``.  Their means are the probabilities P(h in B_b | D);
their joint law is categorical, singular like a Dirichlet's (they sum to
one), so the agreement test whitens the first B - 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from analytic._base import ExactAnswer
from analytic._frozen import freeze

#: Largest hypothesis space :func:`conjunctions` enumerates.
MAX_HYPOTHESES = 200_000

EMPTY = "<empty>"


# --- the problem: hypotheses, data, new instances ------------------------------
@dataclass(frozen=True, eq=False)
class FiniteProblem:
    """A finite hypothesis space with its training labels and new instances.

    Attributes
    ----------
    hypotheses : tuple of str, length M
        Hypothesis names.
    prob : array of shape (M, n)
        ``P(y_i = 1 | h)`` on the training instances, before label noise.
    y : array of shape (n,)
        Observed 0/1 labels.
    new_prob : array of shape (M, m)
        ``P(+ | h, x)`` on the new instances to classify.
    new_names : tuple of str, length m
        Names of the new instances.
    factors : tuple of int
        Sizes of the categorical coordinates whose mixed-radix index (C
        order, last fastest) is the hypothesis index; their product is M,
        or M - 1 when ``has_empty``.
    has_empty : bool
        The last hypothesis is the empty conjunction, outside the product.
    features : tuple of str
        Attribute names (or a description of the instances).
    """

    hypotheses: tuple[str, ...]
    prob: np.ndarray
    y: np.ndarray
    new_prob: np.ndarray
    new_names: tuple[str, ...]
    factors: tuple[int, ...]
    has_empty: bool = False
    features: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        m = len(self.hypotheses)
        if m < 2:
            raise ValueError(f"a hypothesis space needs at least 2 hypotheses, got {m}")
        prob = np.asarray(self.prob, dtype=float)
        if prob.ndim != 2 or prob.shape[0] != m:
            raise ValueError(f"prob must have shape ({m}, n), got {prob.shape}")
        if not np.all((prob >= 0) & (prob <= 1)):
            raise ValueError("every P(y = 1 | h) must lie in [0, 1]")
        y = np.asarray(self.y)
        if y.shape != (prob.shape[1],) or not np.all((y == 0) | (y == 1)):
            raise ValueError(f"y must be {prob.shape[1]} labels coded 0/1")
        new = np.asarray(self.new_prob, dtype=float)
        if new.ndim != 2 or new.shape[0] != m or new.shape[1] != len(self.new_names):
            raise ValueError(
                f"new_prob must have shape ({m}, {len(self.new_names)}), got {new.shape}"
            )
        expected = int(np.prod(self.factors)) + int(self.has_empty)
        if expected != m:
            raise ValueError(
                f"factors {self.factors} (+ empty: {self.has_empty}) index "
                f"{expected} hypotheses, not {m}"
            )

    def __len__(self) -> int:
        return int(np.asarray(self.y).size)


def explicit(
    *,
    hypotheses: Sequence[str],
    prob: np.ndarray,
    y: np.ndarray,
    new_prob: np.ndarray | None = None,
    new_names: Sequence[str] = (),
    features: Sequence[str] = (),
) -> FiniteProblem:
    """A hypothesis space listed one hypothesis at a time (textbook examples).

    Parameters
    ----------
    hypotheses : sequence of str, length M
    prob : array of shape (M, n)
        ``P(y_i = 1 | h)`` for each observation.
    y : array of shape (n,)
    new_prob : array of shape (M, m), optional
        ``P(+ | h, x)`` for each new instance.
    new_names : sequence of str, length m
    """
    hyps = tuple(str(h) for h in hypotheses)
    new_prob = np.zeros((len(hyps), 0)) if new_prob is None else np.asarray(new_prob, float)
    return FiniteProblem(
        hypotheses=hyps,
        prob=np.asarray(prob, dtype=float),
        y=np.asarray(y, dtype=np.int64),
        new_prob=new_prob,
        new_names=tuple(str(n) for n in new_names),
        factors=(len(hyps),),
        features=tuple(features),
    )


@dataclass(frozen=True, eq=False)
class ConjunctionSpace:
    """Conjunctive hypotheses over categorical attributes (Mitchell 1997, sec. 2.2).

    Attributes
    ----------
    attributes : tuple of str, length A
    domains : tuple of tuple of str
        The values of each attribute.
    constraints : array of shape (M - 1, A)
        -1 for ``?`` (any value), else the index of the required value; row
        r is the mixed-radix index r with digit 0 for ``?`` (C order).  The
        empty hypothesis is hypothesis M - 1.
    """

    attributes: tuple[str, ...]
    domains: tuple[tuple[str, ...], ...]
    constraints: np.ndarray

    @property
    def size(self) -> int:
        """M, the number of semantically distinct hypotheses (with the empty one)."""
        return int(self.constraints.shape[0]) + 1

    @property
    def factors(self) -> tuple[int, ...]:
        return tuple(len(d) + 1 for d in self.domains)

    @property
    def names(self) -> tuple[str, ...]:
        rows = [
            "<" + ",".join("?" if c < 0 else dom[c] for c, dom in zip(row, self.domains)) + ">"
            for row in self.constraints
        ]
        return (*rows, EMPTY)

    def predict(self, codes: np.ndarray) -> np.ndarray:
        """What every hypothesis says on instances ``codes`` of shape (n, A); (M, n) 0/1."""
        codes = np.asarray(codes, dtype=np.int64)
        out = np.ones((self.constraints.shape[0], codes.shape[0]), dtype=bool)
        for a in range(len(self.attributes)):
            c = self.constraints[:, a][:, None]
            out &= (c < 0) | (c == codes[None, :, a])
        return np.vstack([out, np.zeros((1, codes.shape[0]), dtype=bool)]).astype(float)


def conjunctions(
    *, attributes: Sequence[str], domains: Sequence[Sequence[str]]
) -> ConjunctionSpace:
    """Every conjunction of ``attribute = value`` or ``?`` constraints, then the empty one."""
    values: tuple[tuple[str, ...], ...] = tuple(tuple(str(v) for v in d) for d in domains)
    if len(values) != len(attributes) or not values:
        raise ValueError(f"{len(attributes)} attributes but {len(values)} domains")
    for name, d in zip(attributes, values):
        if not d:
            raise ValueError(f"attribute {name!r} has no values")
    size = int(np.prod([len(d) + 1 for d in values], dtype=float)) + 1
    if size > MAX_HYPOTHESES:
        raise ValueError(
            f"the conjunctive hypothesis space has {size} hypotheses, more than "
            f"{MAX_HYPOTHESES}; use fewer attributes (--features a,b)"
        )
    grids = np.indices([len(d) + 1 for d in values]).reshape(len(values), -1).T
    return ConjunctionSpace(
        attributes=tuple(str(a) for a in attributes), domains=values, constraints=grids - 1
    )


def concept_problem(
    *, space: ConjunctionSpace, x: np.ndarray, y: np.ndarray, new_x: np.ndarray | None = None
) -> FiniteProblem:
    """A concept-learning problem: training instances ``x`` (n, A) coded per domain.

    ``new_x`` (m, A) defaults to every instance of the instance space that is
    not a training instance (off-training-set points), in C order.
    """
    x = np.asarray(x, dtype=np.int64)
    if new_x is None:
        new_x = unseen_instances(space, x)
    new_x = np.asarray(new_x, dtype=np.int64).reshape(-1, len(space.attributes))
    names = tuple(
        "(" + ",".join(dom[v] for v, dom in zip(row, space.domains)) + ")" for row in new_x
    )
    return FiniteProblem(
        hypotheses=space.names,
        prob=space.predict(x),
        y=np.asarray(y, dtype=np.int64),
        new_prob=space.predict(new_x),
        new_names=names,
        factors=space.factors,
        has_empty=True,
        features=space.attributes,
    )


def unseen_instances(space: ConjunctionSpace, x: np.ndarray, *, limit: int = 100_000) -> np.ndarray:
    """Instances of the instance space not among the rows of ``x``; (m, A) codes."""
    sizes = [len(d) for d in space.domains]
    total = int(np.prod(sizes, dtype=float))
    if total > limit:
        raise ValueError(
            f"the instance space has {total} instances, more than {limit}; "
            "use fewer attributes (--features a,b)"
        )
    every = np.indices(sizes).reshape(len(sizes), -1).T
    seen = set(map(tuple, np.asarray(x, dtype=np.int64).tolist()))
    keep = [i for i, row in enumerate(map(tuple, every.tolist())) if row not in seen]
    return every[keep]


# --- the exact posterior over hypotheses ----------------------------------------
def log_likelihood(*, prob: np.ndarray, y: np.ndarray, noise: float) -> np.ndarray:
    """``log P(D | h)`` for every hypothesis, array of shape (M,); -inf when impossible.

    ``sum_i log q_hi`` over positive labels plus ``log(1 - q_hi)`` over
    negative ones, with ``q = P(y = 1 | h) (1 - noise) + (1 - P(y = 1 | h)) noise``.
    """
    prob = np.asarray(prob, dtype=float)
    y = np.asarray(y)
    q = prob * (1.0 - noise) + (1.0 - prob) * noise
    pos = y == 1
    with np.errstate(divide="ignore"):
        return np.log(q[:, pos]).sum(axis=1) + np.log1p(-q[:, ~pos]).sum(axis=1)


def prior_vector(prior: float | Sequence[float] | None, m: int) -> np.ndarray:
    """Normalised log prior of shape (m,): uniform for None, else weights (any scale)."""
    if prior is None:
        return np.full(m, -np.log(m))
    w = np.atleast_1d(np.asarray(prior, dtype=float))
    if w.ndim != 1 or w.size != m:
        raise ValueError(
            f"prior has {w.size} weight(s) but the hypothesis space has {m} "
            "hypotheses; give one weight per hypothesis, or leave prior unset "
            "for a uniform prior"
        )
    if not np.all(np.isfinite(w) & (w > 0)):
        raise ValueError(f"prior weights must be finite and > 0, got {w.tolist()}")
    return np.log(w) - np.log(w.sum())


def check_noise(noise: float) -> float:
    noise = float(noise)
    if not (np.isfinite(noise) and 0.0 <= noise < 0.5):
        raise ValueError(
            f"noise must be in [0, 0.5) (the chance a label is flipped), got "
            f"{noise!r}; e.g. --set noise=0.1, or 0 for noise-free data"
        )
    return noise


def log_posterior(
    *, problem: FiniteProblem, noise: float, prior: Sequence[float] | None = None
) -> tuple[np.ndarray, float]:
    """``log P(h | D)`` of shape (M,) and ``log P(D)``, via logsumexp (Bayes' rule)."""
    from scipy import special  # heavy: SciPy (0.5 s) only when the maths runs

    noise = check_noise(noise)
    log_joint = prior_vector(prior, len(problem.hypotheses)) + log_likelihood(
        prob=problem.prob, y=problem.y, noise=noise
    )
    log_evidence = float(special.logsumexp(log_joint))
    if not np.isfinite(log_evidence):
        raise ValueError(
            "no hypothesis is consistent with the data (P(D | h) = 0 for every "
            "h); allow label noise, e.g. --set noise=0.05"
        )
    return log_joint - log_evidence, log_evidence


def version_space(*, problem: FiniteProblem) -> np.ndarray:
    """Indices of the hypotheses consistent with the labels (noise-free), shape (|VS|,)."""
    says = np.asarray(problem.prob)
    return np.flatnonzero(np.all(says == np.asarray(problem.y)[None, :], axis=1))


# --- classifiers on new instances ---------------------------------------------
@dataclass(frozen=True)
class Classification:
    """MAP, Bayes-optimal and Gibbs classifiers on m new instances.

    Attributes
    ----------
    p_positive : array of shape (m,)
        ``P(+ | x, D)``.
    bayes_optimal, map_label : int arrays of shape (m,)
        Answers (1 = ``+``); Bayes-optimal answers ``+`` only when p > 1/2.
    tie : bool array of shape (m,)
        p = 1/2: either answer is Bayes-optimal.
    error_bayes_optimal, error_map, error_gibbs : arrays of shape (m,)
        Expected errors at each instance when its label is drawn from the
        posterior predictive: ``min(p, 1-p)``, by the MAP answer, ``2 p (1-p)``.
    map_hypothesis : int
        Index of h_MAP (the first, if tied).
    """

    p_positive: np.ndarray
    bayes_optimal: np.ndarray
    map_label: np.ndarray
    tie: np.ndarray
    error_bayes_optimal: np.ndarray
    error_map: np.ndarray
    error_gibbs: np.ndarray
    map_hypothesis: int

    @property
    def mean_errors(self) -> dict[str, float]:
        """Errors averaged over the new instances (uniformly)."""
        if self.p_positive.size == 0:
            return {"bayes_optimal": float("nan"), "map": float("nan"), "gibbs": float("nan")}
        return {
            "bayes_optimal": float(self.error_bayes_optimal.mean()),
            "map": float(self.error_map.mean()),
            "gibbs": float(self.error_gibbs.mean()),
        }

    @property
    def gibbs_bound_holds(self) -> bool:
        """``E[error_Gibbs] <= 2 E[error_BayesOptimal]`` (Haussler et al. 1994)."""
        e = self.mean_errors
        return bool(self.p_positive.size == 0 or e["gibbs"] <= 2.0 * e["bayes_optimal"] + 1e-12)


def classify(*, posterior_probs: np.ndarray, new_prob: np.ndarray) -> Classification:
    """The three classifiers on new instances, given ``P(h | D)`` of shape (M,).

    Parameters
    ----------
    posterior_probs : array of shape (M,)
    new_prob : array of shape (M, m)
        ``P(+ | h, x)`` for each hypothesis and new instance.
    """
    post = np.asarray(posterior_probs, dtype=float)
    new_prob = np.asarray(new_prob, dtype=float)
    p = np.clip(post @ new_prob, 0.0, 1.0)
    h_map = int(np.argmax(post))
    map_label = (new_prob[h_map] > 0.5).astype(np.int64)
    tie = np.isclose(p, 0.5, rtol=0.0, atol=1e-12)
    return Classification(
        p_positive=p,
        bayes_optimal=((p > 0.5) & ~tie).astype(np.int64),
        map_label=map_label,
        tie=tie,
        error_bayes_optimal=np.minimum(p, 1.0 - p),
        error_map=np.where(map_label == 1, 1.0 - p, p),
        error_gibbs=2.0 * p * (1.0 - p),
        map_hypothesis=h_map,
    )


def gibbs_predict(
    rng: np.random.Generator, *, posterior_probs: np.ndarray, new_prob: np.ndarray
) -> np.ndarray:
    """The Gibbs algorithm: one h ~ P(h | D) per instance, then its answer; (m,) 0/1."""
    post = np.asarray(posterior_probs, dtype=float)
    new_prob = np.asarray(new_prob, dtype=float)
    h = rng.choice(post.size, size=new_prob.shape[1], p=post / post.sum())
    return (rng.random(new_prob.shape[1]) < new_prob[h, np.arange(new_prob.shape[1])]).astype(
        np.int64
    )


# --- what is compared: indicators of buckets of hypotheses ---------------------
@dataclass(frozen=True)
class Buckets:
    """A partition of the hypotheses into the buckets whose probabilities are compared.

    Attributes
    ----------
    names : tuple of str, length B
    of_hypothesis : int array of shape (M,)
        Bucket of each hypothesis; -1 for hypotheses of posterior probability 0.
    """

    names: tuple[str, ...]
    of_hypothesis: np.ndarray


def buckets(
    *, posterior_probs: np.ndarray, hypotheses: Sequence[str], top: int, min_mass: float
) -> Buckets:
    """The most probable hypotheses one by one, the rest lumped as ``other``.

    The ``top`` most probable hypotheses (ties in index order) with
    probability >= ``min_mass`` get their own bucket, listed in the space's
    order.  The others with positive probability form ``other`` (last) when
    their total is >= ``min_mass``, else join the least probable single
    bucket, so that every bucket's indicator is 1 often enough for its mean
    to be near normal over a few thousand draws.  Hypotheses of probability
    0 belong to no bucket.
    """
    post = np.asarray(posterior_probs, dtype=float)
    if not (isinstance(top, (int, np.integer)) and top >= 1):
        raise ValueError(f"top must be a whole number >= 1, got {top!r}")
    if not 0.0 < min_mass < 0.5:
        raise ValueError(f"min_mass must be in (0, 0.5), got {min_mass!r}")
    order = np.argsort(-post, kind="stable")
    chosen = [int(i) for i in order[:top] if post[i] >= min_mass]
    single = sorted(chosen)  # in the space's order, so the names do not depend on the data
    of = np.full(post.size, -1, dtype=np.int64)
    names = [str(hypotheses[i]) for i in single]
    for b, i in enumerate(single):
        of[i] = b
    rest = np.flatnonzero((post > 0) & (of < 0))
    rest_mass = float(post[rest].sum())
    if rest.size:
        if rest_mass >= min_mass or not single:
            names.append("other")
            of[rest] = len(names) - 1
        else:  # too rare to stand alone: joins the least probable single bucket
            b = single.index(chosen[-1])
            of[rest] = b
            names[b] = f"{names[b]} + other"
    if len(names) < 2:
        raise ValueError(
            f"the posterior puts all its mass on {names[0]}: nothing for MCMC to compare; "
            "allow label noise (--set noise=0.1) or use fewer training rows"
        )
    return Buckets(names=tuple(names), of_hypothesis=of)


@dataclass(frozen=True, eq=False)
class BucketPosterior:
    """Categorical posterior over buckets, as one-hot indicators ``P(h in <bucket>)``.

    The mode is the most probable bucket (None when tied).  It is found by
    enumeration on both sides (the exact probabilities here, PyMC's log
    density at every discrete point there), never by an optimiser, so it is
    marked interior and the MAP check is an exact comparison.
    """

    probs: np.ndarray
    bucket_names: tuple[str, ...]
    is_gaussian: bool = False
    moments_below: float = float("inf")
    mode_interior: bool = True

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(f"P(h={b})" for b in self.bucket_names)

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(range(self.probs.size - 1))

    @property
    def mean(self) -> np.ndarray:
        return self.probs.copy()

    @property
    def cov(self) -> np.ndarray:
        """``diag(p) - p p^T`` (one multinomial draw); rank B - 1."""
        p = self.probs
        return np.diag(p) - np.outer(p, p)

    @property
    def mode(self) -> np.ndarray | None:
        top = np.max(self.probs)
        if np.sum(np.isclose(self.probs, top, rtol=1e-12, atol=0.0)) > 1:
            return None
        out = np.zeros(self.probs.size)
        out[int(np.argmax(self.probs))] = 1.0
        return out

    def marginal(self, index: int) -> Any:
        """Bernoulli(p_index); discrete, so the agreement test tests moments only."""
        from scipy import stats  # heavy: SciPy (0.5 s) only when the maths runs

        return freeze(stats.bernoulli, self.probs[index])

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """log P(bucket) at one-hot ``x`` of shape (..., B); -inf elsewhere."""
        x = np.asarray(x, dtype=float)
        one_hot = np.all((x == 0) | (x == 1), axis=-1) & (x.sum(axis=-1) == 1)
        with np.errstate(divide="ignore"):
            logp = np.log(self.probs)
        idx = np.argmax(x, axis=-1)
        return np.where(one_hot, logp[idx], -np.inf)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        idx = rng.choice(self.probs.size, size=size, p=self.probs)
        return np.eye(self.probs.size)[idx]


@dataclass(frozen=True, eq=False)
class HypothesisPredictive:
    """Posterior predictive of the label of each new instance: Bernoulli(p(x))."""

    p_positive: np.ndarray

    def mean(self) -> np.ndarray:
        return self.p_positive

    def var(self) -> np.ndarray:
        return self.p_positive * (1.0 - self.p_positive)


@dataclass(frozen=True, eq=False)
class Solution:
    """Everything exact about one problem: hypothesis posterior, buckets, classifiers."""

    posterior_probs: np.ndarray
    log_evidence: float
    buckets: Buckets
    classification: Classification
    answer: ExactAnswer


def solve_problem(
    *,
    problem: FiniteProblem,
    noise: float = 0.0,
    prior: Sequence[float] | None = None,
    top: int = 10,
    min_mass: float = 0.02,
) -> Solution:
    """Exact posterior over hypotheses, its buckets and the classifiers on new instances."""
    log_post, log_ev = log_posterior(problem=problem, noise=noise, prior=prior)
    post = np.exp(log_post)
    parts = buckets(posterior_probs=post, hypotheses=problem.hypotheses, top=top, min_mass=min_mass)
    nb = len(parts.names)
    inside = parts.of_hypothesis >= 0
    probs = np.bincount(parts.of_hypothesis[inside], weights=post[inside], minlength=nb)
    bucket_post = BucketPosterior(probs=probs / probs.sum(), bucket_names=parts.names)
    loglik = log_likelihood(prob=problem.prob, y=problem.y, noise=check_noise(noise))
    best = np.flatnonzero(np.isclose(loglik, loglik.max(), rtol=1e-12, atol=1e-12))
    mle = None
    if best.size == 1 and parts.of_hypothesis[best[0]] >= 0:
        mle = np.zeros(nb)
        mle[parts.of_hypothesis[best[0]]] = 1.0
    cls = classify(posterior_probs=post, new_prob=problem.new_prob)
    answer = ExactAnswer(
        posterior=bucket_post,
        mle=mle,
        log_evidence=log_ev,
        predictive=HypothesisPredictive(cls.p_positive),
    )
    return Solution(
        posterior_probs=post, log_evidence=log_ev, buckets=parts, classification=cls, answer=answer
    )


def solve(
    *,
    x: FiniteProblem,
    noise: float = 0.0,
    prior: Sequence[float] | None = None,
    top: int = 10,
    min_mass: float = 0.02,
    **_structure: Any,
) -> ExactAnswer:
    """Posterior (bucket indicators), ML bucket, log evidence and label predictive."""
    return solve_problem(problem=x, noise=noise, prior=prior, top=top, min_mass=min_mass).answer


def simulate(
    rng: np.random.Generator, *, n: int, noise: float, attributes: int = 2
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A target conjunction from the uniform prior, then n noisy labels.

    The instances cycle through the binary instance space {0, 1}^attributes
    in C order (a fixed design, so every run sees the same space); each
    label is the target's answer flipped with probability ``noise``.
    Returns (theta = [target index], x codes (n, attributes), y (n,)).
    """
    space = conjunctions(
        attributes=[f"a{j}" for j in range(attributes)], domains=[("0", "1")] * attributes
    )
    every = np.indices([2] * attributes).reshape(attributes, -1).T
    x = every[np.arange(n) % every.shape[0]]
    target = int(rng.integers(space.size))
    labels = space.predict(x)[target].astype(np.int64)
    flip = rng.random(n) < noise
    return np.array([target], dtype=float), x, np.where(flip, 1 - labels, labels)
