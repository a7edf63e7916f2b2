"""Several samples per question: pass@k, pass^k and maj@k with their intervals and comparisons,
their planning, and the variance components of repeated sampling.

Each name is imported from its module on first use (``import llm_power.samples`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._compare import PassAtKComparison, compare_pass_at_k
    from ._majority import maj_at_k, maj_at_k_ci
    from ._passk import PassAtKResult, pass_at_k, pass_at_k_ci, pass_at_k_matrix, pass_hat_k
    from ._plan import PassAtKPlanResult, pass_at_k_mde, pass_at_k_plan
    from ._repeats import (
        RepeatedSamplingPlanResult,
        VarianceComponentsResult,
        paired_variance_components,
        repeated_sampling_plan,
        sample_size_repeated,
        variance_components,
    )

#: public name -> the module of this family that defines it
_LAZY = {
    "PassAtKComparison": "._compare",
    "PassAtKPlanResult": "._plan",
    "PassAtKResult": "._passk",
    "RepeatedSamplingPlanResult": "._repeats",
    "VarianceComponentsResult": "._repeats",
    "compare_pass_at_k": "._compare",
    "maj_at_k": "._majority",
    "maj_at_k_ci": "._majority",
    "paired_variance_components": "._repeats",
    "pass_at_k": "._passk",
    "pass_at_k_ci": "._passk",
    "pass_at_k_matrix": "._passk",
    "pass_at_k_mde": "._plan",
    "pass_at_k_plan": "._plan",
    "pass_hat_k": "._passk",
    "repeated_sampling_plan": "._repeats",
    "sample_size_repeated": "._repeats",
    "variance_components": "._repeats",
}

__all__ = [
    "PassAtKComparison",
    "PassAtKPlanResult",
    "PassAtKResult",
    "RepeatedSamplingPlanResult",
    "VarianceComponentsResult",
    "compare_pass_at_k",
    "maj_at_k",
    "maj_at_k_ci",
    "paired_variance_components",
    "pass_at_k",
    "pass_at_k_ci",
    "pass_at_k_matrix",
    "pass_at_k_mde",
    "pass_at_k_plan",
    "pass_hat_k",
    "repeated_sampling_plan",
    "sample_size_repeated",
    "variance_components",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
