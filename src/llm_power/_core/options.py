"""The choices of the public options, in a module that imports nothing: the statistics modules
and the command line (whose ``--help`` must not load numpy or scipy) share these tuples.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "ADJUST_METHODS", "CLUSTER_METHODS", "CLUSTER_METHOD_LABELS", "COMPARE_METHOD_NAMES", "CORRECTIONS",
    "DESIGNS", "DESIGN_EFFECT_NAMES", "INCONCLUSIVE_POLICIES", "INTERVAL_METHODS", "MAX_FLIPS",
    "VOCABULARY_FLAGS", "vocabulary_type",
]

#: one-score interval methods (``proportion_ci``)
INTERVAL_METHODS = ("wilson", "clopper_pearson", "jeffreys", "agresti_coull", "wald")
#: p-value adjustments (``adjust_pvalues``)
ADJUST_METHODS = ("bh", "bonferroni", "by", "hochberg", "holm")
#: multiplicity corrections of a resolution report (``diagnose``)
CORRECTIONS = ("bh", "bonferroni", "by", "holm")
#: the design-effect models of the cluster regime (``llm_power._kernel.variance.DESIGN_EFFECTS``: a test
#: holds the two equal; kept here so that the command line's help loads no numpy)
DESIGN_EFFECT_NAMES = ("anova", "cr1", "paper", "robust")
#: the clustered test and interval (issue 44): the t test on the design-effect variance, the cluster
#: jackknife, the restricted wild cluster bootstrap (:data:`llm_power._kernel.verdict.CLUSTER_METHODS`)
CLUSTER_METHODS = ("cr2", "cv3", "wild")
#: each clustered test by name, as the reports say it
CLUSTER_METHOD_LABELS = {"cr2": "cluster-robust t", "cv3": "cluster jackknife t", "wild": "wild cluster bootstrap"}
#: ``compare(method=...)``: "auto" and the tests of ``llm_power.paired._registry.TESTS`` (a test holds
#: them equal; kept here so that ``compare --help`` loads no numpy or scipy)
COMPARE_METHOD_NAMES = ("auto", "bootstrap", "mcnemar", "mcnemar_asymptotic", "mcnemar_exact", "mcnemar_mid_p",
                        "paired_t", "permutation", "sign", "wilcoxon")
#: planning designs
DESIGNS = ("paired", "unpaired")
#: what an INCONCLUSIVE gate does to a CI run (the table: :func:`llm_power.gating.gate_outcome`)
INCONCLUSIVE_POLICIES = ("block", "warn", "pass")
#: the most ids per side of the items that flipped a gate's comment lists (``--max-flips``; a comment is at
#: most 65,536 characters)
MAX_FLIPS = 200

#: the flags of the parameter vocabulary (``llm_power._core.params.VOCABULARY``) whose values the command
#: line checks while parsing: a bad value is a usage error naming the flag
VOCABULARY_FLAGS = {"--alpha": "alpha", "--power": "power", "--confidence-level": "confidence_level"}


def vocabulary_type(name: str) -> Callable[[str], object]:
    """The argparse type of a vocabulary flag (the checks load on first use: ``--help`` stays light)."""

    def parse(text: str) -> object:
        from .params import cli_type

        return cli_type(name)(text)

    parse.__name__ = name
    return parse
