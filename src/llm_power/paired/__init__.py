"""Two models on the same items: the paired tests (McNemar, sign, Wilcoxon, paired t, Cochran's Q,
5x2cv), resampling (paired bootstrap, sign-flip permutation), effect sizes and paired intervals,
the ``TESTS`` registry and :func:`compare`, the one-line paired comparison.
"""

from ._compare import (
    COMPARE_METHODS,
    Comparison,
    compare,
)
from ._effects import (
    PAIRED_CI_METHODS,
    EffectSizesResult,
    effect_sizes,
    paired_counts,
    paired_difference_ci,
    paired_difference_ci_from_counts,
)
from ._permutation import (
    PermutationResult,
    permutation_interval,
    permutation_test,
)
from ._registry import (
    DEFAULT_RESAMPLES,
    MCNEMAR_INTERVALS,
    TESTS,
    PairData,
    PairedTest,
    TestRun,
    interval_at,
)
from ._resampling import (
    BootstrapResult,
    paired_bootstrap,
)
from ._several import (
    cochran_q,
    five_by_two_cv,
)
from ._tests import (
    McNemarResult,
    TestResult,
    mcnemar,
    mcnemar_from_counts,
    paired_t,
    sign_test,
    unpaired_z,
    wilcoxon,
)

__all__ = [
    "BootstrapResult",
    "COMPARE_METHODS",
    "Comparison",
    "DEFAULT_RESAMPLES",
    "EffectSizesResult",
    "MCNEMAR_INTERVALS",
    "McNemarResult",
    "PAIRED_CI_METHODS",
    "PairData",
    "PairedTest",
    "PermutationResult",
    "TESTS",
    "TestResult",
    "TestRun",
    "cochran_q",
    "compare",
    "effect_sizes",
    "five_by_two_cv",
    "interval_at",
    "mcnemar",
    "mcnemar_from_counts",
    "paired_bootstrap",
    "paired_counts",
    "paired_difference_ci",
    "paired_difference_ci_from_counts",
    "paired_t",
    "permutation_interval",
    "permutation_test",
    "sign_test",
    "unpaired_z",
    "wilcoxon",
]
