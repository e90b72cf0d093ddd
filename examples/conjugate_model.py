"""Check your own PyMC model against your own closed form.

Counts of events y_i over exposures t_i (e.g. failures per machine-year):

    lam ~ Gamma(a, rate=b);   y_i | lam ~ Poisson(lam * t_i)

is conjugate: lam | y ~ Gamma(a + sum y, rate=b + sum t), with mode
(a + sum y - 1) / (b + sum t).  The script samples the PyMC model with nutpie,
tests it against that Gamma with the project's calibrated verdict and, with
``--out``, writes the report page.  ``--bug`` plants a classic bug (the exposure left out of the
likelihood) to show the verdict catching it.

    python examples/conjugate_model.py [--bug] [--out DIR]

Exit code: 0 agree, 1 disagree, 2 inconclusive (as ``bayes-compare run``).
"""

import argparse

import numpy as np
import pymc as pm
from scipy import stats

import compare

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--bug", action="store_true", help="drop the exposure from the likelihood")
parser.add_argument("--out", default=None, help="write the report page under this directory")
parser.add_argument("--draws", type=int, default=None, help="draws per chain (default 2000)")
parser.add_argument("--alpha", type=float, default=None, help="false-alarm rate (default 1e-4)")
args = parser.parse_args()

y = np.array([3, 0, 5, 2, 7, 1, 4, 2])  # events
t = np.array([1.5, 0.5, 2.0, 1.0, 3.0, 0.5, 2.5, 1.0])  # exposure (machine-years)
a, b = 2.0, 1.0  # Gamma prior: shape, rate

with pm.Model() as model:
    lam = pm.Gamma("lam", alpha=a, beta=b)
    pm.Poisson("y", mu=lam if args.bug else lam * t, observed=y)

shape, rate = a + y.sum(), b + t.sum()
exact = compare.Exact.from_scipy(
    stats.gamma(shape, scale=1 / rate), parameters=["lam"], mode=[(shape - 1) / rate]
)
result = compare.check(model, exact, var_names=["lam"], draws=args.draws, alpha=args.alpha)
print(result)
if args.out:
    print("report page:", result.to_html(args.out))
raise SystemExit(result.exit_code)
