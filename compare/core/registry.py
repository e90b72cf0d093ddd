"""The topic registry: what a topic supplies, and the table of registered topics.

A topic pairs ``analytic/<topic>.py`` (the exact answer) with
``pymc_models/<topic>.py`` (the same prior and likelihood in PyMC) and adds
what the runner and CLI need: documented hyperparameters with defaults, the
kind of data column it reads, a seeded simulator and builtin data sets.
A builtin topic is one module, ``compare/topics/<topic>.py``, defining
``TOPIC = Topic(...)``, and one line in the catalogue (``compare/topics/__init__.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from analytic import ExactAnswer

#: Column kinds a topic can read, with what each accepts.
DATA_KINDS = {
    "table": "a target column and input columns (--target, --features)",
    "points": "rows of numeric columns (--features; default all)",
    "binary": "0/1 outcomes",
    "counts": "non-negative integer counts",
    "reals": "real numbers",
    "nonnegative": "real numbers >= 0",
    "labels": "category labels (any text)",
}


class InputError(ValueError):
    """Bad input from a user: the message names the item, the value and the fix."""


#: Largest magnitude a numeric hyperparameter may take, and (its reciprocal) the
#: smallest positive one.  Squares, reciprocals and products of two squares of
#: numbers in [1e-50, 1e50] stay well inside double precision (1e-308 .. 1e308),
#: so no closed form overflows to inf or underflows to a zero it divides by; a
#: prior sd of 1e50 is flat for any data, and 1e-50 is a point mass.
MAGNITUDE = 1e50


@dataclass(frozen=True)
class Hyperparameter:
    """A prior hyperparameter settable with ``--set name=value``.

    Attributes
    ----------
    name : str
    default : float, tuple or None
        None means "derived from the data" (documented in ``doc``).
    doc : str
        One line: what it is, in which convention (sd vs variance, rate vs scale).
    kind : str
        ``positive``, ``real``, ``positive-list`` (one number or a
        comma-separated list, each > 0), ``labels`` (comma-separated text),
        ``bool`` (true/false), ``count`` (an integer >= 0) or ``text`` (one
        string, e.g. a kernel name or a file path; one of ``choices`` when
        those are given).
    structural : bool
        True when it shapes the data or the model (categories, intercept,
        polynomial degree) rather than being a ``pm.Data`` value.
    choices : tuple of str
        ``text``: the allowed values (empty: any non-empty text).
    low, high : float or None
        Numeric kinds: the closed interval ``[low, high]`` every value must lie
        in, on top of the kind's own domain (``> 0``, ``>= 0``) and of
        ``|value| <= MAGNITUDE`` (positive values also ``>= 1/MAGNITUDE``).
        ``high_open`` makes the upper end open: ``[low, high)``.
    """

    name: str
    default: Any
    doc: str
    kind: str = "positive"
    structural: bool = False
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    high_open: bool = False

    def parse(self, text: str) -> Any:
        """Turn the text of ``--set name=text`` into a checked value."""
        if not isinstance(text, str):
            raise InputError(f"--set {self.name}: expected text, got {text!r}")
        text = text.strip()
        if self.kind == "text":
            return self.check(text)
        if self.kind == "bool":
            lowered = text.lower()
            if lowered in ("true", "yes", "1", "on"):
                return True
            if lowered in ("false", "no", "0", "off"):
                return False
            raise InputError(f"--set {self.name}={text!r}: give true or false")
        if self.kind == "count":
            try:
                value = float(text)
            except ValueError:
                raise InputError(
                    f"--set {self.name}={text!r} is not a whole number; "
                    f"e.g. --set {self.name}={self._example()}"
                ) from None
            return self.check(value)
        if self.kind == "labels":
            labels = tuple(s.strip() for s in text.split(","))
            if not text or any(not s for s in labels):
                raise InputError(
                    f"--set {self.name}={text!r}: give comma-separated labels, "
                    f"e.g. --set {self.name}=a,b,c"
                )
            return self.check(labels)
        parts = [s.strip() for s in text.split(",")] if self.kind == "positive-list" else [text]
        try:
            values = [float(s) for s in parts]
        except ValueError:
            raise InputError(
                f"--set {self.name}={text!r} is not a number; "
                f"e.g. --set {self.name}={self._example()}"
            ) from None
        return self.check(values[0] if len(values) == 1 else tuple(values))

    def check(self, value: Any) -> Any:
        """Validate a value given in Python (or parsed from text).

        Text is parsed exactly as ``--set`` parses it, so ``categories="a,b,c"``
        means three labels in the API as on the command line.
        """
        import numpy as np  # heavy: NumPy only to check a value

        if isinstance(value, str) and self.kind != "text":
            return self.parse(value)
        if self.kind == "text":
            if value is None:
                return None
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{self.name} must be a non-empty text, got {value!r}")
            if self.choices and value not in self.choices:
                raise InputError(
                    f"{self.name} must be one of {', '.join(self.choices)}, got "
                    f"{value!r}; e.g. --set {self.name}={self.choices[0]}"
                )
            return value
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise InputError(f"{self.name} must be true or false, got {value!r}")
            return bool(value)
        if self.kind == "labels":
            if value is None:
                return None
            if not isinstance(value, (list, tuple, np.ndarray)):
                raise InputError(
                    f"{self.name} must be a list of labels (or the text 'a,b,c'), got {value!r}"
                )
            labels = tuple(str(v).strip() for v in value)
            if not labels or any(not s for s in labels):
                raise InputError(
                    f"{self.name} must list non-empty labels, got {list(value)}; "
                    f"e.g. --set {self.name}=a,b,c"
                )
            if len(set(labels)) != len(labels):
                raise InputError(f"{self.name} must list distinct labels, got {list(labels)}")
            return labels
        if value is None:
            if self.default is None:
                return None
            raise InputError(
                f"{self.name} needs a value, got None; e.g. --set {self.name}={self._example()}"
            )
        values = self._numbers(value)
        if self.kind == "count":
            if values.size != 1:
                raise InputError(f"{self.name} takes one whole number, got {values.tolist()}")
            number = float(values[0])
            if not np.isfinite(number) or not number.is_integer() or number < 0:
                raise InputError(
                    f"{self.name} must be a whole number >= 0, got {value!r}; "
                    f"e.g. --set {self.name}={self._example()}"
                )
            self._check_bounds(values)
            return int(number)
        if self.kind != "positive-list" and values.size != 1:
            raise InputError(f"{self.name} takes one number, got {values.tolist()}")
        if values.size == 0:
            raise InputError(
                f"{self.name} needs at least one number, got none; "
                f"e.g. --set {self.name}={self._example()}"
            )
        if not np.all(np.isfinite(values)):
            raise InputError(
                f"{self.name} must be finite, got {values.tolist()}; "
                f"e.g. --set {self.name}={self._example()}"
            )
        shown = float(values[0]) if values.size == 1 else values.tolist()
        if self.kind in ("positive", "positive-list") and not np.all(values > 0):
            raise InputError(
                f"{self.name} must be > 0, got {shown}; e.g. --set {self.name}={self._example()}"
            )
        smallest = 1.0 / MAGNITUDE if self.kind in ("positive", "positive-list") else 0.0
        magnitude = np.abs(values)
        if np.any(magnitude > MAGNITUDE) or np.any((magnitude > 0) & (magnitude < smallest)):
            raise InputError(
                f"{self.name} = {shown} is outside the numeric range "
                f"[{1 / MAGNITUDE:g}, {MAGNITUDE:g}] in magnitude, where the "
                "closed forms stay finite; rescale the data or the prior"
            )
        self._check_bounds(values)
        return float(values[0]) if values.size == 1 else tuple(float(v) for v in values)

    def _numbers(self, value: Any) -> np.ndarray:
        """``value`` as a 1-D float array; bools, text and nested lists are refused."""
        import numpy as np  # heavy: NumPy only to check a value

        items = value if isinstance(value, (list, tuple, np.ndarray)) else [value]
        if (
            np.asarray(items).dtype == bool
            if isinstance(items, np.ndarray)
            else any(isinstance(v, (bool, np.bool_)) for v in items)
        ):
            raise InputError(
                f"{self.name} must be a number, got {value!r}; "
                f"e.g. --set {self.name}={self._example()}"
            )
        try:
            values = np.asarray(items, dtype=float)
        except (TypeError, ValueError):
            raise InputError(
                f"{self.name} must be a number, got {value!r}; "
                f"e.g. --set {self.name}={self._example()}"
            ) from None
        if values.ndim != 1:
            raise InputError(f"{self.name} takes a number or a flat list of numbers, got {value!r}")
        return values

    def _check_bounds(self, values: np.ndarray) -> None:
        """Refuse values outside ``[low, high]`` (``[low, high)`` when ``high_open``)."""
        import numpy as np  # heavy: NumPy only to check a value

        too_low = self.low is not None and np.any(values < self.low)
        too_high = self.high is not None and (
            np.any(values >= self.high) if self.high_open else np.any(values > self.high)
        )
        if too_low or too_high:
            shown = f"{values[0]:g}" if values.size == 1 else values.tolist()
            interval = (
                None
                if self.low is None or self.high is None
                else f"[{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"
            )
            if too_low:
                domain = f">= {self.low:g}" + (f" (in {interval})" if interval else "")
            elif interval:
                domain = f"in {interval}"
            else:
                domain = f"{'<' if self.high_open else '<='} {self.high:g}"
            raise InputError(
                f"{self.name} must be {domain}, got {shown}; "
                f"e.g. --set {self.name}={self._example()}"
            )

    def _example(self) -> str:
        if isinstance(self.default, (int, float)) and not isinstance(self.default, bool):
            return f"{self.default:g}"
        if self.kind == "count" and self.low is not None:
            return f"{max(self.low, 1):g}"
        return "1"


@dataclass(frozen=True)
class Simulation:
    """Parameters drawn from the prior and data drawn given them."""

    theta: np.ndarray
    data: Any  # what the topic reads: an array, or a Table / Points for structured data


@dataclass(frozen=True)
class BuiltinData:
    """A data set shipped with the project.

    ``hyper`` holds hyperparameters suited to this data set; they replace the
    topic's defaults, and ``--set`` still overrides them. ``parameters``, when
    given, are the flat parameter names on this data set with its suggested
    hyperparameters, for a data set whose loading or solving is slow (a
    scikit-learn data set, a numerical reference): ``describe`` shows them
    without either (tests/compare/topics/test_topics.py checks them against
    the solved names).
    """

    name: str
    description: str
    source: str
    load: Callable[[], Any]  # the topic's data: an array, or a Table / Points
    hyper: Mapping[str, Any] = field(default_factory=dict)
    parameters: tuple[str, ...] | None = None


def _identity_prepare(x: np.ndarray, hyper: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    """The column as floats, each within ``MAGNITUDE`` (beyond it squares and fourth
    powers -- a variance's variance -- overflow: data of 1e100 gave an infinite
    posterior covariance)."""
    import numpy as np  # heavy: NumPy only to check a value

    x = np.asarray(x, dtype=float)
    big = np.abs(x) > MAGNITUDE
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise InputError(
            f"observation {i + 1} is {x[i]:g}, beyond {MAGNITUDE:g} in magnitude "
            "where the closed forms stay finite; rescale the data (other units)"
        )
    return x, hyper


def _no_structure(x: np.ndarray, hyper: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Unsupported:
    """A capability a topic declares it does not have, with the reason a user is shown."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise ValueError("Unsupported needs a reason a user can read")


