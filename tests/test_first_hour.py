"""The first hour of a new user (issue 12): a verdict that fits the screen, no dead ends,
consistent words, a fast start. One section per numbered item of the issue; the README (item 5)
is tests/test_readme.py, packaging (7) tests/test_packaging.py, the docs site (8)
tests/test_docs_site.py, and the report in a browser tests/report/test_report_browser.py.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import llm_power as lp
from llm_power._core.format import fmt_p, unique_short_names
from llm_power.cli.main import build_parser, main


def run_cli(capsys, monkeypatch, *argv, columns=100):
    monkeypatch.setenv("COLUMNS", str(columns))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- 1. a headline that fits ---------------------------------------------------------------------

def _matches(form: str, full: str) -> bool:
    """A shown name stands for ``full``: equal, or its pieces around "…" occur in order."""
    if form == full:
        return True
    pieces = [p for p in form.split("…") if p]
    if "…" not in form or not full.startswith(form.split("…")[0]):
        return False
    pos = 0
    for piece in pieces:
        pos = full.find(piece, pos)
        if pos < 0:
            return False
        pos += len(piece)
    return form.endswith("…") or full.endswith(form.split("…")[-1])


def _pairs_table(out: str) -> tuple[list[str], list[list[str]], bool]:
    """(header words, the first line of each row split, whether any cell continued on a second line)."""
    lines = out.split("Resolution of", 1)[1].splitlines()[1:]
    rule = next(k for k, line in enumerate(lines) if line.startswith("──"))
    header = " ".join(lines[:rule]).split()
    rows, folded = [], False
    for line in lines[rule + 1:]:
        if line[:1].isdigit():
            rows.append(line.split())
        elif line.startswith(" ") and line.strip():
            folded = True
        else:
            break
    return header, rows, folded


@pytest.mark.parametrize("columns", [100, 120, 80])
def test_demo_table_fits_the_terminal_and_cuts_no_number(capsys, monkeypatch, tmp_path, columns):
    code, out, _ = run_cli(capsys, monkeypatch, "demo", "--html", str(tmp_path / "r.html"), columns=columns)
    assert code == 0
    from wcwidth import wcswidth

    # a path is one word (never split): "report: /a/long/path" may pass a very narrow width
    too_wide = [line for line in out.splitlines() if wcswidth(line.rstrip()) > columns
                and not (len(line.split()) == 2 and line.split()[0].endswith(":"))]
    assert not too_wide, too_wide
    code, js, _ = run_cli(capsys, monkeypatch, "demo", "--html", str(tmp_path / "r.html"), "--format", "json")
    payload = json.loads(js)
    header, rows, folded = _pairs_table(out)
    pairs = payload["pairs"]
    n_star_shown = header[-2:] == ["N*", "cluster"]  # the optional column when the terminal has room
    p_cluster_shown = header[-2:] == ["p", "cluster"]
    by_rank = header[1:3] == ["A", "B"]  # names do not fit: models by their rank in the Models table
    assert not folded  # no row is wrapped at any of these widths
    assert by_rank == ("A, B: the models' ranks in the Models table above" in out)
    assert by_rank == (columns < 120)  # MMLU-Pro's names (27 characters) fit whole only at 120 columns
    assert len(rows) == len(pairs) == 9
    models = payload["models"]
    for k, (row, pair) in enumerate(zip(rows, pairs, strict=True)):
        if p_cluster_shown:
            *row, n_star, p_cluster = row
            assert n_star == f"{math.ceil(pair['n_star_cluster']):,}"
            assert p_cluster == fmt_p(pair["pvalue_cluster"], 2)
        elif n_star_shown:
            *row, n_star = row
            assert n_star == f"{math.ceil(pair['n_star_cluster']):,}"
        number, name_a, name_b, gap, p, *marks, q_strict = row
        # every number in full, equal to the JSON report's value formatted independently
        assert number == str(k + 1)  # "#" numbers the pairs (not model A's rank)
        assert gap == f"{100 * pair['delta']:+.2f}"
        assert p == f"{pair['pvalue']:.2g}" or p == fmt_p(pair["pvalue"], 2)
        assert float(q_strict) == pytest.approx(pair["q_cluster"], abs=0.005)
        assert marks == ["✓" if pair[k] else "✗" for k in
                         ("resolved", "resolved_corrected", "resolved_cluster", "resolved_anytime")]
        if by_rank:
            assert (name_a, name_b) == (str(pair["rank_a"]), str(pair["rank_b"]))
            assert models[pair["rank_a"] - 1] == pair["model_a"] and models[pair["rank_b"] - 1] == pair["model_b"]
            continue
        # a shortened name stands for exactly one model, and for the right one
        for form, full in ((name_a, pair["model_a"]), (name_b, pair["model_b"])):
            assert _matches(form, full)
            assert sum(_matches(form, m) for m in models) == 1, form


def test_narrower_than_any_table_one_paragraph_per_pair_nothing_cut(capsys, monkeypatch, tmp_path):
    from wcwidth import wcswidth

    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, monkeypatch, "demo", "--html", "r.html", columns=50)
    assert code == 0
    assert not [line for line in out.splitlines() if wcswidth(line.rstrip()) > 50
                and not line.startswith("report: /")]  # a path is one word
    code, js, _ = run_cli(capsys, monkeypatch, "demo", "--html", "r.html", "--format", "json")
    text = " ".join(out.split("Resolution of", 1)[1].split())  # paragraphs joined back
    for k, pair in enumerate(json.loads(js)["pairs"]):
        assert f"{k + 1}. #{pair['rank_a']} vs #{pair['rank_b']}: gap (pts) {100 * pair['delta']:+.2f}, p " in text


def test_unique_short_names_keep_versions_apart():
    names = ["Mistral-7B-Instruct-v0.1", "Mistral-7B-Instruct-v0.2", "Meta-Llama-3_1-70B-Instruct",
             "Meta-Llama-3_1-8B-Instruct", "Yi-34B"]
    for width in range(10, 30):
        short = unique_short_names(names, width)
        assert len(set(short)) == len(names)
        for form, full in zip(short, names, strict=True):
            assert len(form) <= width or form == full
            assert _matches(form, full)


def test_unique_short_names_on_random_families():
    rng = np.random.default_rng(1)
    alphabet = list("abcdefghij-_.0123456789")
    for _ in range(200):
        stem = "".join(rng.choice(alphabet, size=rng.integers(5, 25)))
        names = sorted({stem + "".join(rng.choice(alphabet, size=rng.integers(0, 6))) + tail
                        for tail in ("-v0.1", "-v0.2", "-Instruct", "")})
        width = int(rng.integers(8, 30))
        short = unique_short_names(names, width)
        assert len(set(short)) == len(names)
        assert all(_matches(form, full) for form, full in zip(short, names, strict=True))


def test_wide_shows_every_regime_in_full(capsys, monkeypatch, tmp_path):
    code, out, _ = run_cli(capsys, monkeypatch, "demo", "--html", str(tmp_path / "r.html"), "--wide")
    assert code == 0
    assert "Meta-Llama-3_1-70B-Instruct  Meta-Llama-3_1-70B" in out  # names whole
    for label in ("N* Holm", "q Holm", "N* cluster", "q cluster", "N* anytime", "q anytime", "p cluster"):
        assert label in out


def test_all_pairs_html_is_a_matrix_and_a_top_k_table():
    from llm_power.io.demo import load_mmlu_pro
    from llm_power.report.html import MAX_TABLE_PAIRS, render_html

    data = load_mmlu_pro()
    models, x = data.models, data.scores
    diag = lp.diagnose(x, models=models, pairs="all", rng=0)
    assert len(diag.columns["delta"]) == 325
    html = render_html(diag)
    assert "Pair matrix of 325 pairs" in html and "Forest plot of the gaps" not in html
    table = html.split('id="pairs-table"')[1].split("</table>")[0]
    assert table.count("<tr>") == 1 + MAX_TABLE_PAIRS  # header + the first k pairs
    assert f"The first {MAX_TABLE_PAIRS} of 325 pairs" in html
    assert len(html) < 1_500_000


# --- 2. no dead ends -------------------------------------------------------------------------------

@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(3)
    n = 200
    a, b = (rng.random(n) < 0.7).astype(int), (rng.random(n) < 0.55).astype(int)
    rows = [("model", "qid", "score")] + [(m, f"i{k}", int(v)) for m, col in (("a", a), ("b", b))
                                          for k, v in enumerate(col)]
    return tmp_path, rows, a, b


def _write(path, rows, sep=","):
    text = "\n".join(sep.join(map(str, r)) for r in rows) + "\n"
    if path.suffix == ".gz":
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["r.csv.gz", "r.tsv.gz", "r.jsonl.gz", "r.json.gz", "r.json"])
def test_compressed_and_json_tables_are_read(tables, capsys, monkeypatch, name):
    tmp, rows, a, b = tables
    path = tmp / name
    header, body = rows[0], rows[1:]
    records = [dict(zip(header, r, strict=True)) for r in body]
    if ".jsonl" in name:
        text = "\n".join(json.dumps(r) for r in records) + "\n"
    elif ".json" in name:
        text = json.dumps(records)
    else:
        sep = "\t" if ".tsv" in name else ","
        text = "\n".join(sep.join(map(str, r)) for r in rows) + "\n"
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    code, out, err = run_cli(capsys, monkeypatch, "compare", str(path), "--id-column", "qid", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert res["delta"] == pytest.approx(a.mean() - b.mean())
    assert res["pvalue"] == pytest.approx(lp.compare(a, b).pvalue)  # the same data as arrays


def test_id_column_flag_on_every_command_that_reads_tables(tables, capsys, monkeypatch):
    tmp, rows, _, _ = tables
    path = _write(tmp / "r.csv", rows)
    code, _, err = run_cli(capsys, monkeypatch, "diagnose", str(path))
    assert code == 1 and "choose one with --id-column" in err
    for command in ("diagnose", "compare"):
        code, _, err = run_cli(capsys, monkeypatch, command, str(path), "--id-column", "qid")
        assert code == 0, err
        assert build_parser().parse_args([command, "x", "--id-column", "qid"]).id_column == "qid"


def test_empty_cells_of_a_wide_file_are_missing_results(tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(5)
    x = (rng.random((60, 3)) < [0.8, 0.6, 0.4]).astype(int)
    lines = ["item,a,b,c"] + [f"q{i},{r[0]},{r[1] if i != 7 else ''},{r[2] if i != 9 else ''}" for i, r in enumerate(x)]
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, monkeypatch, "diagnose", str(path))
    assert code == 1 and "b lacks 1 of 60 items, first 'q7'" in err and "--on-missing intersect" in err
    code, out, err = run_cli(capsys, monkeypatch, "diagnose", str(path), "--on-missing", "intersect", "--format",
                             "json")
    assert code == 0
    payload = json.loads(out)
    keep = np.ones(60, bool)
    keep[[7, 9]] = False
    assert payload["n"] == 58
    assert payload["means"] == pytest.approx(sorted(x[keep].mean(axis=0), reverse=True))


def test_a_label_column_as_score_points_to_cluster_and_score_column(tmp_path, capsys, monkeypatch):
    path = tmp_path / "s.csv"
    path.write_text("model,item,score\na,q1,business\nb,q1,law\n")
    code, _, err = run_cli(capsys, monkeypatch, "diagnose", str(path))
    assert code == 1 and "score 'business' is not a number" in err
    assert "--cluster" in err and "--score-column" in err and err.count("\n") == 1


def test_one_model_gets_its_score_and_interval(tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(7)
    y = (rng.random(150) < 0.62).astype(int)
    path = tmp_path / "one.csv"
    path.write_text("item,score\n" + "".join(f"q{i},{v}\n" for i, v in enumerate(y)))
    code, out, _ = run_cli(capsys, monkeypatch, "diagnose", str(path), "--format", "json")
    assert code == 0
    res = json.loads(out)
    k = int(y.sum())
    # Wilson by its closed form (Wilson 1927), not through the package
    z = stats.norm.isf(0.025)
    centre = (k + z * z / 2) / (150 + z * z)
    half = z * math.sqrt(k * (150 - k) / 150 + z * z / 4) / (150 + z * z)
    assert res["method"] == "Wilson" and (res["low"], res["high"]) == pytest.approx((centre - half, centre + half))
    code, out, _ = run_cli(capsys, monkeypatch, "diagnose", str(path))
    assert "nothing to compare" in out and "llm-power ci" in out and "llm-power plan mde" in out
    g = rng.normal(0.3, 1.0, size=80)
    path.write_text("item,score\n" + "".join(f"q{i},{v:.6f}\n" for i, v in enumerate(g)))
    code, out, _ = run_cli(capsys, monkeypatch, "diagnose", str(path), "--format", "json")
    res = json.loads(out)
    g = np.round(g, 6)
    lo, hi = stats.t.interval(0.95, 79, loc=g.mean(), scale=stats.sem(g))
    assert res["method"] == "Student t" and (res["low"], res["high"]) == pytest.approx((lo, hi))


def test_bare_command_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: llm-power") and "diagnose" in out and "compare" in out


# --- 3. a verdict sentence first, what to do next last ---------------------------------------------

def test_diagnose_starts_with_the_verdict_and_ends_with_next_steps(capsys, monkeypatch, tmp_path):
    report = tmp_path / "r.html"
    code, out, _ = run_cli(capsys, monkeypatch, "demo", "--html", str(report))
    code, js, _ = run_cli(capsys, monkeypatch, "demo", "--html", str(report), "--format", "json")
    payload = json.loads(js)
    u, m = payload["n_unresolved"], len(payload["pairs"])
    first = out.split("\n\n")[0]
    assert first.startswith("Verdict\n")
    flat = " ".join(first.split())
    # the first line names the headline regime -- the strictest computed -- and why (issue 39, point 4)
    strictest = max(u, key=lambda k: u[k])
    assert strictest == "cluster" and payload["settings"]["headline"] == "cluster"
    assert flat.startswith(f"Verdict Headline (cluster, the strictest of the 4 regimes computed): {u['cluster']} of {m} "
                           "adjacent gaps are too small for this benchmark (12,032 items) to resolve once items are "
                           "clustered by category (14 clusters, cluster-robust t).")
    assert f"{u['iid']} of {m} are too small to resolve if the items are independent." in flat
    assert f"{u['corrected']} of {m} are too small to resolve with the Holm correction" in flat
    assert f"{u['anytime']} of {m} are too small to resolve if the leaderboard is re-tested" in flat
    assert payload["verdict"] == [" ".join(s.split()) for s in payload["verdict"]]
    tail = " ".join(out.split("Data: MMLU-Pro")[1].split())
    # the closest unresolved IID gap: the unresolved pair with the largest q (computed here)
    open_ = [p for p in payload["pairs"] if not p["resolved"] and p["q"] < 1]
    best = max(open_, key=lambda p: p["q"])
    assert (f"next: the closest unresolved gap, {best['model_a']} vs {best['model_b']}" in tail
            and f"needs N* = {math.ceil(best['n_star']):,} items: about {math.ceil(best['n_star']) - 12032:,} more"
            in tail)
    assert f"report: {report.resolve()}" in out and out.rstrip().splitlines()[-1].startswith("next: ")


def test_compare_starts_with_the_verdict(capsys, monkeypatch, tmp_path):
    rng = np.random.default_rng(11)
    a, b = (rng.random(300) < 0.7).astype(int), (rng.random(300) < 0.62).astype(int)
    path = tmp_path / "w.csv"
    path.write_text("item,a,b\n" + "".join(f"q{i},{u},{v}\n" for i, (u, v) in enumerate(zip(a, b, strict=True))))
    code, out, _ = run_cli(capsys, monkeypatch, "compare", str(path))
    res = lp.compare(a, b)
    first = " ".join(out.split("\n\n")[0].split())
    assert first.startswith(f"a vs b: the gap of {100 * res.delta:+.2f} points")
    assert ("is resolved" in first) == res.resolved and f"q = {res.q:.2f}" in first
    if not res.resolved:
        assert f"about {math.ceil(res.n_star) - 300:,} more items" in " ".join(out.split())


# --- 4. consistent words ---------------------------------------------------------------------------

def test_column_labels_are_the_same_in_every_medium(capsys, monkeypatch, tmp_path):
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    path = tmp_path / "w.csv"
    rng = np.random.default_rng(2)
    x = (rng.random((400, 4)) < [0.8, 0.7, 0.6, 0.5]).astype(int)
    subject = rng.integers(0, 12, size=400)
    path.write_text("item,subject,m1,m2,m3,m4\n" + "".join(
        f"q{i},s{subject[i]}," + ",".join(map(str, r)) + "\n" for i, r in enumerate(x)))
    argv = ["diagnose", str(path), "--cluster", "subject", "--correction", "holm", "--anytime"]
    code, js, _ = run_cli(capsys, monkeypatch, *argv, "--format", "json", "--cluster-resamples", "0")
    labels = json.loads(js)["labels"]
    code, out, _ = run_cli(capsys, monkeypatch, *argv, "--wide", "--markdown", str(md), "--html", str(html),
                           "--cluster-resamples", "0", columns=400)
    header_line = next(line for line in out.splitlines() if line.startswith("#") and "model A" in line)
    md_header = next(line for line in md.read_text().splitlines() if line.startswith("| #"))
    md_labels = [c.strip().replace("\\", "") for c in md_header.strip("|").split("|")]
    html_labels = re.findall(r'<th(?: class="l")? scope="col">([^<]*)</th>', html.read_text())
    for label in md_labels:
        assert label in labels.values(), label
    for label in html_labels:
        assert label in labels.values(), label
    assert all(label in header_line for label in md_labels if label != "95% CI IID")
    assert "Holm" in labels.values() and "holm" not in " ".join(labels.values())
    # the IID p and interval say so beside the other regimes' verdicts (issue 39, point 4)
    assert {"N*", "q", "p IID", "95% CI IID", "IID", "model A", "model B"} <= set(labels.values())


def _options():
    parser = build_parser()
    stack = [("llm-power", parser)]
    while stack:
        name, p = stack.pop()
        for action in p._actions:  # noqa: SLF001 - argparse lists its actions nowhere else
            if action.choices and hasattr(action, "_name_parser_map"):
                stack += [(f"{name} {k}", v) for k, v in action.choices.items()]
            elif action.option_strings and action.dest not in ("help", "version"):
                yield name, action


def test_every_option_has_help_with_its_default():
    missing = []
    for command, action in _options():
        text = action.help or ""
        flag = action.option_strings[-1]
        if not text or text == "==SUPPRESS==":
            if text != "==SUPPRESS==":
                missing.append(f"{command} {flag}: no help")
            continue
        takes_value = action.nargs != 0
        if takes_value and "default" not in text and "required" not in text:
            missing.append(f"{command} {flag}: help does not say its default ({text!r})")
        if "seeds'" in text or "Lemma" in text:
            missing.append(f"{command} {flag}: internal jargon ({text!r})")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize(("argv", "flag", "while_parsing"), [
    (["ci", "17", "20", "--confidence-level", "2"], "--confidence-level", True),
    (["plan", "mde", "--n", "100", "--alpha", "2"], "--alpha", True),
    (["plan", "power", "--n", "100", "--pa", "1.2", "--pb", "0.5"], "--pa", False),  # the library's check
    (["plan", "sample-size", "--pa", "0.7", "--pb", "0.6", "--power", "0.01"], "--power", True),
])
def test_errors_name_the_flag_not_the_python_parameter(capsys, monkeypatch, argv, flag, while_parsing):
    # usage errors (exit 2) whether argparse finds them or the library's check after parsing
    if while_parsing:
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and f"argument {flag}:" in err and "`" not in err
        return
    got, _, err = run_cli(capsys, monkeypatch, *argv)
    assert got == 2 and flag in err and "`" not in err


def test_plan_shortcut_prints_no_impossible_gap(capsys, monkeypatch):
    shown = 0
    # at midpoint 0.3 and rho = 0.556 the error constant C(p, rho) is ~0: the bound exceeds every gap
    for pa, pb, rho in [(0.52, 0.48, 0.3), (0.92, 0.88, 0.5), (0.32, 0.28, 0.556), (0.1, 0.08, 0.8),
                        (0.5, 0.45, -0.5)]:
        code, out, _ = run_cli(capsys, monkeypatch, "plan", "shortcut", "--pa", str(pa), "--pb", str(pb),
                               "--rho", str(rho))
        assert code == 0
        line = next(line for line in out.splitlines() if "gap below which" in line)
        largest = 200 * min((pa + pb) / 2, 1 - (pa + pb) / 2)  # two accuracies around this midpoint
        value = float(re.findall(r"([\d.]+) points", line)[0])
        assert value <= largest + 0.05, line
        shown += "every possible gap" in line
    assert shown >= 1  # at least one design where the bound exceeds every feasible gap
    assert "Lemma" not in out and "error constant" in out


# --- 6. a fast start -------------------------------------------------------------------------------

HEAVY = ("numpy", "scipy", "pandas", "pyarrow", "rich", "matplotlib", "jinja2")


def _loaded(code: str) -> set[str]:
    script = (f"import sys\n{code}\nprint(','.join(sorted({{m.split('.')[0] for m in sys.modules}} "
              f"& set({HEAVY!r}))) + '|' + ','.join(sorted(m for m in sys.modules if m.startswith('scipy.stats'))))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    top, sub = proc.stdout.strip().splitlines()[-1].split("|")
    return set(filter(None, top.split(","))) | set(filter(None, sub.split(",")))


def test_help_imports_no_heavy_module():
    code = "from llm_power.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert _loaded(code) == set()
    assert _loaded("import llm_power") == set()  # the package itself imports on first use


def test_ci_imports_only_what_it_uses():
    loaded = _loaded("from llm_power.cli.main import main\nmain(['ci', '17', '20'])")
    assert loaded <= {"numpy", "scipy", "rich"}, loaded  # no scipy.stats, pandas, matplotlib, pyarrow


def test_lazy_package_exposes_every_public_name():
    import llm_power

    for name in llm_power.__all__:
        assert getattr(llm_power, name) is not None
    assert set(llm_power.__all__) <= set(dir(llm_power))
    assert sorted(llm_power._LAZY) == sorted(n for n in llm_power.__all__ if n != "__version__")  # noqa: SLF001


def test_space_separated_mqm_file_reads_like_the_wide_one(shared_data):
    # WMT's MQM segment scores: "system mqm_avg_score seg_id", separated by spaces despite .tsv
    from llm_power.io import align_results, read_results

    mqm = shared_data / "wmt20_mqm"
    long = align_results(read_results(mqm / "mqm_newstest2020_ende.avg_seg_scores.tsv.gz",
                                      metric="mqm_avg_score"))
    wide = align_results(read_results(mqm / "wmt20_mqm_ende_wide.csv.gz"))
    assert long.models == wide.models and long.items == wide.items
    np.testing.assert_allclose(long.scores, wide.scores, rtol=0, atol=5e-7)  # both written to 6 decimals


def test_space_separated_table_and_system_column(tmp_path, capsys, monkeypatch):
    path = tmp_path / "seg.tsv"
    path.write_text("system   score  seg_id\n" + "".join(
        f"{m}  {v}  {i}\n" for m, col in (("A", [1, 0, 1, 1]), ("B", [0, 0, 1, 0])) for i, v in enumerate(col)))
    code, out, err = run_cli(capsys, monkeypatch, "compare", str(path), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["delta"] == pytest.approx(0.75 - 0.25)


def test_a_battle_log_is_named_for_what_it_is(tmp_path, capsys, monkeypatch):
    path = tmp_path / "battles.csv"
    path.write_text("question_id,model_a,model_b,winner\nq1,x,y,model_a\nq2,x,y,tie\n")
    code, _, err = run_cli(capsys, monkeypatch, "diagnose", str(path))
    assert code == 1 and "pairwise battles" in err and err.count("\n") == 1


def _commands() -> list[list[str]]:
    """Every command and sub-command, from the parser itself (a new one is covered the moment it exists)."""
    import argparse

    from llm_power.cli.main import build_parser

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> list[list[str]]:
        found = []
        for action in parser._actions:  # noqa: SLF001 - argparse keeps sub-parsers here
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for name, sub in action.choices.items():
                    found.append([*prefix, name])
                    found += walk(sub, [*prefix, name])
        return found

    return walk(build_parser(), [])


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_every_commands_help_imports_no_heavy_module(command):
    """argparse lists every option's choices when it formats help: the registries it reads for them
    (formats, paired tests, design effects) must load without numpy, scipy or pandas."""
    code = f"from llm_power.cli.main import main\ntry:\n    main({[*command, '--help']!r})\nexcept SystemExit:\n    pass"
    assert _loaded(code) == set()
