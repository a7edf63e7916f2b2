"""Hostile input and safe output (issue 10): a generated corpus of attacks, fuzzed readers,
memory-capped runs and byte-for-byte determinism.

Every corpus case asserts the exit code, that stderr is one line per message (an ``error:`` line
for failures) without a traceback, and that no input changed (every file of the corpus is
hashed before and after; links stay links).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_power import DataError, read_results
from llm_power.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))
from corpus import build  # noqa: E402


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """(kind, sha256 or link target) of every entry below ``root``, without following links."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                out[str(path)] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                out[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISFIFO(mode):
                out[str(path)] = ("fifo", "")
    return out


def run_cli(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    return root, build(root)


@pytest.mark.parametrize("tier", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
def test_every_hostile_case(corpus, capsys, tier):
    """Every case of the corpus; those marked ``slow`` (a bomb the reader parses for half a minute
    before its limit trips) in the slow tier."""
    root, cases = corpus
    failures = []
    cases = [case for case in cases if case.extra.get("slow", False) == (tier == "slow")]
    assert cases
    for case in cases:
        before = snapshot(root)
        start = time.monotonic()
        saved = {key: os.environ.get(key) for key in case.extra.get("env", {})}
        os.environ.update(case.extra.get("env", {}))
        try:
            code, out, err = run_cli(case.argv, capsys)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        took = time.monotonic() - start
        after = snapshot(root)
        problems = []
        if "seconds" in case.extra and took > case.extra["seconds"]:
            problems.append(f"took {took:.0f} s (more than {case.extra['seconds']} s)")
        if code != case.code:
            problems.append(f"exit {code} != {case.code}")
        if "Traceback" in err:
            problems.append("traceback on stderr")
        lines = [line for line in err.splitlines() if line.strip()]
        if not all(line.startswith("llm-power ") and (": error: " in line or ": note: " in line) for line in lines):
            problems.append(f"stderr is not one line per message: {err!r}")
        errors = [line for line in lines if ": error: " in line]
        if case.code:
            if len(errors) != 1 or case.stderr not in errors[0]:
                problems.append(f"expected one error line containing {case.stderr!r}; got {errors!r}")
        elif errors:
            problems.append(f"unexpected error: {errors!r}")
        changed = [p for p, v in before.items() if after.get(p) != v]
        if changed:
            problems.append(f"inputs changed: {changed}")
        for text in case.stdout_absent:
            if text in out:
                problems.append(f"{text!r} reached the terminal")
        if problems:
            failures.append(f"{case.name}: {'; '.join(problems)}")
    assert not failures, "\n".join(failures)


def test_hostile_names_are_escaped_in_every_output(corpus, capsys):
    root, cases = corpus
    case = next(c for c in cases if c.name == "hostile model names")
    code, out, err = run_cli(case.argv, capsys)
    assert code == 0
    names = case.extra["names"]
    # terminal: control characters visible, markup shown literally
    assert "\\x1b[2Jclear" in out and "[/]x" in out and "[link=https://evil.example]click[/link]" in out
    # Markdown: every table row keeps its column count (pipes in names are escaped), no raw HTML/links
    md = case.extra["markdown"].read_text()
    rows = [line for line in md.splitlines() if line.startswith("| ") and "model A" not in line]
    unescaped = [len(line.replace("\\|", "")) - len(line.replace("\\|", "").replace("|", "")) for line in rows]
    assert len(set(unescaped)) == 1
    assert "<script>" not in md and "](https://evil.example)" not in md and "\n# heading" not in md
    # HTML: names are text (escaped), mathtext is off
    html = case.extra["html"].read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "$\\frac{1}{0}$ math" in html
    assert not re.search(r"mathdefault[^<]*</text>", html)  # tick labels still typeset, not shown as raw TeX
    assert len(names) == 8


def test_outputs_keep_permissions_and_dash_is_stdout(tmp_path, capsys):
    src = tmp_path / "ok.csv"
    src.write_text("item,a,b\n" + "".join(f"q{i},{i % 2},{(i // 2) % 2}\n" for i in range(40)))
    out = tmp_path / "report.json"
    out.write_text("old")
    out.chmod(0o600)
    assert main(["diagnose", str(src), "--json", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and json.loads(out.read_text())["n"] == 40
    capsys.readouterr()
    assert main(["diagnose", str(src), "--json", "-", "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert text.count('"source":') == 2  # the report on stdout, then the --format json payload


# --------------------------------------------------------------------------------------------------
# Fuzzed readers: whatever the bytes, a DataFrame or one DataError -- nothing else
# --------------------------------------------------------------------------------------------------

def _only_data_errors(path: Path) -> None:
    try:
        read_results(path)
    except DataError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_fuzz_csv(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fz") / "x.csv"
    path.write_text(text, encoding="utf-8")
    _only_data_errors(path)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    st.dictionaries(st.sampled_from(["model", "item", "score", "cluster", "x"]),
                    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=8),
                              st.lists(st.integers(), max_size=2)), max_size=5),
    st.text(max_size=30)), max_size=8))
def test_fuzz_jsonl(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("fz") / "x.jsonl"
    path.write_text("\n".join(json.dumps(r) if isinstance(r, dict) else r for r in rows), encoding="utf-8")
    _only_data_errors(path)


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                                     st.text(max_size=6)),
                           lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.sampled_from(
                                                       ["eval", "samples", "scores", "id", "value", "model",
                                                        "metadata", "epoch"]), inner, max_size=4)),
                           max_leaves=25)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_fuzz_inspect_json(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("fz") / "log.json"
    doc = value if not isinstance(value, dict) else {"eval": {}, "samples": [], **value}
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        read_results(path, format="inspect")
    except DataError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=600), json_values)
