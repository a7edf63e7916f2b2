"""llm-power: statistically honest numbers for LLM evaluations.

- one score's uncertainty: :func:`proportion_ci`, :func:`coverage`, :func:`rule_of_three`,
  :func:`half_width`, :func:`n_for_half_width`;
- two models on the same items: :func:`compare` (one line), the paired tests :func:`mcnemar`,
  :func:`paired_bootstrap`, :func:`permutation_test`, :func:`sign_test`, :func:`wilcoxon`,
  :func:`paired_t`, :func:`cochran_q`, :func:`five_by_two_cv` (and :func:`unpaired_z` for
  contrast), :func:`paired_difference_ci` and :func:`effect_sizes`.

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
from .comparison import COMPARE_METHODS, Comparison, compare
from .effects import (
    PAIRED_CI_METHODS,
    EffectSizes,
    effect_sizes,
    paired_difference_ci,
    paired_difference_ci_from_counts,
)
from .intervals import (
    INTERVAL_METHODS,
    coverage,
    half_width,
    n_for_half_width,
    proportion_ci,
    rule_of_three,
)
from .paired import (
    McNemarResult,
    TestResult,
    cochran_q,
    five_by_two_cv,
    mcnemar,
    mcnemar_from_counts,
    paired_t,
    sign_test,
    unpaired_z,
    wilcoxon,
)
from .resampling import BootstrapResult, PermutationResult, paired_bootstrap, permutation_test

__all__ = [
    "ApproximationWarning",
    "BootstrapResult",
    "COMPARE_METHODS",
    "Comparison",
    "ConfidenceInterval",
    "DataError",
    "DegenerateDataWarning",
    "EffectSizes",
    "INTERVAL_METHODS",
    "LLMPowerError",
    "LLMPowerWarning",
    "McNemarResult",
    "PAIRED_CI_METHODS",
    "PermutationResult",
    "TestResult",
    "__version__",
    "cochran_q",
    "compare",
    "coverage",
    "effect_sizes",
    "five_by_two_cv",
    "half_width",
    "mcnemar",
    "mcnemar_from_counts",
    "n_for_half_width",
    "paired_bootstrap",
    "paired_difference_ci",
    "paired_difference_ci_from_counts",
    "paired_t",
    "permutation_test",
    "proportion_ci",
    "rule_of_three",
    "sign_test",
    "unpaired_z",
    "wilcoxon",
]
