"""The choices of the public options, in a module that imports nothing: the statistics modules
and the command line (whose ``--help`` must not load numpy or scipy) share these tuples.
"""

from __future__ import annotations

__all__ = ["ADJUST_METHODS", "CORRECTIONS", "DESIGNS", "DESIGN_EFFECTS", "INTERVAL_METHODS"]

#: one-score interval methods (``proportion_ci``)
INTERVAL_METHODS = ("wilson", "clopper_pearson", "jeffreys", "agresti_coull", "wald")
#: p-value adjustments (``adjust_pvalues``)
ADJUST_METHODS = ("bh", "bonferroni", "by", "hochberg", "holm")
#: multiplicity corrections of a resolution report (``diagnose``)
CORRECTIONS = ("bh", "bonferroni", "holm")
#: design-effect models of the cluster regime (the registry: ``_kernel.variance.DESIGN_EFFECTS``), default first
DESIGN_EFFECTS = ("robust", "cr1", "anova", "paper")
#: planning designs
DESIGNS = ("paired", "unpaired")
