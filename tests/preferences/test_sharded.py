"""Bradley-Terry from shards partitioned by prompt (``bradley_terry_shards``) and from counts
(``bradley_terry(count=)``, ``fit_style(frequency=)``).

Oracles: the in-memory ``bradley_terry`` on all battles at once (the one-table path: its own encoding,
cell count and per-cluster meat over every battle); a brute-force meat (each battle's score vector
written out densely, summed per prompt with pandas, outer products summed); the fit of the battles
written out one per row for every counts table.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest

from llm_power import DataError, bradley_terry, bradley_terry_shards
from llm_power.preferences import _sharded
from llm_power.preferences._battles import battle_cluster_codes, encode_battles
from llm_power.preferences._fit import battle_scores, cluster_meat
from llm_power.preferences._style import fit_style

OUTCOMES = np.array(["model_a", "model_b", "tie"])


def battles(n: int = 6000, m: int = 10, prompts: int = 900, seed: int = 0, *, tie_rate: float = 0.12) -> pd.DataFrame:
    """Battles sorted by prompt (so contiguous slices at prompt boundaries are shards partitioned by prompt);
    the first third of the prompts only uses the first half of the models (shards missing models).
    """
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.8, m)
    prompt = np.sort(rng.integers(0, prompts, n))
    low = prompt < prompts // 3
    width = np.where(low, m // 2, m)
    a = rng.integers(0, width)
    b = (a + 1 + rng.integers(0, width - 1)) % width
    p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
    outcome = np.where(rng.random(n) < tie_rate, 2, np.where(rng.random(n) < p, 0, 1))
    names = np.array([f"model-{k:02d}" for k in range(m)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": OUTCOMES[outcome],
                         "prompt": [f"p{x:05d}" for x in prompt]})


def split(df: pd.DataFrame, cuts: list[float]) -> list[pd.DataFrame]:
    """Slices of ``df`` (sorted by prompt) at fractions ``cuts``, moved to the next prompt boundary."""
    prompt = df["prompt"].to_numpy()
    edges = [0]
    for c in cuts:
        i = int(c * len(df))
        while 0 < i < len(df) and prompt[i] == prompt[i - 1]:
            i += 1
        edges.append(i)
    edges.append(len(df))
    return [df.iloc[i:j].reset_index(drop=True) for i, j in zip(edges[:-1], edges[1:], strict=True) if j > i]


SHARDINGS = {"one": [], "two": [0.5], "uneven": [0.01, 0.02, 0.5, 0.93], "many": list(np.linspace(0.03, 0.97, 30))}


def same(res, ref, *, rtol: float = 1e-10) -> None:
    assert res.models == ref.models
    assert res.n_battles == ref.n_battles and res.n_clusters == ref.n_clusters and res.df == ref.df
    assert res.separated == ref.separated and res.ties == ref.ties
    np.testing.assert_allclose(res.ratings, ref.ratings, rtol=0, atol=1e-10)
    scale = np.nanmax(np.abs(ref.covariance))
    np.testing.assert_allclose(res.covariance, ref.covariance, rtol=0, atol=rtol * scale)
    if ref.tie_parameter is None:
        assert res.tie_parameter is None
    else:
        assert res.tie_parameter == pytest.approx(ref.tie_parameter, rel=1e-10)


@pytest.mark.parametrize("ties", ["half", "davidson"])
@pytest.mark.parametrize("sharding", sorted(SHARDINGS))
def test_shards_equal_the_in_memory_fit(sharding, ties):
    df = battles(seed=1)
    shards = split(df, SHARDINGS[sharding])
    assert sum(len(s) for s in shards) == len(df)
    if sharding == "uneven":  # the first shards hold only the first half of the models
        assert df["model_a"].nunique() > shards[0]["model_a"].nunique()
    same(bradley_terry_shards(shards, cluster="prompt", ties=ties), bradley_terry(df, cluster="prompt", ties=ties))
    same(bradley_terry_shards(shards, ties=ties), bradley_terry(df, ties=ties))


def test_the_order_of_the_shards_does_not_matter():
    df = battles(seed=16)
    shards = split(df, SHARDINGS["uneven"])
    forward = bradley_terry_shards(shards, cluster="prompt", ties="davidson")
    backward = bradley_terry_shards(shards[::-1], cluster="prompt", ties="davidson")
    np.testing.assert_array_equal(backward.ratings, forward.ratings)  # the counts are integers: exactly
    same(backward, forward, rtol=1e-13)
    same(bradley_terry_shards(df, cluster="prompt"), bradley_terry(df, cluster="prompt"))  # one table: one shard


def _brute_meat(df: pd.DataFrame, res) -> np.ndarray:
    """sum over prompts of s_g s_g', each battle's score (y - p)(e_a - e_b) written out densely (ties half)."""
    m = len(res.models)
    index = {x: k for k, x in enumerate(res.models)}
    a = df["model_a"].map(index).to_numpy()
    b = df["model_b"].map(index).to_numpy()
    y = df["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    r = y - 1 / (1 + np.exp(-(res.ratings[a] - res.ratings[b])))
    dense = np.zeros((len(df), m))
    dense[np.arange(len(df)), a] += r
    dense[np.arange(len(df)), b] -= r
    per_prompt = pd.DataFrame(dense).groupby(df["prompt"].to_numpy()).sum().to_numpy()
    return per_prompt.T @ per_prompt


@pytest.mark.parametrize("sharding", ["one", "uneven", "many"])
def test_the_sharded_meat_is_the_sum_of_the_prompts_outer_products(sharding):
    """Pass 2's partial meats, summed over shards, equal the brute-force meat over all battles."""
    df = battles(seed=2)
    res = bradley_terry(df, cluster="prompt")
    shards = split(df, SHARDINGS[sharding])
    codes = {x: k for k, x in enumerate(res.models)}
    cells, *_ = _sharded._merge_counts(_sharded.run_local(_sharded._count_shard, shards, "prompt", None))  # noqa: SLF001
    meat, g = np.zeros((len(codes), len(codes))), 0
    for _, (part, part_g) in _sharded.run_local(_sharded._score_shard, shards, "prompt", None,  # noqa: SLF001
                                                (codes, cells, res.ratings, None)):
        meat += part
        g += part_g
    brute = _brute_meat(df, res)
    assert g == df["prompt"].nunique() == res.n_clusters
    np.testing.assert_allclose(meat, brute, rtol=0, atol=1e-10 * np.abs(brute).max())
    enc = encode_battles(df)  # the in-memory meat: every battle's score, summed per prompt in one matrix
    groups = battle_cluster_codes("prompt", df, enc.n)
    whole = cluster_meat(len(codes), groups, int(groups.max()) + 1, enc.ia, enc.ib,
                         battle_scores(cells, res.ratings, None, enc.ia, enc.ib, enc.outcome))
    np.testing.assert_allclose(meat, whole, rtol=0, atol=1e-10 * np.abs(whole).max())


