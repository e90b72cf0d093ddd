"""The topic contract's old address, kept because user topic files import it.

``from compare.registry import Topic, Hyperparameter, BuiltinData, Simulation``
keeps working; new code imports them from :mod:`compare` (or
:mod:`compare.core.registry`, where they live).
"""

from compare.core.registry import (  # noqa: F401  (re-exported)
    DATA_KINDS,
    MAGNITUDE,
    REGISTRY,
    BuiltinData,
    Hyperparameter,
    InputError,
    Simulation,
    Topic,
    register,
)
from compare.topics import all_topics, get_topic  # noqa: F401  (re-exported)
