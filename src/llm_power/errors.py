"""The package's errors and warnings (defined in :mod:`llm_power._core.errors`, which every layer
may import): ``from llm_power.errors import DataError``.
"""

from ._core.errors import (
    ApproximationWarning,
    DataError,
    DegenerateDataWarning,
    FewClustersWarning,
    InfeasibleDesignWarning,
    LLMPowerError,
    LLMPowerWarning,
    SeparationWarning,
)

__all__ = [
    "ApproximationWarning",
    "DataError",
    "DegenerateDataWarning",
    "FewClustersWarning",
    "InfeasibleDesignWarning",
    "LLMPowerError",
    "LLMPowerWarning",
    "SeparationWarning",
]