def test_fuzz_eval_archives(tmp_path_factory, junk, value):
    folder = tmp_path_factory.mktemp("fz")
    (folder / "junk.eval").write_bytes(junk)
    _only_data_errors(folder / "junk.eval")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"model": "m", "task": "t"}}))
        z.writestr("summaries.json", json.dumps(value))
    (folder / "log.eval").write_bytes(buf.getvalue())
    _only_data_errors(folder / "log.eval")


# --------------------------------------------------------------------------------------------------
# Memory-bounded runs: a regression fails (MemoryError -> exit != 0) instead of swapping
# --------------------------------------------------------------------------------------------------

CAP = 3 << 30  # 3 GiB of address space: numpy, scipy, pandas and the report fit; 7 GB does not


def run_capped(argv, cwd):
    import resource

    def limit():  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "llm_power", *argv], capture_output=True, text=True,
                          preexec_fn=limit, cwd=cwd, env=env, timeout=300)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
@pytest.mark.parametrize("argv_fn,code,phrase", [
    (lambda root: ["plan", "sample-size", "--pa", "0.5", "--pb", "0.5001"], 0, ""),
    (lambda root: ["plan", "sample-size", "--pa", "0.5", "--pb", "0.5001", "--method", "exact"], 1, "connor"),
    (lambda root: ["diagnose", str(root / "many.csv"), "--pairs", "all"], 1, "pairs"),
    (lambda root: ["diagnose", str(root / "bomb.eval"), str(root / "good.eval")], 1, "zip bomb"),
    (lambda root: ["arena", str(root / "crowd.csv"), "--pairs", "all"], 1, "pairs"),
    pytest.param(lambda root: ["arena", str(root / "crowd.csv"), "--html", str(root / "crowd.html")], 0, "",
                 marks=pytest.mark.slow),  # ~15 CPU-s
    pytest.param(lambda root: ["coverage", "--n", "1000000000", "--p", "0.3"], 0, "", marks=pytest.mark.slow),  # ~6
    (lambda root: ["compare", str(root / "ok.csv"), "--models", "model-a", "model-b", "--method", "bootstrap",
                   "--n-resamples", "1000000000"], 2, "at most"),  # a bad option value: the command line
])
def test_memory_capped(corpus, argv_fn, code, phrase):
    root, _ = corpus
    res = run_capped(argv_fn(root), root)
    assert res.returncode == code, res.stderr[-2000:]
    assert "Traceback" not in res.stderr and "MemoryError" not in res.stderr
    assert phrase in res.stderr


# --------------------------------------------------------------------------------------------------
# Determinism: same seed, same bytes, whatever the hash seed or the order of the input files
# --------------------------------------------------------------------------------------------------

def test_output_bytes_do_not_depend_on_hash_seed_or_file_order(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ids = ["q1", "q01", "q001", "Q1", "q1 ", "①", "q10", "q2"]
    a.write_text("model,item,score\n" + "".join(f"A,{i},{k % 2}\n" for k, i in enumerate(ids)))
    b.write_text("model,item,score\n" + "".join(f"B,{i},{(k // 2) % 2}\n" for k, i in enumerate(ids)))
    outputs = []
    for seed, order in (("1", [a, b]), ("2", [b, a]), ("3", [a, b])):
        out = tmp_path / f"r{seed}.json"
        md = tmp_path / f"r{seed}.md"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        res = subprocess.run([sys.executable, "-m", "llm_power", "diagnose", *map(str, order), "--json", str(out),
                              "--markdown", str(md)], capture_output=True, text=True, env=env, timeout=300)
        assert res.returncode == 0, res.stderr
        payload = json.loads(out.read_text())
        payload.pop("source")  # names the files in the order given
        outputs.append((json.dumps(payload, sort_keys=True), md.read_text()))
    assert outputs[0] == outputs[1] == outputs[2]
