"""The kernel: every formula two families share, written once. It imports only :mod:`llm_power._core`.

Every wing of the package (compare, diagnose, the gate, arenas, win rates, pass@k, judges, PPI,
the inspect extension) is a client of these modules and never re-derives what they hold:

- :mod:`.quantiles` -- normal and Student-t quantiles, critical values, the constant K, the
  p-values of z and t statistics (no module outside the kernel calls ``ndtri``, ``norm.ppf`` or
  ``t.ppf``/``t.isf``: ``tests/kernel/test_kernel.py``);
- :mod:`.binomial` -- the binomial bounds of every interval method; :mod:`.pvalues` -- vectorised
  McNemar p-values; :mod:`.paired_intervals` -- the intervals that invert the McNemar tests,
  Newcombe's and Tango's;
- :mod:`.sufficient` -- 2x2 counts, Gram blocks, per-cluster sums, Chan merges, cluster resamples;
- :mod:`.variance` -- CR2/CR1 variances with their degrees of freedom, the ``DESIGN_EFFECTS``
  registry, the CR1 sandwich of an M-estimator with its "not estimable" rule;
  :mod:`.wild_cluster` -- few-cluster inference on a mean: the wild cluster bootstrap (WCR test,
  its inversion, WCU bootstrap-t) and the CV3 jackknife variance, from cluster sums;
  :mod:`.cluster_nstar` -- N* of a clustered benchmark by the cluster bootstrap (the power of a
  clustered test simulated on benchmarks grown from the observed clusters); :mod:`.cluster_family`
  -- the CR2 covariance, design effects and per-item SDs of a family of gaps on clustered items;
- :mod:`.verdict` -- N*, q, MDE and "resolved" (plug-in, exact McNemar, clustered) and the test
  each pair gets; :mod:`.sizes` and :mod:`.exact` -- K/N*/MDE helpers and exact power;
  :mod:`.binary_pairs` -- every per-pair quantity of 0/1 pairs in one pass;
- :mod:`.family` -- the correlation of a family of comparisons and many-to-one (Dunnett) power;
  :mod:`.leaderboard_power` -- the power of a whole family under the verdict and a correction
  (resolved count, P(all), items needed) in the joint normal limit;
- :mod:`.betting` -- betting confidence sequences for bounded differences; :mod:`.survey` --
  design-based estimates of a mean from a random subset of the items (the difference estimator).
"""
