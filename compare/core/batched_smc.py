"""PyMC's independent Metropolis-Hastings SMC kernel, with the particles' log densities
computed in one call per step.

Why
---
``pm.sample_smc``'s default kernel (``pymc.smc.kernels.IMH``) evaluates the
prior and the likelihood of each particle with its own call of a compiled
function, in a Python loop: two calls per particle per mutation step, about
380,000 calls for one evidence check of the Normal-Inverse-Gamma regression
(4 chains x 1,000 particles), 2.1 of that run's 4.6 s; copying those functions
for each chain's random generator (``set_rng``; they draw nothing) took 0.5 s
more (2026-12-05, warm caches).

What
----
:class:`BatchedIMH` is ``IMH`` with the two per-particle loops replaced by
one call of a function of all particles: the model's prior and likelihood
log densities as functions of the joined free variables, vectorised over a
leading particle axis (``pytensor.graph.replace.vectorize_graph``) and run by
NumPy (:func:`_batched_mode`). Every random number is drawn from the same
generator in the same order as ``IMH`` draws it, and each particle's log
density is the same graph, equal to the per-particle functions' to 5e-16
relative, so a seed gives the same particles, acceptances and log evidence
(to 1e-12 in tests/compare/core/test_batched_smc.py; the builtin data's
evidence checks to 1e-14). Pass it as ``pm.sample_smc(..., kernel=BatchedIMH)``.
A model with discrete free variables, whose values PyMC's per-particle
functions round, runs as ``IMH``.

The ``smc`` inference method keeps PyMC's own kernel: there it is PyMC's SMC
being measured; here it is a means to an evidence estimate.
``benchmarks/regression.py`` times the two kernels side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pymc.blocking import DictToArrayBijection
from pymc.model import modelcontext
from pymc.pytensorf import compile as pm_compile
from pymc.pytensorf import floatX, join_nonshared_inputs, make_shared_replacements
from pymc.smc.kernels import IMH, Pearson
from pymc.vartypes import discrete_types


def _batched_mode() -> Any:
    """PyTensor's FAST_RUN rewrites without elementwise fusion, run by the Python linker.

    Each call works on all particles at once, so NumPy's vectorised ops cost little
    (0.1-0.5 ms for 1,000 particles of the regression topics' densities) and nothing
    is compiled to machine code. With numba (PyMC's default), every new model's
    vectorised graph was a cold compile (its ``BatchedDot`` and ``Dot`` among them):
    ``tests/compare/topics/test_regression.py`` on empty caches took 84-87 CPU-s
    against 64-73 with PyMC's own kernel, and takes 61-71 CPU-s this way. Fusion
    is left out because the Python linker evaluates a fused ``Composite`` element
    by element (113 ms a call). The values equal the per-particle numba functions'
    to 5e-16 relative.
    """
    from pytensor.compile.mode import Mode  # heavy: PyTensor only when SMC runs

    return Mode(linker="py", optimizer="fast_run").excluding("fusion")  # type: ignore[no-untyped-call]


class BatchedIMH(IMH):  # type: ignore[misc]  # PyMC's class is untyped
    """``pymc.smc.kernels.IMH`` evaluating all particles' log densities in one call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import pytensor.tensor as pt  # heavy: PyTensor only when SMC runs
        from pytensor.graph.replace import vectorize_graph  # heavy: as above

        model = modelcontext(kwargs.get("model"))
        self._batched: list[Any] | None = None
        if any(v.dtype in discrete_types for v in model.value_vars):
            # PyMC's per-particle functions round discrete values: IMH's own way.
            super().__init__(*args, **kwargs)
            return
        # IMH compiles its per-particle functions, which are never called here: the
        # Python linker compiles them in milliseconds, not numba's seconds.
        kwargs["compile_kwargs"] = {
            **(kwargs.get("compile_kwargs") or {}),
            "mode": _batched_mode(),
        }
        super().__init__(*args, **kwargs)
        point = model.initial_point(random_seed=0)  # shapes and dtypes only
        shared = make_shared_replacements(point, self.variables, model)
        self._batched = []
        for density in (model.varlogp, model.datalogp):
            outputs, joined = join_nonshared_inputs(
                point=point, outputs=[density], inputs=self.variables, shared_inputs=shared
            )
            rows = pt.matrix("particles", dtype=joined.dtype)
            function = pm_compile(
                [rows],
                vectorize_graph(outputs[0], {joined: rows}),
                on_unused_input="ignore",
                mode=_batched_mode(),
            )
            function.trust_input = True
            self._batched.append(function)

    def _prior(self, particles: np.ndarray) -> np.ndarray:
        assert self._batched is not None
        return np.asarray(self._batched[0](particles), dtype=float).reshape(len(particles))

    def _likelihood(self, particles: np.ndarray) -> np.ndarray:
        assert self._batched is not None
        return np.asarray(self._batched[1](particles), dtype=float).reshape(len(particles))

    def set_rng(self, rng: np.random.Generator) -> None:
        """Keep ``rng``: the log-density functions draw nothing, so nothing is copied."""
        if self._batched is None:
            super().set_rng(rng)
            return
        self.rng = rng

    def _initialize_kernel(self) -> None:
        """``SMC_KERNEL._initialize_kernel`` with the log densities in one call each."""
        if self._batched is None:
            super()._initialize_kernel()
            return
        start = self.start if self.start else self.initialize_population()
        population = [
            DictToArrayBijection.map({v.name: start[v.name][i] for v in self.variables}).data
            for i in range(self.draws)
        ]
        self.tempered_posterior = np.array(floatX(population))
        self.prior_logp = self._prior(self.tempered_posterior)
        self.likelihood_logp = self._likelihood(self.tempered_posterior)

    def mutate(self) -> None:
        """``IMH.mutate``, the same draws in the same order, the log densities batched."""
        if self._batched is None:
            super().mutate()
            return
        self.n_steps = 1
        old_corr: Any = 2
        corr = Pearson(self.tempered_posterior)
        accepted_steps = []
        while True:
            log_r = np.log(self.rng.random(self.draws))
            proposal = floatX(self.proposal_dist.rvs(size=self.draws, random_state=self.rng))
            proposal = proposal.reshape(len(proposal), -1)
            forward_logp = self.proposal_dist.logpdf(proposal)
            backward_logp = self.proposal_dist.logpdf(self.tempered_posterior)
            ll = self._likelihood(proposal)
            pl = self._prior(proposal)
            proposal_logp = pl + ll * self.beta
            accepted = log_r < (
                (proposal_logp + backward_logp) - (self.tempered_posterior_logp + forward_logp)
            )
            self.tempered_posterior[accepted] = proposal[accepted]
            self.tempered_posterior_logp[accepted] = proposal_logp[accepted]
            self.prior_logp[accepted] = pl[accepted]
            self.likelihood_logp[accepted] = ll[accepted]
            accepted_steps.append(accepted)
            self.n_steps += 1
            pearson_r = corr.get(self.tempered_posterior)
            if np.mean((old_corr - pearson_r) > self.correlation_threshold) > 0.9:
                old_corr = pearson_r
            else:
                break
        self.acc_rate = np.mean(accepted_steps)
