"""The kernel: every formula two families share, written once.

Every wing of the package (compare, diagnose, the gate, arenas, win rates, pass@k, judges, PPI,
the inspect extension) is a client of these modules and never re-derives what they hold:

- :mod:`.quantiles` -- normal and Student-t quantiles, the critical values of a test at
  (alpha, power) and the constant K; the p-values of z and t statistics. No module outside the
  kernel calls ``ndtri``, ``norm.ppf`` or ``t.ppf``/``t.isf`` (``tests/test_kernel.py``).
- :mod:`.clusters` -- the one cluster-label coder (missing labels are an error everywhere), the
  cluster-robust variances of a mean (CR2 with Imbens-Kolesar degrees of freedom, CR1 with
  G - 1) and of an M-estimator (the CR1 sandwich, with its "not estimable" rule).
- :mod:`.paired_intervals` -- the interval that inverts each McNemar test (so "the interval
  excludes 0" and "the test rejects" are the same statement).
- :mod:`.betting` -- the betting confidence sequence for bounded differences (no plug-in variance).

``_verdict.py`` (N*, q, MDE, "resolved") and ``_kernels.py`` (K, N*, MDE helpers) are kernel
modules that still live at the package root; they take every quantile from here.
"""
