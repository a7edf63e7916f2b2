"""Generate the hostile-input corpus (issue 10) into a folder; nothing binary is committed.

Run ``python tests/hostile/corpus.py OUT`` to look at the files; the tests call :func:`build`.
Every case is (name, argv, expected exit code, a phrase stderr must contain). The argv use real
paths inside OUT; the files a case reads are its inputs, hashed before and after by the tests.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import struct
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@dataclass
class Case:
    name: str
    argv: list[str]
    code: int
    stderr: str = ""  # a phrase the one-line stderr must contain ("" for success)
    stdout_absent: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)


def _wide_csv(path: Path, names: list[str], n: int = 60, seed: int = 0, header_names: list[str] | None = None) -> Path:
    rng = random.Random(seed)
    skill = [0.8 - 0.1 * k for k in range(len(names))]
    rows = ["item," + ",".join(header_names or [_csv_quote(m) for m in names])]
    for i in range(n):
        rows.append(f"q{i}," + ",".join("1" if rng.random() < s else "0" for s in skill))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _csv_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _inspect_json(model: str, samples: list[dict]) -> dict:
    return {"version": 2, "eval": {"model": model, "task": "t"}, "samples": samples}


def _samples(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [{"id": i, "epoch": 1, "scores": {"match": {"value": "C" if rng.random() < 0.7 else "I"}},
             "metadata": {"subject": f"s{i % 4}"}} for i in range(n)]


def _eval_zip(path: Path, members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _patch_zip(path: Path, *, flag: int | None = None, method: int | None = None) -> None:
    """Set the general-purpose flag or the compression method of every entry (local + central)."""
    data = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        start = 0
        while (k := data.find(sig, start)) >= 0:
            if flag is not None:
                struct.pack_into("<H", data, k + flag_at, struct.unpack_from("<H", data, k + flag_at)[0] | flag)
            if method is not None:
                struct.pack_into("<H", data, k + method_at, method)
            start = k + 4
    path.write_bytes(bytes(data))


def build(out: Path) -> list[Case]:
    """Write the corpus into ``out`` and return the cases."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []
    ok = _wide_csv(out / "ok.csv", ["model-a", "model-b", "model-c"])

    # 1. inputs are never overwritten, including files inside an input folder
    helm = out / "helm"
    shutil.copytree(FIXTURES / "helm", helm)
    run_a = next(p for p in helm.iterdir() if p.name.endswith("model-a"))
    cases.append(Case("output inside input folder (HELM)", ["diagnose", str(helm), "--json",
                      str(run_a / "per_instance_stats.json")], 2, "lies inside the input"))
    lm = out / "lm_eval"
    shutil.copytree(FIXTURES / "lm_eval", lm)
    results_json = next((lm / "model-a").glob("results_*.json"))
    cases.append(Case("output onto lm-eval results_*.json", ["diagnose", str(lm), "--html", str(results_json)], 2,
                      "lies inside the input"))
    cases.append(Case("output onto the input file", ["diagnose", str(ok), "--markdown", str(ok)], 2, "is the input"))
    samples = sorted(lm.rglob("samples_*.jsonl"))
    cases.append(Case("output onto the results_*.json a samples file is named from",
                      ["diagnose", *map(str, samples), "--json", str(results_json)], 2, "is the input"))
    light = out / "lighteval"
    shutil.copytree(FIXTURES / "lighteval", light)
    details = sorted(light.rglob("details_*.parquet"))
    light_results = sorted(light.rglob("results_*.json"))
    if details and light_results:
        cases.append(Case("output onto lighteval results_*.json", ["diagnose", *map(str, details), "--html",
                          str(light_results[0])], 2, "is the input"))

    # 2. outputs never follow or replace non-regular files
    target = out / "precious.txt"
    target.write_text("do not touch\n")
    link = out / "link.json"
    link.symlink_to(target)
    cases.append(Case("output is a symlink", ["diagnose", str(ok), "--json", str(link)], 2, "symbolic link",
                      extra={"watch": [target]}))
    fifo = out / "fifo.json"
    os.mkfifo(fifo)
    cases.append(Case("output is a FIFO", ["diagnose", str(ok), "--json", str(fifo)], 2, "not a regular file"))
    cases.append(Case("output is a device", ["diagnose", str(ok), "--json", "/dev/null"], 2, "not a regular file"))
    cases.append(Case("output is a folder", ["diagnose", str(ok), "--html", str(out) + "/"], 2, "is a folder"))
    cases.append(Case("empty output path", ["diagnose", str(ok), "--html", ""], 2, "output path is empty"))
    cases.append(Case("same output twice", ["diagnose", str(ok), "--json", str(out / "r.x"), "--html",
                      str(out / "r.x")], 2, "are the same output file"))

    # 3./4./10. names that are markup, escape sequences or mathtext: valid input, escaped output
    evil = ["\x1b[2Jclear", "\x1b]0;owned\x07title", "[/]x", "[link=https://evil.example]click[/link]",
            "pipe|name\n# heading", "<script>alert(1)</script>", "[md](https://evil.example)", "$\\frac{1}{0}$ math"]
    names_csv = _wide_csv(out / "names.csv", evil)
    cases.append(Case("hostile model names", ["diagnose", str(names_csv), "--markdown", str(out / "names.md"),
                      "--html", str(out / "names.html")], 0, stdout_absent=("\x1b", "\x07"),
                      extra={"names": evil, "markdown": out / "names.md", "html": out / "names.html"}))

    # 5. archives
    header = json.dumps({"version": 2, "eval": {"model": "m", "task": "t"}}).encode()
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", header)
        with z.open("summaries.json", "w") as member:  # 64 MiB of zeros -> ~64 KB: 1000:1
            chunk = b"0" * (1 << 20)
            for _ in range(64):
                member.write(chunk)
    (out / "bomb.eval").write_bytes(bomb.getvalue())
    cases.append(Case("zip bomb", ["diagnose", str(out / "bomb.eval"), str(out / "bomb.eval")], 1, "zip bomb"))
    good = _eval_zip(out / "good.eval", {"header.json": header, "summaries.json": json.dumps(_samples(20, 1)).encode()})
    corrupt = bytearray(good.read_bytes())
    k = corrupt.find(b"summaries.json") + 40
    corrupt[k:k + 40] = os.urandom(40)
    (out / "corrupt.eval").write_bytes(bytes(corrupt))
    cases.append(Case("corrupt member", ["diagnose", str(out / "corrupt.eval"), str(good)], 1, "corrupt.eval"))
    shutil.copy(good, out / "encrypted.eval")
    _patch_zip(out / "encrypted.eval", flag=0x1)
    cases.append(Case("encrypted member", ["diagnose", str(out / "encrypted.eval"), str(good)], 1, "encrypted"))
    shutil.copy(good, out / "method99.eval")
    _patch_zip(out / "method99.eval", method=99)
    cases.append(Case("unknown compression", ["diagnose", str(out / "method99.eval"), str(good)], 1,
                      "method99.eval"))
    (out / "truncated.eval").write_bytes(good.read_bytes()[:300])
    cases.append(Case("truncated archive", ["diagnose", str(out / "truncated.eval"), str(good)], 1, "truncated.eval"))
    _eval_zip(out / "badheader.eval", {"header.json": b"{\"eval\": ", "summaries.json": b"[]"})
    cases.append(Case("JSON syntax error in header.json", ["diagnose", str(out / "badheader.eval"), str(good)], 1,
                      "header.json"))
    _eval_zip(out / "latin1.eval", {"header.json": '{"eval": {"model": "caf\xe9"}}'.encode("latin-1"),
                                    "summaries.json": b"[]"})
    cases.append(Case("bad UTF-8 in header.json", ["diagnose", str(out / "latin1.eval"), str(good)], 1,
                      "header.json: not UTF-8"))

    # 6. hostile JSON
    (out / "deep.json").write_text('{"eval": {}, "samples": ' + "[" * 100_000 + "]" * 100_000 + "}")
    cases.append(Case("100,000-deep nesting", ["diagnose", str(out / "deep.json"), str(good)], 1, "deep.json"))
    (out / "shape.json").write_text(json.dumps({"eval": [], "samples": 3}))
    cases.append(Case("wrong-shape inspect JSON", ["diagnose", str(out / "shape.json"), str(good)], 1, "shape.json"))
    (out / "shape2.json").write_text(json.dumps({"eval": {"model": "m"}, "samples": [1, 2, 3]}))
    cases.append(Case("samples that are not objects", ["diagnose", str(out / "shape2.json"), str(good)], 1,
                      "each sample must be a JSON object"))
    (out / "nomodel.jsonl").write_text('{"model": "a", "item": "q1", "score": 1}\n{"item": "q1", "score": 0}\n')
    cases.append(Case("JSONL row without model", ["diagnose", str(out / "nomodel.jsonl")], 1, "line 2"))
    (out / "bigint.jsonl").write_text('{"model": "a", "item": "q1", "score": ' + "9" * 400 + "}\n"
                                      '{"model": "b", "item": "q1", "score": 1}\n')
    cases.append(Case("400-digit integer score", ["diagnose", str(out / "bigint.jsonl")], 1, "too large"))
    (out / "hugeint.jsonl").write_text('{"model": "a", "item": "q1", "score": ' + "9" * 5000 + "}\n")
    cases.append(Case("5,000-digit integer", ["diagnose", str(out / "hugeint.jsonl")], 1, "hugeint.jsonl"))
    long_field = out / "longfield.csv"
    rows = ["model,item,score,prompt"] + [f"{m},q{i},{(i + j) % 2},{'x' * 200_000 if i == 0 else 'p'}"
                                          for j, m in enumerate(["a", "b"]) for i in range(30)]
    long_field.write_text("\n".join(rows) + "\n")
    cases.append(Case("CSV field of 200,000 characters (valid)", ["diagnose", str(long_field)], 0))
    helm_bad = out / "helm_bad"
    shutil.copytree(FIXTURES / "helm", helm_bad)
    bad_run = next(p for p in helm_bad.iterdir() if p.name.endswith("model-a"))
    (bad_run / "run_spec.json").write_text("{not json")
    cases.append(Case("HELM run_spec.json broken", ["diagnose", str(helm_bad)], 1, "run_spec.json"))

    # 7. silent data changes
    _wide_csv(out / "dupcols.csv", ["A", "A", "B"])
    cases.append(Case("duplicate wide-CSV columns", ["diagnose", str(out / "dupcols.csv")], 1, "appears twice"))
    dup_samples = _samples(10, 2) + [dict(_samples(10, 2)[3], scores={"match": {"value": "I"}})]
    (out / "dupsamples.json").write_text(json.dumps(_inspect_json("m1", dup_samples)))
    (out / "other.json").write_text(json.dumps(_inspect_json("m2", _samples(10, 3))))
    cases.append(Case("duplicate inspect sample", ["diagnose", str(out / "dupsamples.json"), str(out / "other.json")],
                      1, "appears twice"))
    (out / "emptymodel.csv").write_text("model,item,score\n,q1,1\nb,q1,0\n")
    cases.append(Case("empty model id", ["diagnose", str(out / "emptymodel.csv")], 1, "empty model name"))
    (out / "emptyitem.csv").write_text("item,a,b\nq1,1,0\n ,0,1\n")
    cases.append(Case("empty item id", ["diagnose", str(out / "emptyitem.csv")], 1, "empty item id"))
    (out / "underscore.csv").write_text("item,a,b\nq1,1_0,0\nq2,0,1\n")
    cases.append(Case("'1_0' is not a score", ["diagnose", str(out / "underscore.csv")], 1, "'1_0' is not a number"))

    # 11. valid input that used to be rejected
    bom = out / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + ok.read_bytes())
    cases.append(Case("CSV with a UTF-8 BOM", ["diagnose", str(bom)], 0))
    uni = out / "unicode.csv"
    uni.write_text(ok.read_text().replace("q1,", "①,").replace("q2,", "問題2,"), encoding="utf-8")
    cases.append(Case("non-ASCII item ids", ["diagnose", str(uni)], 0))
    try:
        import pandas as pd

        frame = pd.DataFrame({"model": ["a"] * 30 + ["b"] * 30, "item": [f"q{i}" for i in range(30)] * 2,
                              "score": [i % 2 for i in range(30)] + [(i // 2) % 2 for i in range(30)]})
        frame.to_parquet(out / "ints.parquet")
        frame.assign(score=frame["score"].astype(bool)).to_parquet(out / "bools.parquet")
        cases.append(Case("long Parquet with int scores", ["diagnose", str(out / "ints.parquet")], 0))
        cases.append(Case("long Parquet with bool scores", ["diagnose", str(out / "bools.parquet")], 0))
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass

    # 12. messages
    (out / "latin1.csv").write_bytes("item,a,b\nq1,1,0\ncaf\xe9,0,1\n".encode("latin-1"))
    cases.append(Case("bad UTF-8 in a CSV", ["diagnose", str(out / "latin1.csv")], 1, "latin1.csv: not UTF-8"))
    cases.append(Case("--seed -1", ["diagnose", str(ok), "--seed", "-1"], 2, "--seed"))
    cases.append(Case("--cluster-resamples -5", ["diagnose", str(ok), "--cluster-resamples", "-5"], 2,
                      "--cluster-resamples"))
    cases.append(Case("--n-resamples 10^9", ["compare", str(ok), "--models", "model-a", "model-b", "--method",
                      "bootstrap", "--n-resamples", "1000000000"], 2, "at most 50,000,000"))

    # 8. resource guards (the memory-capped subprocess tests run some of these too)
    cases.append(Case("exact N* for a 0.01-point gap", ["plan", "sample-size", "--pa", "0.5", "--pb", "0.5001",
                      "--method", "exact"], 1, "use method='connor'"))
    cases.append(Case("'all' methods for a 0.01-point gap", ["plan", "sample-size", "--pa", "0.5", "--pb", "0.5001"],
                      0))
    cases.append(Case("coverage at n = 10^15", ["coverage", "--n", "1000000000000000", "--p", "0.5"], 1,
                      "binomial terms"))
    # 13. arena battles: hostile names, outputs onto inputs or links, broken judge files, too many pairs
    battles = out / "battles.csv"
    rows = ["model_a,model_b,winner"]
    for k in range(60):
        a, b = evil[k % len(evil)], evil[(k + 1 + (k // len(evil)) % (len(evil) - 1)) % len(evil)]
        rows.append(f"{_csv_quote(a)},{_csv_quote(b)},{('model_a', 'model_b', 'tie')[k % 3]}")
    battles.write_text("\n".join(rows) + "\n", encoding="utf-8")
    cases.append(Case("arena: hostile model names", ["arena", str(battles), "--markdown", str(out / "arena.md"),
                      "--html", str(out / "arena.html")], 0, stdout_absent=("\x1b", "\x07")))
    cases.append(Case("arena: output onto the input", ["arena", str(battles), "--json", str(battles)], 2,
                      "is the input"))
    cases.append(Case("arena: output is a symlink", ["arena", str(battles), "--html", str(link)], 2, "symbolic link"))
    pair = out / "gpt-4_pair.jsonl"
    pair.write_text('{"question_id": 81, "model_1": "x", "model_2": "y", "g1_winner": "model_1", "g2_winner": '
                    '"model_1"}\n{"question_id": 82, "model_1": "x", "model_2"\n', encoding="utf-8")
    cases.append(Case("arena: truncated MT-Bench judgment", ["arena", str(pair)], 1, "gpt-4_pair.jsonl, record line 2"))
    (out / "annotations.json").write_text('{"preference": 1}', encoding="utf-8")
    cases.append(Case("arena: AlpacaEval file that is not an array", ["arena", str(out / "annotations.json")], 1,
                      "must be an array"))
    crowd = out / "crowd.csv"
    crowd.write_text("model_a,model_b,winner\n" + "".join(f"m{k},m{k + 1},model_a\nm{k + 1},m{k},tie\nm{k},m{k + 1},model_b\n"
                                                           for k in range(700)), encoding="utf-8")
    cases.append(Case("arena: 701 models, all pairs", ["arena", str(crowd), "--pairs", "all"], 1, "245,350 pairs"))
    # 14. repeated samples (llm-power passk)
    evalplus = out / "m_eval_results.json"
    evalplus.write_text(json.dumps({"eval": {"T/0": [{"base_status": "pass", "plus_status": "pass"},
                                                     {"base_status": "pass", "plus_status": "fail"}],
                                             "T/1": [{"base_status": "fail", "plus_status": "fail"},
                                                     {"base_status": "pass", "plus_status": "pass"}]}}))
    cases.append(Case("passk: output onto the input", ["passk", str(evalplus), "--json", str(evalplus)], 2,
                      "is the input"))
    cases.append(Case("passk: k above the samples", ["passk", str(evalplus), "--k", "3"], 1, "k = 3 but question"))
    (out / "bad_eval_results.json").write_text(json.dumps({"eval": {"T/0": "pass"}}))
    cases.append(Case("passk: EvalPlus task that is not a list", ["passk", str(out / "bad_eval_results.json")], 1,
                      "non-empty list of samples"))
    (out / "odd.json").write_text(json.dumps({"hello": 1}))
    cases.append(Case("passk: JSON of no known kind", ["passk", str(out / "odd.json")], 1, "not a samples file"))
    many = _wide_csv(out / "many.csv", [f"m{k}" for k in range(700)], n=20)
    cases.append(Case("700 models, all pairs", ["diagnose", str(many), "--pairs", "all"], 1, "244,650 pairs"))
    cases += _new_entry_points(out, evil)
    return cases


def _gzip_bomb(path: Path, header: bytes, row: bytes, megabytes: int) -> Path:
    """A small .gz file that decompresses to ``megabytes`` MB of ``row`` lines (streamed: never held)."""
    import gzip

    chunk = row * ((1 << 20) // len(row))
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(header)
        for _ in range(megabytes):
            fh.write(chunk)
    return path


def _new_entry_points(out: Path, evil: list[str]) -> list[Case]:
    """Issue 23: the entry points added in the second wave (arena, passk, gate, aggregate, --parquet)."""
    cases: list[Case] = []
    # every file a command reads is an input of the output checks (--instances, --data, ...)
    reports = out / "swe"
    reports.mkdir()
    ids = out / "ids.txt"
    ids.write_text("repo__1\nrepo__2\nrepo__3\n")
    for model in ("ma", "mb"):
        for run, resolved in ((1, ["repo__1"]), (2, ["repo__1", "repo__2"])):
            (reports / f"{model}.r{run}.json").write_text(json.dumps({"resolved_ids": resolved}))
    files = [str(p) for p in sorted(reports.glob("*.json"))]
    cases.append(Case("passk: --json onto the --instances file", ["passk", *files, "--instances", str(ids), "--json",
                      str(ids)], 2, "is the input"))
    wide = _wide_csv(out / "gate_data.csv", ["base", "cand"], n=80)
    cases.append(Case("gate: --json onto the --data file", ["gate", "base", "cand", "--data", str(wide), "--json",
                      str(wide)], 2, "is the input"))
    cases.append(Case("gate: --markdown inside an input folder", ["gate", str(out / "lm_eval" / "model-a"),
                      str(out / "lm_eval" / "model-b"), "--markdown", str(out / "lm_eval" / "model-a" / "c.md")], 2,
                      "lies inside the input"))
    # gzip streams have the archive limits
    bomb_csv = _gzip_bomb(out / "battles.csv.gz", b"model_a,model_b,winner\n", b"a,b,model_a\n", 300)
    cases.append(Case("arena: 300 MB gzip bomb", ["arena", str(bomb_csv)], 1, "compression bomb"))
    bomb_jsonl = _gzip_bomb(out / "samples.jsonl.gz", b"", b'{"model": "a", "item": "q", "sample": 1, "score": 1}\n',
                            300)
    cases.append(Case("passk: 300 MB gzip bomb", ["passk", str(bomb_jsonl)], 1, "compression bomb",
                      extra={"slow": True}))  # 3.4 million JSON lines parsed before the ratio trips: ~35 CPU-s
    import gzip

    with gzip.open(out / "long.csv.gz", "wb", compresslevel=9) as fh:  # unique items, 100 kB prompts: 300 MB
        fh.write(b"model,item,score,prompt\n")
        for k in range(3000):
            fh.write(b"m%d,q%d,%d," % (k % 2, k // 2, k % 3 == 0) + b"x" * 100_000 + b"\n")
    cases.append(Case("diagnose: 300 MB gzip bomb", ["diagnose", str(out / "long.csv.gz")], 1, "compression bomb"))
    (out / "notgzip.csv.gz").write_bytes(b"item,a,b\nq1,1,0\n")
    cases.append(Case("diagnose: .gz that is not gzip", ["diagnose", str(out / "notgzip.csv.gz")], 1,
                      "notgzip.csv.gz"))
    # a duplicate battle column is an error, not a silent choice
    (out / "dupwinner.csv").write_text("model_a,model_b,winner,winner\na,b,model_a,model_b\nb,a,model_a,tie\n")
    cases.append(Case("arena: duplicate winner column", ["arena", str(out / "dupwinner.csv")], 1,
                      "names column 'winner' twice"))
    # an arena of 30,000 models is refused before any M x M allocation
    huge = out / "huge_arena.csv"
    huge.write_text("model_a,model_b,winner\n" + "".join(f"m{k},m{(k + 1) % 30000},model_a\n" for k in range(30000)))
    cases.append(Case("arena: 30,000 models", ["arena", str(huge)], 1, "at most 5,000 models"))
    # names that are mathtext or invisible formatting, in the arena's plot and every terminal line
    sneaky = ["$\\frac{1}{0}$ math", "a\u2060b", "x\u061cy", "mvs\u180e", "tag\U000e0041\U000e007f", "@org/team",
              "https://evil.example/x.png"]
    rows = ["model_a,model_b,winner"] + [f"{_csv_quote(sneaky[k % 7])},{_csv_quote(sneaky[(k + 1) % 7])},"
                                         f"{('model_a', 'model_b', 'tie')[k % 3]}" for k in range(84)]
    (out / "sneaky.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    cases.append(Case("arena: mathtext and invisible characters in names", ["arena", str(out / "sneaky.csv"),
                      "--html", str(out / "sneaky.html"), "--markdown", str(out / "sneaky.md")], 0,
                      stdout_absent=("\u2060", "\u061c", "\u180e", "\U000e0041")))
    # the gate refuses overflowing scores instead of printing +nan
    (out / "overflow.csv").write_text("item,a,b\n" + "".join(f"q{k},{'1e308' if k % 2 else '-1e308'},"
                                                             f"{'-1e308' if k % 2 else '1e308'}\n" for k in range(20)))
    cases.append(Case("gate: +-1e308 graded scores", ["gate", "a", "b", "--data", str(out / "overflow.csv")], 1,
                      "overflow"))
    # aggregate: an odd config field
    agg = out / "agg_odd"
    agg.mkdir()
    (agg / "results_2024.json").write_text(json.dumps({"results": {"arc": {"acc,none": 0.5}}, "n-samples": {
        "arc": {"effective": 100}}, "config": "not an object", "model_name": ["not", "a", "string"]}))
    cases.append(Case("aggregate: config that is not an object", ["aggregate", str(agg)], 0))
    # NaN / None cluster labels in a wide Parquet are an error, not a cluster
    try:
        import pandas as pd

        frame = pd.DataFrame({"item": [f"q{i}" for i in range(40)], "a": [i % 2 for i in range(40)],
                              "b": [(i // 2) % 2 for i in range(40)],
                              "subject": [None if i == 5 else f"s{i % 4}" for i in range(40)]})
        frame.to_parquet(out / "nan_clusters.parquet")
        cases.append(Case("diagnose: a None cluster label in a wide Parquet", ["diagnose", str(out / "nan_clusters.parquet"),
                          "--cluster", "subject"], 1, "missing cluster label"))
        frame.assign(subject=[float("nan") if i == 7 else f"s{i % 4}" for i in range(40)]).to_parquet(
            out / "nan_clusters2.parquet")
        cases.append(Case("diagnose: a NaN cluster label in a wide Parquet",
                          ["diagnose", str(out / "nan_clusters2.parquet"), "--cluster", "subject"], 1,
                          "missing cluster label"))
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    # a declared score range the wrong way round is an error in every mode, also for lower-is-better
    cases.append(Case("gate: --score-range 1 0", ["gate", "base", "cand", "--data", str(wide), "--score-range", "1",
                      "0"], 2, "--score-range"))
    cases.append(Case("gate: --score-range 1 0, lower is better, anytime", ["gate", "base", "cand", "--data", str(wide),
                      "--score-range", "1", "0", "--lower-is-better", "--anytime", "--horizon", "500"], 2,
                      "--score-range"))
    # aggregate: a NaN score and a count no float holds exactly
    for name, result, n_samples, phrase in (("a NaN score", {"acc,none": float("nan")}, 100, "not a finite number"),
                                            ("1e30 items", {"acc,none": 0.5}, 10**30, "more than a count")):
        folder = out / f"agg_{name.split()[1].lower()}"
        folder.mkdir()
        (folder / "results_2024.json").write_text(json.dumps({"results": {"arc": result},
                                                              "n-samples": {"arc": {"effective": n_samples}}}))
        cases.append(Case(f"aggregate: {name}", ["aggregate", str(folder)], 1, phrase))
    # arena: a model name that is an object or a boolean is not a name
    for name, value in (("an object", {"x": 1}), ("a boolean", True)):
        path = out / f"battles_{name.split()[1]}.jsonl"
        path.write_text("".join(json.dumps({"model_a": value if k == 3 else "a", "model_b": "b",
                                            "winner": "model_a"}) + "\n" for k in range(20)))
        cases.append(Case(f"arena: a model name that is {name}", ["arena", str(path)], 1, "must be a name"))
    cases.append(Case("arena: --judge without a judge column", ["arena", str(out / "sneaky.csv"), "--judge", "gpt-4"], 1,
                      "no judge column"))
    # SWE-bench reports whose id lists hold numbers or objects
    odd = out / "swe_odd"
    odd.mkdir()
    for model in ("ma", "mb"):
        (odd / f"{model}.json").write_text(json.dumps({"resolved_ids": ["repo__1", 7, {"a": 1}]}))
    cases.append(Case("passk: resolved_ids with non-strings", ["passk", *(str(p) for p in sorted(odd.glob("*.json")))],
                      1, "not an instance id"))
    try:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        # a Parquet schema naming a column twice (pandas would silently pick one)
        table = pa.Table.from_arrays([pa.array(["q1", "q2", "q3"]), pa.array([1, 0, 1]), pa.array([0, 0, 1]),
                                      pa.array([1, 1, 0])], names=["item", "a", "b", "a"])
        pq.write_table(table, out / "dupcols.parquet")
        cases.append(Case("diagnose: a Parquet column named twice", ["diagnose", str(out / "dupcols.parquet")], 1,
                          "twice"))
        # a small file that decompresses past the Parquet limit (set low here) is refused from its footer
        pd.DataFrame({"item": [f"q{i}" for i in range(200_000)], "a": [i % 2 for i in range(200_000)],
                      "b": [(i // 3) % 2 for i in range(200_000)]}).to_parquet(out / "big.parquet")
        cases.append(Case("diagnose: Parquet past LLM_POWER_MAX_PARQUET_MB", ["diagnose", str(out / "big.parquet")], 1,
                          "LLM_POWER_MAX_PARQUET_MB", extra={"env": {"LLM_POWER_MAX_PARQUET_MB": "1"}}))
    except ImportError:  # pragma: no cover - pandas and pyarrow are dependencies
        pass
    # the new commands: judges without a judge column, ppi onto its own input, ppi with text labels
    cases.append(Case("judges: battles without a judge column", ["judges", str(out / "sneaky.csv")], 1,
                      "no judge column"))
    (out / "lab.csv").write_text("item,label,judge\nq1,1,1\nq2,0,0\nq3,1,0\n")
    (out / "unl.csv").write_text("item,judge\nq4,1\nq5,0\n")
    cases.append(Case("ppi: --json onto the --labeled file", ["ppi", "--labeled", str(out / "lab.csv"), "--unlabeled",
                      str(out / "unl.csv"), "--json", str(out / "lab.csv")], 2, "is the input"))
    (out / "lab_text.csv").write_text("item,label,judge\nq1,yes please,1\nq2,0,0\n")
    cases.append(Case("ppi: a label that is not a score", ["ppi", "--labeled", str(out / "lab_text.csv"),
                      "--unlabeled", str(out / "unl.csv")], 1, "field 'label'"))
    # a 10,000-character model name: the terminal report is fast (timed by the test)
    _wide_csv(out / "longname.csv", ["x" * 10_000, "model-b", "model-c"], n=200)
    cases.append(Case("diagnose: a 10,000-character model name", ["diagnose", str(out / "longname.csv")], 0,
                      extra={"seconds": 30}))
    return cases


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus")
    for case in build(target):
        print(f"{case.code}  {case.name}: llm-power {' '.join(case.argv)}")
