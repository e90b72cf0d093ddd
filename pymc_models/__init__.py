"""PyMC models, one module per topic, of the same prior and likelihood as the
module of the same name under ``analytic``.

Conventions every module follows, so one compiled model serves every data set
and every hyperparameter value (``nutpie.compile_pymc_model`` once, then
``compiled.with_data(**model_data(...))``):

* the observations are ``pm.Data("x", ..., dims="obs")``;
* each hyperparameter ``h`` is ``pm.Data("hp_h", ...)`` (a ``hp_`` prefix keeps
  it apart from a parameter of the same name, e.g. the Poisson ``rate``);
* ``build_model(**structure)`` builds the model; ``model_data(x=..., **hyper)``
  returns the ``pm.Data`` values for one data set;
* the sampled variables listed in the module's ``VARIABLES``, flattened in
  C order, line up with the analytic module's parameters;
* a likelihood written as a ``pm.Potential`` of sufficient statistics (the
  density of the data rows themselves) is named ``loglik`` or
  ``<what>_loglik``, and a prior's Potential is not (``mu_prior``): an
  exported model's ``make_model(prior_only=True)`` removes the first kind
  with the observed variables.
"""
