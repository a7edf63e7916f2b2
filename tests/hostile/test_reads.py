"""Issue 40, reads: only regular files are read, nesting is one line, a key twice is an error, YAML
aliases cannot explode, a long plan id is not a ``_csv.Error``.

Every case runs the real command line in a subprocess with a timeout (a read that blocks fails the
test instead of hanging the suite) and checks: exit 1 or 2, exactly one ``error:`` line on stderr
that names the file, no traceback, every input unchanged (hashed before and after; FIFOs stay
FIFOs). Each case fails on the code before issue 40's read guards: the FIFO and ``/dev/zero`` cases
block (or never say "not a regular file"), the nesting cases end in a ``RecursionError`` traceback or
name no file, the duplicate keys were taken silently (last wins, exit 0), the billion-laughs card
never finishes, the YAML alias limit did not exist, the plan id was a ``_csv.Error`` traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEEP = 100_000
STAMP = "2026-01-01T00-00-00.000001"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="POSIX FIFOs")


# ---- running the command line and checking what it did ----------------------------------------------------

def run(args: list[str], cwd: Path, *, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess:
    """``llm-power ARGS`` in a subprocess; one that outlives ``timeout`` (a blocked read) fails the test."""
    try:
        return subprocess.run([sys.executable, "-m", "llm_power", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, check=False, env=None if env is None else {**os.environ, **env})
    except subprocess.TimeoutExpired:  # the child is killed by subprocess.run
        pytest.fail(f"llm-power {' '.join(args)[:200]} did not finish in {timeout:.0f} s (a read that blocks?)")


def snapshot(root: Path) -> dict[str, tuple[str, str]]:
    """(kind, sha256 or link target) of every entry below ``root``; links and FIFOs are never opened."""
    out = {}
    for path in sorted(root.rglob("*")):
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            out[str(path)] = ("link", os.readlink(path))
        elif stat.S_ISREG(mode):
            out[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
        elif stat.S_ISFIFO(mode):
            out[str(path)] = ("fifo", "")
    return out


def refused(args: list[str], root: Path, *phrases: str, env: dict[str, str] | None = None,
            timeout: float = 90) -> str:
    """Run a command that must fail with one error line containing every phrase; inputs unchanged."""
    before = snapshot(root)
    res = run(args, root, env=env, timeout=timeout)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    command = " ".join(args[:2]) if args[0] in ("plan", "subset") else args[0]
    assert res.returncode in (1, 2), (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith(f"llm-power {command}: error: "), res.stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0], (phrase, lines[0][:2000])
    assert snapshot(root) == before, "an input changed"
    return lines[0]


# ---- inputs ------------------------------------------------------------------------------------------------

def wide_csv(path: Path, models: list[str], n: int = 60, seed: int = 0) -> Path:
    rng = random.Random(seed)
    rows = ["item," + ",".join(models)] + [f"q{i}," + ",".join(str(int(rng.random() < 0.6)) for _ in models)
                                           for i in range(n)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def plan_csv(path: Path, ids: list[str]) -> Path:
    weight = 60 / len(ids)
    path.write_text("item_id,stratum,weight,order\n" + "".join(f"{i},all items,{weight},{k + 1}\n"
                                                               for k, i in enumerate(ids)), encoding="utf-8")
    return path


def lm_eval_runs(root: Path, results: dict[tuple[str, int], str] | None = None) -> Path:
    """Two models x two seeds of lm-eval output (samples + results_*.json); ``results`` replaces the
    text of some results files.
    """
    folder = root / "runs"
    for model in ("ma", "mb"):
        for seed in (1, 2):
            run_dir = folder / model / f"s{seed}"
            run_dir.mkdir(parents=True)
            lines = [json.dumps({"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": (i * seed + len(model)) % 2,
                                 "target": "x"}) for i in range(30)]
            (run_dir / f"samples_t_{STAMP}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
            text = (results or {}).get((model, seed), json.dumps({"model_name": model, "config": {"seed": seed}}))
            (run_dir / f"results_{STAMP}.json").write_text(text, encoding="utf-8")
    return folder


def deep_json_list() -> str:
    return "[" * DEEP + "]" * DEEP


def eval_results(root: Path, text: str, name: str = "scores.yaml") -> Path:
    folder = root / "org-model" / ".eval_results"
    folder.mkdir(parents=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# ---- 1. only regular files are read ------------------------------------------------------------------------

def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _plan_fifo(root: Path) -> tuple[list[str], Path]:
    new = wide_csv(root / "new.csv", ["n1", "n2"])
    return ["subset", "estimate", "--plan", str(_fifo(root / "plan.csv")), str(new)], root / "plan.csv"


def _plan_device(root: Path) -> tuple[list[str], Path]:
    new = wide_csv(root / "new.csv", ["n1", "n2"])
    return ["subset", "estimate", "--plan", "/dev/zero", str(new)], Path("/dev/zero")


def _aggregate_fifo_json(root: Path) -> tuple[list[str], Path]:
    folder = root / "agg"
    folder.mkdir()
    (folder / "results_2024.json").write_text(json.dumps({"results": {"arc": {"acc,none": 0.5}},
                                                          "n-samples": {"arc": {"effective": 100}}}))
    return ["aggregate", str(folder)], _fifo(folder / "record.json")


def _aggregate_fifo_results(root: Path) -> tuple[list[str], Path]:
    folder = root / "agg"
    folder.mkdir()
    return ["aggregate", str(folder)], _fifo(folder / "results_2024.json")


def _lm_eval_fifo_results(root: Path) -> tuple[list[str], Path]:
    folder = root / "lm_eval"
    shutil.copytree(FIXTURES / "lm_eval", folder)
    results = next((folder / "model-a").glob("results_*.json"))
    results.unlink()
    return ["diagnose", str(folder)], _fifo(results)


def _fifo_results_file(root: Path) -> tuple[list[str], Path]:
    return ["diagnose", str(_fifo(root / "scores.csv"))], root / "scores.csv"


def _gzip_fifo(root: Path) -> tuple[list[str], Path]:
    return ["diagnose", str(_fifo(root / "scores.csv.gz"))], root / "scores.csv.gz"


def _fifo_in_folder(root: Path) -> tuple[list[str], Path]:
    folder = root / "logs"
    folder.mkdir()
    return ["diagnose", str(folder)], _fifo(folder / "model-a.eval")


def _passk_instances_fifo(root: Path) -> tuple[list[str], Path]:
    reports = root / "swe"
    reports.mkdir()
    for model in ("ma", "mb"):
        (reports / f"{model}.r1.json").write_text(json.dumps({"resolved_ids": ["repo__1"]}))
    files = [str(p) for p in sorted(reports.glob("*.json"))]
    return ["passk", *files, "--instances", str(_fifo(root / "ids.txt"))], root / "ids.txt"


def _ppi_fifo(root: Path) -> tuple[list[str], Path]:
    (root / "unl.csv").write_text("item,judge\nq4,1\nq5,0\n")
    return ["ppi", "--labeled", str(_fifo(root / "lab.csv")), "--unlabeled", str(root / "unl.csv")], root / "lab.csv"


def _arena_fifo(root: Path) -> tuple[list[str], Path]:
    return ["arena", str(_fifo(root / "battles.csv"))], root / "battles.csv"


def _yaml_fifo(root: Path) -> tuple[list[str], Path]:
    folder = root / "org-model" / ".eval_results"
    folder.mkdir(parents=True)
    return ["aggregate", str(root / "org-model"), "--items", "100"], _fifo(folder / "scores.yaml")


@needs_fifo
@pytest.mark.parametrize("build", [_plan_fifo, _plan_device, _aggregate_fifo_json, _aggregate_fifo_results,
                                   _lm_eval_fifo_results, _fifo_results_file, _gzip_fifo, _fifo_in_folder,
                                   _passk_instances_fifo,
                                   _ppi_fifo, _arena_fifo, _yaml_fifo], ids=lambda f: f.__name__.strip("_"))
def test_a_fifo_or_a_device_is_refused_by_name_never_read(tmp_path, build):
    argv, special = build(tmp_path)
    kind = "character device" if str(special).startswith("/dev/") else "FIFO"
    refused(argv, tmp_path, str(special), f"not a regular file (a {kind})", timeout=60)


# ---- 2. nesting: one line naming the file, never a RecursionError ------------------------------------------

@pytest.mark.parametrize("command", [["noise"], ["diagnose"], ["plan", "runs"], ["gate"]])
def test_deeply_nested_run_metadata_is_one_line(tmp_path, command):
    deep = json.dumps({"model_name": "ma", "config": {"seed": 1}})[:-2] + ", \"x\": " + deep_json_list() + "}}"
    folder = lm_eval_runs(tmp_path, {("ma", 1): deep})
    inputs = [str(folder / "ma"), str(folder / "mb")] if command == ["gate"] else [str(folder)]
    extra = ["--delta", "0.05"] if command == ["plan", "runs"] else []
    refused([*command, *inputs, "--run", "seed", *extra], tmp_path, f"ma/s1/results_{STAMP}.json",
            "nested too deeply")


@pytest.mark.parametrize("text", [deep_json_list(), "{a: " * DEEP + "1" + "}" * DEEP], ids=["lists", "maps"])
def test_deeply_nested_yaml_is_one_line(tmp_path, text):
    path = eval_results(tmp_path, text + "\n")
    refused(["aggregate", str(tmp_path / "org-model"), "--items", "100"], tmp_path, str(path), "nested too deeply")


def test_deeply_nested_json_in_an_aggregate_folder_is_named_not_passed_over(tmp_path):
    folder = tmp_path / "records"
    folder.mkdir()
    path = folder / "record.json"
    path.write_text('{"schema_version": "0.2.2", "evaluation_results": ' + deep_json_list() + "}")
    refused(["aggregate", str(folder)], tmp_path, str(path), "nested too deeply")


# ---- 3. a key twice: an error naming the file, the record and the key --------------------------------------

def test_a_key_twice_in_an_inspect_log(tmp_path):
    samples = [json.dumps({"id": i, "epoch": 1, "scores": {"match": {"value": "C" if i % 3 else "I"}}})
               for i in range(30)]
    samples[7] = samples[7][:-1] + ', "scores": {"match": {"value": "C"}}}'  # sample 7 scored twice
    log = tmp_path / "model-a.json"
    log.write_text('{"version": 2, "eval": {"model": "a", "task": "t"},\n"samples": [\n' + ",\n".join(samples)
                   + "]}\n", encoding="utf-8")
    other = tmp_path / "model-b.json"
    other.write_text(json.dumps({"version": 2, "eval": {"model": "b", "task": "t"},
                                 "samples": [json.loads(s) for s in samples[:7] + samples[8:]]}))
    refused(["diagnose", str(log), str(other)], tmp_path, str(log), "record line 10", "field 'scores'",
            "appears twice")


def test_a_key_twice_on_a_jsonl_line(tmp_path):
    path = tmp_path / "scores.jsonl"
    rows = [json.dumps({"model": m, "item": f"q{i}", "score": (i + k) % 2}) for k, m in enumerate("ab")
            for i in range(20)]
    rows[2] = rows[2][:-1] + ', "score": 1}'
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    refused(["diagnose", str(path)], tmp_path, str(path), "record line 3", "field 'score'", "appears twice")


def test_a_key_twice_in_lm_eval_results(tmp_path):
    folder = tmp_path / "agg"
    folder.mkdir()
    path = folder / "results_2024.json"
    path.write_text('{"results": {"arc": {"acc,none": 0.9, "acc,none": 0.5}},\n'
                    ' "n-samples": {"arc": {"effective": 100}}}\n', encoding="utf-8")
    refused(["aggregate", str(folder)], tmp_path, str(path), "field 'acc,none'", "appears twice")


def test_a_key_twice_in_an_every_eval_ever_record_is_not_passed_over(tmp_path):
    folder = tmp_path / "records"
    folder.mkdir()
    result = {"evaluation_name": "arc", "score_details": {"score": 0.5, "uncertainty": {"num_samples": 100}}}
    (folder / "a.json").write_text(json.dumps({"schema_version": "0.2.2", "model_info": {"id": "org/a"},
                                               "evaluation_results": [result]}))
    path = folder / "b.json"
    path.write_text('{"schema_version": "0.2.2", "model_info": {"id": "org/b", "id": "org/a"},\n'
                    ' "evaluation_results": [' + json.dumps(result) + "]}\n", encoding="utf-8")
    refused(["aggregate", str(folder)], tmp_path, str(path), "field 'id'", "appears twice")


def test_a_key_twice_in_a_yaml_mapping(tmp_path):
    path = eval_results(tmp_path, "- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}\n"
                                  "  value: 0.412\n"
                                  "  value: 0.9\n")
    refused(["aggregate", str(tmp_path / "org-model"), "--items", "198"], tmp_path, str(path), "record line 3",
            "field 'value'", "appears twice")


# ---- 4. YAML aliases ---------------------------------------------------------------------------------------

def test_a_billion_laughs_model_card_is_refused_by_its_bound(tmp_path):
    n = 1000  # model-index x results x metrics: 10^9 entries from a 12 kB card
    card = tmp_path / "card" / "README.md"
    card.parent.mkdir()
    card.write_text("\n".join(["---", "m0: &m {type: acc, value: 0.5}", "ms: &ms [" + ", ".join(["*m"] * n) + "]",
                               "r0: &r {dataset: {type: t}, metrics: *ms}", "rs: &rs [" + ", ".join(["*r"] * n) + "]",
                               "x0: &x {name: org/model, results: *rs}",
                               "model-index: [" + ", ".join(["*x"] * n) + "]", "---", "# card"]) + "\n")
    refused(["aggregate", str(card), "--items", "100"], tmp_path, str(card), "LLM_POWER_MAX_YAML_ALIAS_NODES",
            timeout=60)


def test_the_alias_bound_is_named_and_raised_by_its_variable(tmp_path):
    path = eval_results(tmp_path, "- &entry\n  dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}\n  value: 0.4\n"
                                  "- dataset: {id: cais/hle, task_id: hle}\n  value: 0.2\n")
    ok = run(["aggregate", str(tmp_path / "org-model"), "--items", "198"], tmp_path)
    assert ok.returncode == 0, ok.stderr  # no alias: nothing to bound
    path.write_text(path.read_text() + "- *entry\n", encoding="utf-8")  # 9 more nodes through an alias
    refused(["aggregate", str(tmp_path / "org-model"), "--items", "198"], tmp_path, str(path),
            "more than 4 nodes (LLM_POWER_MAX_YAML_ALIAS_NODES", env={"LLM_POWER_MAX_YAML_ALIAS_NODES": "4"})


def test_a_huge_yaml_integer_names_the_file(tmp_path):
    path = eval_results(tmp_path, "- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamond}\n  value: "
                        + "9" * 5000 + "\n")
    refused(["aggregate", str(tmp_path / "org-model"), "--items", "198"], tmp_path, str(path), "YAML")


# ---- 5. plan files: long ids and fields past the CSV limit -------------------------------------------------

def test_a_200000_character_plan_id_is_one_line(tmp_path):
    new = wide_csv(tmp_path / "new.csv", ["n1", "n2"])
    plan = plan_csv(tmp_path / "plan.csv", ["x" * 200_000] + [f"q{i}" for i in range(1, 20)])
    line = refused(["subset", "estimate", "--plan", str(plan), str(new)], tmp_path, "new.csv")
    assert "_csv.Error" not in line and "field larger than field limit" not in line


def test_a_plan_field_past_the_csv_limit_names_the_plan_and_line(tmp_path):
    new = wide_csv(tmp_path / "new.csv", ["n1", "n2"])
    plan = tmp_path / "plan.csv"
    with plan.open("w", encoding="utf-8") as fh:
        fh.write("item_id,stratum,weight,order\nq0,all items,3.0,1\nq1,")
        fh.write("s" * ((1 << 26) + 10))
        fh.write(",3.0,2\n")
    refused(["subset", "estimate", "--plan", str(plan), str(new)], tmp_path, str(plan), "record line 3",
            "a field is longer than the limit of 64 MB (LLM_POWER_MAX_CSV_FIELD_MB raises it)")
