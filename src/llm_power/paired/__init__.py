"""Two models on the same items: the paired tests (McNemar, sign, Wilcoxon, paired t, Cochran's Q,
5x2cv), resampling (paired bootstrap, sign-flip permutation), effect sizes and paired intervals,
the ``TESTS`` registry and :func:`compare`, the one-line paired comparison.

Each name is imported from its module on first use (``import llm_power.paired`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._compare import Comparison, compare
    from ._effects import (
        PAIRED_CI_METHODS,
        EffectSizesResult,
        effect_sizes,
        paired_counts,
        paired_difference_ci,
        paired_difference_ci_from_counts,
    )
    from ._permutation import PermutationResult, permutation_interval, permutation_test
    from ._registry import (
        COMPARE_METHODS,
        DEFAULT_RESAMPLES,
        MCNEMAR_INTERVALS,
        SIMULATION_TESTS,
        TESTS,
        PairData,
        PairedTest,
        TestRun,
        interval_at,
    )
    from ._resampling import BootstrapResult, paired_bootstrap
    from ._several import cochran_q, five_by_two_cv
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

#: public name -> the module of this family that defines it
_LAZY = {
    "BootstrapResult": "._resampling",
    "COMPARE_METHODS": "._registry",
    "Comparison": "._compare",
    "DEFAULT_RESAMPLES": "._registry",
    "EffectSizesResult": "._effects",
    "MCNEMAR_INTERVALS": "._registry",
    "McNemarResult": "._tests",
    "PAIRED_CI_METHODS": "._effects",
    "PairData": "._registry",
    "PairedTest": "._registry",
    "PermutationResult": "._permutation",
    "SIMULATION_TESTS": "._registry",
    "TESTS": "._registry",
    "TestResult": "._tests",
    "TestRun": "._registry",
    "cochran_q": "._several",
    "compare": "._compare",
    "effect_sizes": "._effects",
    "five_by_two_cv": "._several",
    "interval_at": "._registry",
    "mcnemar": "._tests",
    "mcnemar_from_counts": "._tests",
    "paired_bootstrap": "._resampling",
    "paired_counts": "._effects",
    "paired_difference_ci": "._effects",
    "paired_difference_ci_from_counts": "._effects",
    "paired_t": "._tests",
    "permutation_interval": "._permutation",
    "permutation_test": "._permutation",
    "sign_test": "._tests",
    "unpaired_z": "._tests",
    "wilcoxon": "._tests",
}

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
    "SIMULATION_TESTS",
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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