@dataclass(frozen=True)
class Sensitivity:
    """What the prior-sensitivity study (``compare/studies/sensitivity.py``) needs from a topic.

    Every hyperparameter of kind ``positive``, ``real`` or ``positive-list``
    (with a default), not structural and not in ``not_swept``, can be swept,
    plus the ``derived`` quantities.  Without ``path`` the study calls
    ``Topic.solve`` at every grid point; without ``power_scaled`` it reports
    no power-scaling.  ``Topic.sensitivity`` is one of these, or
    :class:`Unsupported` with the reason the study refuses the topic; every
    builtin topic declares one of the two.  None (a topic file that says
    nothing) is a sweep solved point by point, without power-scaling or a
    report section, refused when ``Topic.not_closed_form`` gives a reason.

    Attributes
    ----------
    default_param : str
        What the report sweeps beside a run: a hyperparameter (the prior's
        strength or scale) or the name of a ``derived`` quantity.
    path : callable or None
        ``path(x=..., interval=..., **hyper) -> analytic.sensitivity.ConjugatePath``:
        the exact posterior at G grid values at once, ``x`` as ``solve``
        takes it, the swept hyperparameter an array of shape (G,) (or (G, 1),
        see ``grid_column``), the others as in ``solve``; ``interval`` is the
        central probability of the ``lower``/``upper`` bounds.  None: solve
        point by point.
    path_params : tuple of str or None
        The swept parameters ``path`` handles (None: every one); the others
        are solved point by point.
    path_method : str
        How ``path`` computes the sweep, as the document's ``exact.method``
        says it (``vectorised closed form``, ``eigendecomposition``).
    grid_column : bool
        ``path`` takes the grid as a column, an array of shape (G, 1): the
        swept hyperparameter is a vector (a Dirichlet concentration, one per
        category) and each grid value is shared by all its entries.
    power_scaled : callable or None
        ``power_scaled(x=..., alpha=..., component=..., **hyper) -> posterior``
        (an object with ``marginal(i)``): the exact posterior when the prior
        (``component="prior"``) or the likelihood (``"likelihood"``) is raised
        to the power ``alpha`` (Kallioinen et al. 2023).  It exists in closed
        form for a conjugate prior.  None: no exact power-scaling.
    log_densities : callable or None
        ``log_densities(x=..., theta=..., **hyper) -> (log_prior, log_likelihood)``,
        arrays of shape (...) for ``theta`` of shape (..., d), each up to an
        additive constant.  Declared where the PyMC model has no
        per-observation likelihood (a Potential on sufficient statistics), so
        psense reads these instead of PyMC's.  None: PyMC's, or, when exact
        densities are asked for, the zero-data posterior's log density as the
        prior and the posterior's minus it as the likelihood.
    derived : tuple of DerivedParameter
        Swept quantities that are not hyperparameters (linear regression's
        lambda = noise_sd^2 / prior_sd^2).
    linear_grids : mapping of str to (float, float)
        The report's grid of these parameters: evenly spaced over
        ``[low, high]`` instead of 1e-2..1e2 times the current value (a
        probability whose current value may be 0, or past whose ``high`` the
        exact answer stops being computable on the builtin data).
    not_swept : tuple of str
        Hyperparameters that are numerical devices or display settings, not
        prior or likelihood (a kernel jitter): never swept.
    """

    default_param: str
    path: Callable[..., Any] | None = None
    path_params: tuple[str, ...] | None = None
    path_method: str = "vectorised closed form"
    grid_column: bool = False
    power_scaled: Callable[..., Any] | None = None
    log_densities: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    derived: tuple[DerivedParameter, ...] = ()
    linear_grids: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    not_swept: tuple[str, ...] = ()


