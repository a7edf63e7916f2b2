"""llm-power: statistically honest numbers for LLM evaluations.

One score's uncertainty (:func:`proportion_ci`, :func:`coverage`, :func:`rule_of_three`,
:func:`half_width`, :func:`n_for_half_width`); more capabilities follow the specification.

>>> import llm_power as lp
>>> lo, hi = lp.proportion_ci(17, 20)
>>> print(f"85% on 20 items: [{lo:.1%}, {hi:.1%}]")
85% on 20 items: [64.0%, 94.8%]
"""

from ._results import ConfidenceInterval
from ._version import __version__
from .errors import (
    ApproximationWarning,
    DataError,
    DegenerateDataWarning,
    LLMPowerError,
    LLMPowerWarning,
)
from .intervals import (
    INTERVAL_METHODS,
    coverage,
    half_width,
    n_for_half_width,
    proportion_ci,
    rule_of_three,
)

__all__ = [
    "ApproximationWarning",
    "ConfidenceInterval",
    "DataError",
    "DegenerateDataWarning",
    "INTERVAL_METHODS",
    "LLMPowerError",
    "LLMPowerWarning",
    "__version__",
    "coverage",
    "half_width",
    "n_for_half_width",
    "proportion_ci",
    "rule_of_three",
]
