"""``df.llm_power``: registered whichever of pandas and llm_power is imported first (without
``import llm_power`` loading pandas); its diagnose and compare equal the functions on the
aligned matrix; inspect-style frames (C/I scores, named columns) work.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import llm_power as lp
from llm_power._core.errors import DataError


@pytest.mark.parametrize("order", ["import pandas; import llm_power", "import llm_power; import pandas"])
def test_registered_in_either_import_order(order):
    code = (f"{order}; import sys, pandas as pd; "
            "print(hasattr(pd.DataFrame({'a': [1]}), 'llm_power'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def _long(rng, m=4, n=300):
    skill = np.linspace(0.5, 0.7, m)
    x = (rng.random((n, m)) < skill).astype(int)
    rows = [(f"m{k}", f"q{i}", x[i, k], f"s{i % 7}") for k in range(m) for i in range(n)]
    return pd.DataFrame(rows, columns=["model", "item", "score", "subject"]), x


def test_diagnose_and_compare_equal_the_functions():
    frame, x = _long(np.random.default_rng(1))
    got = frame.llm_power.diagnose(cluster="subject", correction="holm", rng=0)
    labels = [f"s{i % 7}" for i in range(x.shape[0])]
    want = lp.diagnose(x, models=["m0", "m1", "m2", "m3"], cluster=labels, correction="holm", rng=0)
    assert got.models == want.models and got.n_unresolved == want.n_unresolved
    np.testing.assert_allclose(got.columns["pvalue"], want.columns["pvalue"], rtol=1e-12)
    res = frame.llm_power.compare("m3", "m0")
    assert res.pvalue == pytest.approx(lp.compare(x[:, 3], x[:, 0]).pvalue, rel=1e-12)


def test_inspect_style_frame_with_named_columns():
    frame = pd.DataFrame({"sample_id": [1, 2, 3, 4] * 2, "model": ["a"] * 4 + ["b"] * 4,
                          "score_choice": ["C", "I", "C", "C", "C", "C", "I", "C"]})
    aligned = frame.llm_power.matrix(score="score_choice")
    assert aligned.models == ["a", "b"] and aligned.scores[:, 0].tolist() == [1.0, 0.0, 1.0, 1.0]
    with pytest.raises(DataError, match="no score column"):
        frame.llm_power.matrix()
    with pytest.raises(DataError, match="no model 'c'"):
        frame.llm_power.compare("a", "c", score="score_choice")