def test_models_that_never_lose_or_win_are_placed_as_in_memory():
    df = battles(seed=3)
    extra = pd.DataFrame({"model_a": ["zeta"] * 6 + ["alpha"] * 3, "model_b": ["model-03"] * 6 + ["model-05"] * 3,
                          "winner": ["model_a"] * 6 + ["model_b"] * 3, "prompt": ["q0", "q0", "q1", "q1", "q2", "q3",
                                                                                  "q4", "q4", "q5"]})
    full = pd.concat([df, extra], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = bradley_terry(full, cluster="prompt")
        res = bradley_terry_shards([*split(df, [0.5]), extra], cluster="prompt")
    assert ref.separated == {"alpha": "never wins against the rest", "zeta": "never loses to the rest"}
    same(res, ref)
    assert res.n_clusters == df["prompt"].nunique()  # the prompts of separated models only are not counted


def test_every_kind_of_shard_gives_the_same_fit(tmp_path):
    pa = pytest.importorskip("pyarrow")
    df = battles(n=3000, seed=4)
    parts = split(df, [0.25, 0.5, 0.75])
    parts[0].to_parquet(tmp_path / "s0.parquet")
    parts[1].to_csv(tmp_path / "s1.csv", index=False)
    kinds = [str(tmp_path / "s0.parquet"), tmp_path / "s1.csv", pa.Table.from_pandas(parts[2]),
             functools.partial(lambda d: {c: d[c].tolist() for c in d.columns}, parts[3])]
    same(bradley_terry_shards(kinds, cluster="prompt"), bradley_terry(df, cluster="prompt"))
    same(bradley_terry_shards([df.iloc[:0], df, df.iloc[:0]], cluster="prompt"), bradley_terry(df, cluster="prompt"))


def test_integer_prompts_and_the_question_id_column():
    df = battles(n=3000, seed=5)
    df["question_id"] = df.pop("prompt").str[1:].astype(np.int64)
    shards = split(df.assign(prompt=df["question_id"]), [0.5])
    same(bradley_terry_shards(shards, cluster="question"), bradley_terry(df, cluster="question"))


def test_a_prompt_in_two_shards_is_an_error_naming_it_and_the_shards():
    df = battles(n=2000, seed=6)
    first = df["prompt"].iloc[1000]
    with pytest.raises(DataError, match=rf"cluster '{first}' has battles in shard 0 and shard 1: shards must be "
                                        "partitioned by `cluster`"):
        bradley_terry_shards([df.iloc[:1001], df.iloc[1000:]], cluster="prompt")
    ints = df.assign(prompt=df["prompt"].str[1:].astype(int))
    with pytest.raises(DataError, match=r"cluster 17 has battles in shard 1 and shard 2"):
        bradley_terry_shards([ints.iloc[:10].assign(prompt=1), ints.assign(prompt=17), ints.assign(prompt=17)],
                             cluster="prompt")


def test_a_shared_hash_of_different_labels_is_not_an_error(monkeypatch):
    """The hashes only find candidates; the labels themselves decide (a 64-bit collision is no error)."""
    df = battles(n=2000, seed=7)
    shards = split(df, [0.5])
    real = _sharded._label_hashes  # noqa: SLF001

    def colliding(values, codes, g):
        hashes = real(values, codes, g)
        return np.sort(np.r_[np.uint64(12345), hashes[1:]])  # one label of every shard hashed alike

    monkeypatch.setattr(_sharded, "_label_hashes", colliding)
    same(bradley_terry_shards(shards, cluster="prompt"), bradley_terry(df, cluster="prompt"))


def test_validation():
    df = battles(n=1000, seed=8)
    with pytest.raises(ValueError, match="`engine` must be one of"):
        bradley_terry_shards([df], engine="spark")
    with pytest.raises(ValueError, match="`ties` must be one of"):
        bradley_terry_shards([df], ties="third")
    with pytest.raises(TypeError, match="`shards` must be a sequence"):
        bradley_terry_shards(iter([df]))
    with pytest.raises(ValueError, match="`shards` is empty"):
        bradley_terry_shards([])
    with pytest.raises(TypeError, match="a shard must be a battles table"):
        bradley_terry_shards([df, 3])
    with pytest.raises(DataError, match="shard 0: cluster='topic': the battles have no column 'topic'"):
        bradley_terry_shards([df, df.iloc[:0]], cluster="topic")
    bad = df.assign(prompt=df["prompt"].where(np.arange(len(df)) != 5, None))
    with pytest.raises(DataError, match=r"shard 0, field 'cluster': 1 battle\(s\) have no cluster label"):
        bradley_terry_shards([bad], cluster="prompt")
    with pytest.raises(DataError, match=r"shard 0 \(.*nowhere.parquet\): file not found"):
        bradley_terry_shards(["nowhere.parquet"])
    with pytest.raises(DataError, match=r"shard 0, field 'n': battle row 2: count 1.5 is not a whole number >= 0"):
        bradley_terry_shards([df.assign(n=[1, 1, 1.5] + [1] * (len(df) - 3))], count="n")
    with pytest.raises(ValueError, match="cluster-robust inference needs at least 2 clusters"):
        bradley_terry_shards([df.assign(prompt="one")], cluster="prompt")


# =================================================================================================
# Counts
# =================================================================================================

def counted(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    return df.groupby(by, as_index=False, sort=False).size().rename(columns={"size": "n"})


def expanded(table: pd.DataFrame) -> pd.DataFrame:
    return table.loc[table.index.repeat(table["n"])].drop(columns="n").reset_index(drop=True)


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_counts_equal_the_battles_written_out(ties):
    df = battles(seed=9)
    table = counted(df, ["model_a", "model_b", "winner"])
    assert len(table) < len(df) / 10
    ref = bradley_terry(expanded(table), ties=ties)
    same(bradley_terry(table, count="n", ties=ties), ref)
    same(bradley_terry_shards([table.iloc[:40], table.iloc[40:]], count="n", ties=ties), ref)
    zero = pd.concat([table, table.iloc[:3].assign(n=0)], ignore_index=True)  # rows of count 0 are no battles
    same(bradley_terry(zero, count="n", ties=ties), ref)


def test_counts_per_prompt_keep_the_clustered_sandwich():
    df = battles(seed=10)
    table = counted(df, ["prompt", "model_a", "model_b", "winner"])
    assert table["n"].max() > 1
    ref = bradley_terry(expanded(table), cluster="prompt")
    same(bradley_terry(table, count="n", cluster="prompt"), ref)
    same(bradley_terry(table, count="n", cluster=table["prompt"].to_numpy()), ref)
    same(bradley_terry_shards(split(table, [0.3, 0.6]), count="n", cluster="prompt"), ref)


def _style_table(seed: int, n_rows: int = 400) -> pd.DataFrame:
    """Counts of (pair, outcome, length bucket) with a style effect, and a prompt per row."""
    rng = np.random.default_rng(seed)
    m = 7
    theta = rng.normal(0, 0.7, m)
    a = rng.integers(0, m, n_rows)
    b = (a + 1 + rng.integers(0, m - 1, n_rows)) % m
    bucket = rng.integers(-2, 3, n_rows).astype(float)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b] + 0.4 * bucket)))
    won = rng.random(n_rows) < p
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": np.where(won, "model_a", "model_b"),
                         "length": bucket, "markdown": rng.integers(0, 2, n_rows).astype(float),
                         "prompt": rng.integers(0, 60, n_rows), "w": rng.uniform(0.5, 2.0, n_rows),
                         "n": rng.integers(1, 9, n_rows)})


