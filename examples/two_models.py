"""Is model A better than model B on the same items? (llm-power quick tour, part 2)

A scored 75% and B 71% on the same 200 questions. Whether that 4-point gap is evidence depends
on how often the two models disagree: paired tests use that, unpaired ones throw it away.
"""

import warnings

import numpy as np

from llm_power import compare, effect_sizes, mcnemar, paired_bootstrap, permutation_test, unpaired_z


def table(n11, n10, n01, n00):
    """Per-item correctness of A and B with the given 2x2 table (both, A only, B only, neither)."""
    a = np.r_[np.ones(n11), np.ones(n10), np.zeros(n01), np.zeros(n00)]
    b = np.r_[np.ones(n11), np.zeros(n10), np.ones(n01), np.zeros(n00)]
    return a, b


# Same accuracies (150/200 vs 142/200), two different amounts of disagreement.
for n11, n10, n01, n00 in [(141, 9, 1, 49), (117, 33, 25, 25)]:
    a, b = table(n11, n10, n01, n00)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unpaired_z warns that it ignores the pairing
        p_unpaired = unpaired_z(a, b).pvalue
    es = effect_sizes(a, b)
    print(f"A {a.mean():.0%} vs B {b.mean():.0%}, disagree on {n10 + n01} items: "
          f"McNemar exact p = {mcnemar(a, b).pvalue:.4f}, unpaired p = {p_unpaired:.3f}, "
          f"SE ratio paired/unpaired = {es.se_ratio:.2f} (phi = {es.phi:.2f})")

# The one-line answer, with the resolution verdict.
a, b = table(141, 9, 1, 49)
print()
print(compare(a, b).summary())

# A non-linear metric: F1 difference from per-item (tp, fp, fn), with the paired bootstrap and
# the sign-flip permutation test.
rng = np.random.default_rng(0)
gold = rng.random((300, 1)) < 0.4
pred_a = np.where(rng.random((300, 1)) < 0.85, gold, ~gold)
pred_b = np.where(rng.random((300, 1)) < 0.80, gold, ~gold)


def counts(pred):
    return np.hstack([pred & gold, pred & ~gold, ~pred & gold]).astype(float)  # tp, fp, fn


def f1_difference(x, y, axis):
    """Vectorised: x, y have a leading batch axis; ``axis`` is the item axis (1)."""
    def f1(z):
        tp, fp, fn = (z[..., j].sum(axis=axis) for j in range(3))
        return 2 * tp / (2 * tp + fp + fn)
    return f1(x) - f1(y)


boot = paired_bootstrap(counts(pred_a), counts(pred_b), statistic=f1_difference, rng=1)
perm = permutation_test(counts(pred_a), counts(pred_b), statistic=f1_difference, rng=1)
lo, hi = boot.confidence_interval()
print()
print(f"F1 difference {boot.estimate:+.3f}, bootstrap 95% CI [{lo:+.3f}, {hi:+.3f}], "
      f"bootstrap p = {boot.pvalue:.3f}, permutation p = {perm.pvalue:.3f}")