@dataclass(frozen=True)
class DerivedParameter:
    """A swept quantity that is not a hyperparameter but sets one (ridge's lambda).

    ``--param NAME`` sweeps it; each value moves the hyperparameter ``sets``
    and leaves the others where they are.

    Attributes
    ----------
    name : str
        What ``--param`` calls it, e.g. ``lambda``.
    sets : str
        The hyperparameter a value moves, e.g. ``prior_sd``.
    value : callable
        ``value(hyper) -> float``: its current value at the hyperparameters
        ``hyper`` (a mapping of name to value).
    solve_for : callable
        ``solve_for(hyper, value) -> float or array``: the value of ``sets``
        at which the derived quantity equals ``value`` (a number > 0, or an
        array of shape (G,) or (G, 1) of them: it must broadcast), the other
        hyperparameters as in ``hyper``.
    domain : str
        What a valid value is, shown after "grid value V for NAME is outside
        its domain: " when a value is not a finite number > 0, e.g.
        ``"lambda = noise_sd^2/prior_sd^2 must be > 0; e.g. --log-grid 1e-6:10:100"``.
    range_per_n : tuple of float
        ``(low, high)``: the default grid, ``points`` values log-spaced from
        ``low * n`` to ``high * n``, n the number of observations.  The
        sensitivity document then also holds the grid divided by n, under
        ``<name>_over_n``.
    points : int
        Number of values of the default grid.
    """

    name: str
    sets: str
    value: Callable[[Mapping[str, Any]], float]
    solve_for: Callable[[Mapping[str, Any], Any], Any]
    domain: str
    range_per_n: tuple[float, float]
    points: int = 200