@pytest.mark.parametrize("cluster", [None, "prompt"])
@pytest.mark.parametrize("weights", [None, "w"])
def test_style_control_from_counts_uses_frequency_weights(cluster, weights):
    table = _style_table(11)
    ref = bradley_terry(expanded(table), covariates=["length", "markdown"], weights=weights, cluster=cluster)
    res = bradley_terry(table, count="n", covariates=["length", "markdown"], weights=weights, cluster=cluster)
    same(res, ref)
    np.testing.assert_allclose(res.coefficients, ref.coefficients, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.coefficient_covariance, ref.coefficient_covariance, rtol=0,
                               atol=1e-10 * np.abs(ref.coefficient_covariance).max())


def test_fit_style_frequency_is_not_a_sampling_weight():
    """frequency=n is n battles (meat n r^2); weights=n is one battle of weight n (meat (n r)^2): same point
    estimate, different sandwich; frequency equals the rows repeated."""
    table = _style_table(12, 200)
    codes = {x: k for k, x in enumerate(sorted(set(table["model_a"]) | set(table["model_b"])))}
    ia, ib = table["model_a"].map(codes).to_numpy(), table["model_b"].map(codes).to_numpy()
    y = (table["winner"] == "model_a").to_numpy(float)
    x, n = table[["length"]].to_numpy(), table["n"].to_numpy()
    freq = fit_style(ia, ib, y, len(codes), covariates=x, frequency=n)
    weighted = fit_style(ia, ib, y, len(codes), covariates=x, weights=n)
    rep = np.repeat(np.arange(len(table)), n)
    repeated = fit_style(ia[rep], ib[rep], y[rep], len(codes), covariates=x[rep])
    np.testing.assert_allclose(freq.ratings, repeated.ratings, atol=1e-10)
    np.testing.assert_allclose(freq.covariance, repeated.covariance, atol=1e-10 * np.abs(repeated.covariance).max())
    np.testing.assert_allclose(weighted.ratings, repeated.ratings, atol=1e-8)
    assert not np.allclose(weighted.covariance, repeated.covariance, rtol=0.05)
    with pytest.raises(DataError, match="frequencies finite and positive"):
        fit_style(ia, ib, y, len(codes), frequency=np.r_[0, n[1:]])


