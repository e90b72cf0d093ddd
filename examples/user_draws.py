"""Check draws from your own sampler (no PyMC) against an exact posterior.

A straight line through noisy points with a known noise sd and a Normal
prior on the weights has a Gaussian posterior (Bishop 2006, eq. 3.53-3.54):

    S_N^-1 = I / prior_sd^2 + Phi^T Phi / noise_sd^2,   m_N = S_N Phi^T y / noise_sd^2.

The draws come from a hand-written random-walk Metropolis sampler in numpy
(4 chains).  ``compare.check_draws`` applies the same convergence gate and
agreement test as the built-in topics.  ``--bug`` runs the sampler with the
noise variance where the sd belongs, which the verdict catches.

    python examples/user_draws.py [--bug] [--out DIR]
"""

import argparse

import numpy as np
from scipy import linalg

import compare

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--bug", action="store_true", help="use the noise variance as its sd")
parser.add_argument("--out", default=None, help="write the report page here")
parser.add_argument("--alpha", type=float, default=None, help="false-alarm rate (default 1e-4)")
args = parser.parse_args()

x = np.array([-1.0, -0.6, -0.2, 0.1, 0.4, 0.8, 1.0])
y = np.array([-1.9, -1.4, -0.1, 0.3, 0.9, 1.5, 2.2])
noise_sd, prior_sd = 0.5, 2.0
phi = np.column_stack([np.ones_like(x), x])

# The exact posterior, through a Cholesky factor (no inverse formed).
precision = np.eye(2) / prior_sd**2 + phi.T @ phi / noise_sd**2
factor = linalg.cho_factor(precision)
mean = linalg.cho_solve(factor, phi.T @ y / noise_sd**2)
cov = linalg.cho_solve(factor, np.eye(2))
exact = compare.Exact(mean=mean, cov=cov, gaussian=True, parameters=["w0", "w1"])


def log_post(w):  # w: (chains, 2)
    sd = noise_sd**2 if args.bug else noise_sd
    resid = y - w @ phi.T
    return -0.5 * np.sum(resid**2, axis=1) / sd**2 - 0.5 * np.sum(w**2, axis=1) / prior_sd**2


rng = np.random.default_rng(20261130)
chains, warmup, keep, thin = 4, 2000, 4000, 5
w = rng.normal(0.0, 1.0, size=(chains, 2))
lp = log_post(w)
step = 2.4 / np.sqrt(2) * np.sqrt(np.diag(cov))  # the optimal random-walk scale
draws = np.empty((chains, keep, 2))
for i in range(warmup + keep * thin):
    proposal = w + step * rng.standard_normal(w.shape)
    lp_new = log_post(proposal)
    accept = np.log(rng.uniform(size=chains)) < lp_new - lp
    w[accept], lp[accept] = proposal[accept], lp_new[accept]
    if i >= warmup and (i - warmup) % thin == 0:
        draws[:, (i - warmup) // thin] = w

result = compare.check_draws(draws, exact, alpha=args.alpha)  # array (chain, draw, d)
print(result)
if args.out:
    print("report page:", result.to_html(args.out))
raise SystemExit(result.exit_code)
