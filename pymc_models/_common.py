"""Helpers shared by the PyMC topic modules."""

from __future__ import annotations

import numpy as np


def obs_coords(n_obs: int) -> dict[str, np.ndarray]:
    """Coordinates for the observation dimension (nutpie needs every dim named)."""
    return {"obs": np.arange(n_obs)}


def hyper_data(**values: float) -> dict[str, np.ndarray]:
    """``pm.Data`` values for hyperparameters, keyed ``hp_<name>``."""
    return {f"hp_{name}": np.asarray(value, dtype=float) for name, value in values.items()}