@dataclass(frozen=True)
class Calibration:
    """What the null calibration study runs a topic on (``compare/studies/calibration.py``).

    The study simulates ``n_obs`` observations from the prior under ``hyper``,
    runs the real PyMC model and checks that every z-score of the agreement
    test is standard normal.  The README's measured false-alarm rates come
    from these values, so they change only with a new measurement.

    Attributes
    ----------
    hyper : mapping
        Hyperparameters of the null study: the prior matters (it holds a real
        share of the posterior) and no value is 0 or 1, which could hide a
        mistake in a convention (sd vs variance, rate vs scale).
    n_obs : int
        Observations simulated per replication.
    power : Calibration or None
        The fixture of the power study against the topic's planted bugs
        (``compare/studies/planted.py``) when it differs from the null one,
        or None when the topic is not in that study.
    samplers : bool
        The topic is in the null calibration of every sampler of ``--method``
        (``benchmarks/sampler_calibration.py`` and
        ``tests/compare/studies/test_calibration_samplers.py``), which runs
        each sampler on this fixture: two conjugate topics and one structured
        one declare it, chosen for cost (PyMC's own NUTS and the JAX samplers
        take 3-11 s a run).
    """

    hyper: Mapping[str, Any]
    n_obs: int
    power: Calibration | None = None
    samplers: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.n_obs, bool) or not isinstance(self.n_obs, int) or self.n_obs < 1:
            raise ValueError(f"Calibration.n_obs must be a whole number >= 1, got {self.n_obs!r}")


