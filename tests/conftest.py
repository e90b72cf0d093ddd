"""Shared fixtures.

Seeds come from fixtures, never from global state.  MCMC tests share one
model cache so each PyMC model compiles once per session.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's name: reproducible, different per test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
