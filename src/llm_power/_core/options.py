"""The choices of the public options, in a module that imports nothing: the statistics modules
and the command line (whose ``--help`` must not load numpy or scipy) share these tuples.
"""

from __future__ import annotations

__all__ = ["ADJUST_METHODS", "CORRECTIONS", "DESIGNS", "INTERVAL_METHODS"]

#: one-score interval methods (``proportion_ci``)
INTERVAL_METHODS = ("wilson", "clopper_pearson", "jeffreys", "agresti_coull", "wald")
#: p-value adjustments (``adjust_pvalues``)
ADJUST_METHODS = ("bh", "bonferroni", "by", "hochberg", "holm")
#: multiplicity corrections of a resolution report (``diagnose``)
CORRECTIONS = ("bh", "bonferroni", "holm")
#: planning designs
DESIGNS = ("paired", "unpaired")