@dataclass(frozen=True)
class PlantedBug:
    """A classic mistake planted in a topic's real PyMC model, to measure power.

    A bug is not a copy of the model: ``plant`` writes, with the variables of
    the model the topic's ``build_model`` returned, the log density of the
    model with the mistake minus the real model's; ``compare/studies/planted.py``
    adds that difference as a ``pm.Potential``.  The sum is the wrong model's
    log density exactly, and the real model cannot drift away from it.

    Attributes
    ----------
    name : str
        What ``planted(topic, name, factor)`` asks for: ``prior_var``,
        ``noise_sd``, ``sd_for_var``, ...
    description : str
        One line: the mistake, and what ``factor`` does.
    plant : callable
        ``plant(model, factor) -> tensor``: the log-density difference (a
        scalar PyTensor expression of ``model``'s variables), called inside
        ``with model:``.
    neutral : float or None
        The factor at which the bug vanishes (the difference is 0), e.g. 1
        for a scaled variance; None when the bug has no size (a variance
        passed where a standard deviation belongs).
    needs : mapping
        Hyperparameters the bug needs on top of the study's (e.g. the variant
        whose model has the variable it changes); empty when it needs none.

    A topic declares its bugs as ``planted=(PlantedBug(...), ...)``, or
    ``planted=Unsupported(reason)`` when it has none; an empty tuple means
    "not declared" and the support test (tests/compare/test_topic_support.py)
    refuses it.
    """

    name: str
    description: str
    plant: Callable[[Any, float], Any]
    neutral: float | None = 1.0
    needs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", self.name):
            raise ValueError(
                f"planted bug name {self.name!r} must be lower-case words joined by '_'"
            )
        if not self.description.strip():
            raise ValueError(f"planted bug {self.name!r} needs a description")


