"""Several samples per question: pass@k, pass^k and maj@k with their intervals and comparisons,
their planning, and the variance components of repeated sampling.
"""

from ._compare import (
    PassAtKComparison,
    compare_pass_at_k,
)
from ._majority import (
    maj_at_k,
    maj_at_k_ci,
)
from ._passk import (
    PassAtKResult,
    pass_at_k,
    pass_at_k_ci,
    pass_at_k_matrix,
    pass_hat_k,
)
from ._plan import (
    PassAtKPlanResult,
    pass_at_k_mde,
    pass_at_k_plan,
)
from ._repeats import (
    RepeatedSamplingPlanResult,
    VarianceComponentsResult,
    paired_variance_components,
    repeated_sampling_plan,
    sample_size_repeated,
    variance_components,
)

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