def test_count_validation():
    table = counted(battles(n=500, seed=13), ["model_a", "model_b", "winner"])
    with pytest.raises(ValueError, match="`count` is fitted with method='sandwich'"):
        bradley_terry(table, count="n", method="bootstrap")
    with pytest.raises(TypeError, match="`count` must be a column name"):
        bradley_terry(table, count=table["n"].to_numpy())
    with pytest.raises(DataError, match=r"count=.m.: the battles have no numeric column 'm'"):
        bradley_terry(table, count="m")
    with pytest.raises(DataError, match=r"battle row 0: count -1 is not a whole number >= 0"):
        bradley_terry(table.assign(n=-1), count="n")


# =================================================================================================
# The Dask engine: the same passes as tasks, the same result
# =================================================================================================

def test_the_dask_engine_gives_the_local_result(dask_client, tmp_path):
    df = battles(seed=14)
    shards = split(df, [0.1, 0.2, 0.45, 0.8])
    shards[1].to_parquet(tmp_path / "s1.parquet")
    shards[2].to_parquet(tmp_path / "s2.parquet")
    given = [shards[0], str(tmp_path / "s1.parquet"), functools.partial(pd.read_parquet, tmp_path / "s2.parquet"),
             *shards[3:]]
    for ties in ("half", "davidson"):
        local = bradley_terry_shards(given, cluster="prompt", ties=ties)
        dask = bradley_terry_shards(given, cluster="prompt", ties=ties, engine="dask", scheduler=dask_client)
        same(dask, local, rtol=1e-12)
        np.testing.assert_array_equal(dask.ratings, local.ratings)
    same(bradley_terry_shards(given, engine="dask", scheduler=dask_client), bradley_terry_shards(given), rtol=1e-12)
    with pytest.raises(DataError, match="has battles in shard 0 and shard 1"):
        bradley_terry_shards([df.iloc[:1001], df.iloc[1000:]], cluster="prompt", engine="dask",
                             scheduler=dask_client)


@pytest.mark.slow
def test_a_million_battles_in_forty_shards_equal_the_in_memory_fit():
    df = battles(n=1_000_000, m=60, prompts=200_000, seed=15)
    ref = bradley_terry(df, cluster="prompt", ties="davidson")
    same(bradley_terry_shards(split(df, list(np.linspace(0.025, 0.975, 39))), cluster="prompt", ties="davidson"), ref)