@dataclass(frozen=True)
class Topic:
    """Everything the compare layer needs to run one topic.

    Attributes
    ----------
    name : str
        CLI name: lower-case words joined by '-'.
    title, model : str
        A one-line title and the model in formulas (shown by ``describe``).
    data_kind : str
        One of :data:`DATA_KINDS`.
    hyperparameters : tuple of Hyperparameter
    solve : callable
        ``solve(x=..., **hyper) -> ExactAnswer`` (the analytic module).
    build_model, model_data : callable
        ``build_model(**structure) -> pm.Model`` and
        ``model_data(x=..., **hyper) -> dict`` (the PyMC module).
    variables : tuple of str
        PyMC variables that, flattened, line up with the exact parameters.
    simulate : callable
        ``simulate(rng, n, hyper) -> Simulation``: theta from the prior, then data.
    builtin : tuple of BuiltinData
        The first is the default data set.
    prepare : callable
        ``prepare(column, hyper) -> (x, hyper)``: turns the checked column
        into what ``solve`` takes (e.g. labels into codes, filling in the
        categories).
    structure : callable
        ``structure(x, hyper) -> dict`` of ``build_model`` arguments that fix
        the model's shape; one compiled model per distinct structure.
    extras : callable, optional
        ``extras(ExtraContext) -> Extra``: topic-specific comparisons (e.g. the
        predictive and evidence checks of the regression topics) whose checks
        join the verdict and whose sections join the JSON document.
    sampler_options : mapping
        Extra ``nutpie.sample`` arguments the topic needs, e.g. a low-rank
        mass matrix for strongly correlated posteriors.
    extra_tests : int
        How many statistical tests ``extras`` adds (e.g. the predictive test).
        The verdict's alpha is split evenly over the posterior test and these
        (Bonferroni across tests), so a user's alpha bounds the whole verdict.
    text_table : callable, optional
        ``text_table(path, target=..., features=...)``: for a topic that reads
        words or labels in a table CSV (classifiers), its labelled data, or None
        when the file's cells are all numbers (then it is read as a table).
        A table topic that reads numbers only says so with
        ``Unsupported(reason)``; None (the default) suits the topics whose
        data are not a table.
    parameter_names : tuple of str or None
        The flat parameter names when they do not depend on the data (a
        scalar conjugate topic's ``PARAMETERS``): ``describe`` shows them
        without solving, so it needs no SciPy.  None: ``describe`` solves the
        first builtin data set to name them.
    not_closed_form : str or None
        Why the exact side is not a closed form (a numerical reference, a
        mixture's EM), or None when it is one.  Studies that need exact draws
        or an exact path (SBC's exact side, sensitivity's path, the posteriordb
        export) say this reason instead of running.
    sensitivity, calibration, planted
        What the sensitivity study, the null calibration and the power study
        need from the topic (see those modules), or :class:`Unsupported` with
        the reason.
    step : callable, optional
        ``step(model) -> step method(s)`` for models NUTS cannot sample
        (discrete free variables): the run then uses ``pm.sample`` with
        these steps instead of nutpie (see ``compare.core.sampling.StepModel``).
    cold_seconds : float
        About how long a first ``run`` of the default data set takes on a new
        machine (compiles included; measured on 2 idle cores), or 0 (the
        default) when not measured, as for a ``--topic-file`` topic. Only for order: ``run --all`` starts the costliest topics
        first, by their saved runs' times once there are saved runs, by this
        before.
    """

    name: str
    title: str
    model: str
    data_kind: str
    hyperparameters: tuple[Hyperparameter, ...]
    solve: Callable[..., ExactAnswer]
    build_model: Callable[..., Any]
    model_data: Callable[..., dict[str, np.ndarray]]
    variables: tuple[str, ...]
    simulate: Callable[[np.random.Generator, int, dict[str, Any]], Simulation]
    builtin: tuple[BuiltinData, ...]
    prepare: Callable[[Any, dict[str, Any]], tuple[Any, dict[str, Any]]] = _identity_prepare
    structure: Callable[[Any, Mapping[str, Any]], dict[str, Any]] = _no_structure
    extras: Callable[[Any], Any] | None = None
    sampler_options: Mapping[str, Any] = field(default_factory=dict)
    extra_tests: int = 0
    step: Callable[[Any], Any] | None = None
    text_table: Callable[..., Any] | Unsupported | None = None
    parameter_names: tuple[str, ...] | None = None
    # --- what the studies ask of a topic (each: a declaration, or Unsupported(reason)) ---
    not_closed_form: str | None = None
    sensitivity: Sensitivity | Unsupported | None = None
    # (null calibration and planted bugs: compare/studies/calibration.py, planted.py)
    calibration: Calibration | Unsupported | None = None
    planted: tuple[PlantedBug, ...] | Unsupported = ()
    cold_seconds: float = 0.0

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", self.name):
            raise ValueError(f"topic name {self.name!r} must be lower-case words joined by '-'")
        if self.data_kind not in DATA_KINDS:
            raise ValueError(f"data_kind {self.data_kind!r} is not one of {sorted(DATA_KINDS)}")
        if not self.builtin:
            raise ValueError(f"topic {self.name!r} needs at least one builtin data set")

    def hyper(
        self,
        overrides: Mapping[str, Any] | None = None,
        *,
        dataset: BuiltinData | None = None,
        parsed: bool = True,
    ) -> dict[str, Any]:
        """Defaults, then the data set's suggestions, then ``overrides``, all checked.

        ``parsed=False`` means the overrides are text from ``--set`` and are parsed.
        """
        known = {h.name: h for h in self.hyperparameters}
        values = {h.name: h.default for h in self.hyperparameters}
        if dataset is not None:
            values.update(dataset.hyper)
        for name, value in (overrides or {}).items():
            if name not in known:
                raise InputError(
                    f"unknown hyperparameter {name!r} for topic {self.name}; "
                    f"known: {', '.join(known)}"
                )
            values[name] = known[name].check(value) if parsed else known[name].parse(value)
        return values

    def builtin_data(self, name: str) -> BuiltinData:
        for ds in self.builtin:
            if ds.name == name:
                return ds
        raise InputError(
            f"topic {self.name} has no builtin data set {name!r}; "
            f"choose one of: {', '.join('builtin:' + d.name for d in self.builtin)}"
        )


REGISTRY: dict[str, Topic] = {}


def register(topic: Topic) -> Topic:
    """Add ``topic`` to the registry (names must be unique)."""
    if topic.name in REGISTRY:
        raise ValueError(f"a topic named {topic.name!r} is already registered")
    REGISTRY[topic.name] = topic
    return topic
