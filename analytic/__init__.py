"""Exact closed-form answers, one module per topic.

Each module is pure maths: data and prior hyperparameters in, an
:class:`analytic._base.ExactAnswer` out (posterior, MLE, log evidence,
predictive).  The PyMC model of the same prior and likelihood lives in the
module of the same name under ``pymc_models``.
"""

from analytic._base import ExactAnswer, ExactPosterior

__all__ = ["ExactAnswer", "ExactPosterior"]
