"""Issue 47 (part 1): every JSON document of the command line validates against the JSON Schema the
package ships for its command (``llm_power/schemas``, draft 2020-12, formats checked), carries the
schema's version and the package's, and a schema cannot change without a version bump.

Each command runs once (module fixture) on real data: the bundled MMLU-Pro, arena and rerun data
(``--demo``), the test fixtures, ``examples/`` and ../shared/data; ``--json FILE`` is written by the
same runs and checked beside stdout.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pytest

import llm_power as lp
from llm_power.report.schema import ESTIMANDS, SCHEMA_COMMANDS, SCHEMA_VERSION, VERDICT_REGIMES, schema_file

from _cli import run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SCHEMAS = resources.files("llm_power").joinpath("schemas")


def _inputs(tmp: Path, data: Path) -> dict[str, Path]:
    """Small input files cut from real data: a leaderboard of MMLU-Pro results and a new model run
    on a subset plan's items, one model alone, and PandaLM's judge labels for prediction-powered
    inference (as tests/cli/test_cli_judges_ppi.py builds them).
    """
    board = pd.read_csv(data / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz").iloc[:2000].dropna()
    board.iloc[:, :6].to_csv(tmp / "board.csv", index=False)
    pd.read_csv(FIXTURES / "wide.csv")[["item", "model-a"]].to_csv(tmp / "one.csv", index=False)
    d = pd.read_csv(data / "preferences" / "pandalm_testset" / "battles.csv.gz")
    p = d.pivot_table(index="item_id", columns="judge", values="winner", aggfunc="first")
    majority = p[["annotator1", "annotator2", "annotator3"]].apply(lambda r: Counter(r).most_common(1)[0][0], axis=1)
    judged = p["gpt-3.5-turbo"].notna()
    y = (majority[judged] == "model_b").to_numpy(int)
    f = (p["gpt-3.5-turbo"][judged] == "model_b").to_numpy(int)
    order = np.random.default_rng(0).permutation(y.size)
    lab, unl = order[:150], order[150:]
    pd.DataFrame({"item": lab, "label": y[lab], "judge": f[lab]}).to_csv(tmp / "lab.csv", index=False)
    pd.DataFrame({"item": unl, "judge": f[unl]}).to_csv(tmp / "unl.csv", index=False)
    return {"board": tmp / "board.csv", "one": tmp / "one.csv", "lab": tmp / "lab.csv", "unl": tmp / "unl.csv"}


def _new_model(tmp: Path, board: Path, plan: Path) -> Path:
    """A new model's scores on the plan's items: a leaderboard model's, flipped on every tenth item."""
    items = pd.read_csv(plan, dtype={"item_id": str})["item_id"]
    scores = pd.read_csv(board, dtype={"question_id": str}).set_index("question_id").loc[items].iloc[:, 1]
    flipped = np.where(np.arange(len(items)) % 10 == 0, 1 - scores.to_numpy(), scores.to_numpy())
    pd.DataFrame({"item": items.to_numpy(), "new": flipped}).to_csv(tmp / "new.csv", index=False)
    return tmp / "new.csv"


def _cases(tmp: Path, data: Path) -> list[tuple[str, str, list[Any]]]:
    """(case, command, argv): every command with --format json, and the variants of a document."""
    f = _inputs(tmp, data)
    lm_eval = data / "formats" / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
    lighteval = data / "formats" / "lighteval" / "results_2026-08-10T17-22-11.385681.json"
    return [
        ("ci", "ci", ["ci", "80", "100"]),
        ("coverage", "coverage", ["coverage", "--n", "50", "100", "--p", "0.8"]),
        ("adjust", "adjust", ["adjust", "0.01", "0.04", "0.03"]),
        ("compare", "compare", ["compare", FIXTURES / "wide.csv", "--cluster", "subject"]),
        ("compare-iid", "compare", ["compare", FIXTURES / "wide.csv"]),
        ("diagnose", "diagnose", ["diagnose", FIXTURES / "long.csv", "--cluster", "subject", "--correction", "holm",
                                  "--anytime", "--cluster-resamples", "50", "--cluster-nstar-sims", "50",
                                  "--json", tmp / "diagnose.json", "--receipt", tmp / "receipt.json"]),
        ("verify", "verify", ["verify", tmp / "receipt.json"]),
        ("diagnose-one-model", "diagnose", ["diagnose", f["one"], "--json", tmp / "diagnose-one-model.json"]),
        ("rank", "rank", ["rank", "--demo", "--seed", "3", "--n-resamples", "200"]),
        ("demo", "demo", ["demo", "--no-html"]),  # the same document; no report.html in the working folder
        ("demo-error-bars", "demo", ["demo", "--error-bars"]),
        ("noise", "noise", ["noise", "--demo"]),
        ("gate", "gate", ["gate", "Meta-Llama-3_1-70B", "Meta-Llama-3_1-70B-Instruct", "--demo",
                          "--json", tmp / "gate.json"]),
        ("gate-cluster-anytime", "gate", ["gate", "Meta-Llama-3_1-70B", "Meta-Llama-3_1-70B-Instruct", "--demo",
                                          "--cluster", "category", "--anytime"]),
        ("aggregate", "aggregate", ["aggregate", lighteval, lm_eval, "--items", "1000"]),
        ("arena", "arena", ["arena", "--demo", "--json", tmp / "arena.json"]),
        ("judges", "judges", ["judges", data / "preferences" / "pandalm_testset" / "battles.csv.gz", "--resamples",
                              "100", "--json", tmp / "judges.json"]),
        ("ppi", "ppi", ["ppi", "--labeled", f["lab"], "--unlabeled", f["unl"], "--plan", "0.03",
                        "--json", tmp / "ppi.json"]),
        ("passk", "passk", ["passk", ROOT / "examples" / "passk_samples.csv", "--k", "1", "2",
                            "--json", tmp / "passk.json"]),
        ("plan-sample-size", "plan sample-size", ["plan", "sample-size", "--pa", "0.7", "--pb", "0.65"]),
        ("plan-sample-size-table", "plan sample-size", ["plan", "sample-size", "--table"]),
        ("plan-mde", "plan mde", ["plan", "mde", "--n", "500", "1000"]),
        ("plan-mde-table", "plan mde", ["plan", "mde", "--table"]),
        ("plan-power", "plan power", ["plan", "power", "--pa", "0.7", "--pb", "0.65", "--n", "500"]),
        ("plan-shortcut", "plan shortcut", ["plan", "shortcut", "--pa", "0.7", "--pb", "0.65", "--rho", "0.5"]),
        ("plan-leaderboard", "plan leaderboard", ["plan", "leaderboard", "--demo", "--simulations", "200"]),
        ("plan-runs", "plan runs", ["plan", "runs", data / "reruns" / "llm_stability_long.csv.gz", "--run", "run",
                                    "--on-missing", "intersect"]),
        ("subset-plan", "subset plan", ["subset", "plan", f["board"], "--cluster", "category", "--budget", "300",
                                        "--out", tmp / "plan.csv", "--seed", "3", "--json", tmp / "subset-plan.json"]),
        ("subset-estimate", "subset estimate", ["subset", "estimate", "NEW", "--plan", tmp / "plan.csv",
                                                "--reference", f["board"], "--cluster", "category",
                                                "--json", tmp / "subset-estimate.json"]),
        ("subset-estimate-benchmark", "subset estimate", ["subset", "estimate", "NEW", "--plan", tmp / "plan.csv",
                                                          "--reference", f["board"], "--cluster", "category", "--target", "benchmark"]),
        ("diagnose-runs", "diagnose", ["diagnose", data / "reruns" / "llm_stability_long.csv.gz", "--run", "run",
                                       "--on-missing", "intersect", "--cluster-resamples", "0",
                                       "--cluster-nstar-sims", "0"]),
    ]


@pytest.fixture(scope="module")
def documents(tmp_path_factory, shared_data_dir) -> dict[str, tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """case -> (command, the stdout document, the --json FILE document or None): one run per case."""
    tmp = tmp_path_factory.mktemp("json_schema")
    out = {}
    for case, command, argv in _cases(tmp, shared_data_dir):
        if case.startswith("subset-estimate"):
            argv = [_new_model(tmp, tmp / "board.csv", tmp / "plan.csv") if a == "NEW" else a for a in argv]
        res = run([*map(str, argv), "--format", "json", "--quiet"])
        assert res.returncode == 0, (case, res.stderr)
        written = tmp / f"{case}.json"
        out[case] = (command, json.loads(res.stdout), json.loads(written.read_text()) if written.exists() else None)
    return out


@functools.cache
def _validator(command: str) -> jsonschema.Draft202012Validator:
    schema = lp.json_schema(command)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _errors(command: str, document: Any) -> list[str]:
    """Every error, with those inside an ``anyOf`` (each variant's), as "path: message"."""
    out = []
    stack = list(_validator(command).iter_errors(document))
    while stack:
        error = stack.pop()
        out.append(f"{'/'.join(map(str, error.absolute_path))}: {error.message}")
        stack.extend(error.context or ())
    return out


def test_every_command_with_json_output_is_covered(documents):
    """Every command that writes --format json is run here, and has a shipped schema."""
    from llm_power.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001
    typed = set()
    for name, child in sub.choices.items():
        nested = [a for a in child._actions if a.dest in {"plan_command", "subset_command"}]  # noqa: SLF001
        typed |= {f"{name} {second}" for second in nested[0].choices} if nested else {name}
    assert typed == set(SCHEMA_COMMANDS)
    assert {command for command, _, _ in documents.values()} == set(SCHEMA_COMMANDS)


def test_every_document_validates_against_its_shipped_schema(documents):
    for case, (command, shown, written) in documents.items():
        assert _errors(command, shown) == [], case
        if written is not None:  # --json FILE: the same document as stdout
            assert _errors(command, written) == [], case
            assert written == shown, case


def test_every_document_carries_the_versions_the_command_and_its_options(documents):
    for case, (command, doc, _) in documents.items():
        schema = lp.json_schema(command)
        assert doc["schema_version"] == schema["version"] == SCHEMA_VERSION, case
        assert doc["llm_power_version"] == lp.__version__, case
        assert doc["command"] == command and doc["schema"] == schema["$id"], case
        assert isinstance(doc["options"], dict) and "format" not in doc["options"], case
    # the settings it ran with: the options as given
    assert documents["compare"][1]["options"]["cluster"] == "subject"
    assert documents["diagnose"][1]["options"]["correction"] == "holm"
    assert documents["plan-power"][1]["options"]["n"] == [500]


def _bases(doc: dict[str, Any], case: str) -> list[list[dict[str, Any]]]:
    """The ``inference`` lists of a document's pairs (or of its one pair)."""
    if case in {"compare", "compare-iid", "gate", "gate-cluster-anytime"}:
        return [doc["inference"]]
    if case in {"diagnose", "demo", "diagnose-runs"}:
        return [p["inference"] for p in doc["pairs"]]
    if case == "arena":
        return doc["pairs"]["inference"]
    if case.startswith("subset-estimate"):
        return [g["inference"] for g in doc["gaps"]]
    if case == "passk":
        return [doc["comparison"]["inference"]]
    return []


def test_each_verdict_says_its_estimand_method_level_and_regime(documents):
    """The bases follow the documents' own settings: the regimes a row was computed under, the
    corrected level of each pair, the cluster test with --cluster, anytime with --anytime."""
    seen = set()
    for case, (_, doc, _) in documents.items():
        for bases in _bases(doc, case):
            assert bases, case
            for b in bases:
                assert b["estimand"] in ESTIMANDS.values() and b["regime"] in VERDICT_REGIMES, case
                assert 0 < b["level"] < 1 and b["method"], case
                seen.add((case, b["regime"]))
    diag = documents["diagnose"][1]
    for row in diag["pairs"]:
        by = {b["regime"]: b for b in row["inference"]}
        assert set(by) == {"iid", "corrected", "cluster", "anytime"}  # --correction holm --cluster --anytime
        assert by["corrected"]["level"] == row["alpha_corrected"] and by["corrected"]["correction"] == "holm"
        assert by["iid"]["method"] == row["test"] and by["iid"]["level"] == 0.05
        assert by["cluster"]["method"] == "cluster_cr2"
    assert [b["regime"] for b in documents["compare"][1]["inference"]] == ["cluster"]
    assert [b["regime"] for b in documents["compare-iid"][1]["inference"]] == ["iid"]
    assert documents["gate-cluster-anytime"][1]["inference"][0]["regime"] == "anytime"
    assert documents["gate"][1]["inference"][0]["method"] == documents["gate"][1]["test"]
    gaps = documents["subset-estimate"][1]["gaps"]  # the default target: new items, Bonferroni across the gaps
    assert all(g["inference"][0]["level"] == g["alpha"] < 0.05 for g in gaps)
    assert {"iid", "corrected", "anytime"} <= {r for c, r in seen if c == "arena"}
    # a setting that conditions on the items run: the estimand is these items
    assert {b["estimand"] for g in documents["subset-estimate-benchmark"][1]["gaps"] for b in g["inference"]} == {
        ESTIMANDS["items"]}
    assert {b["estimand"] for g in gaps for b in g["inference"]} == {ESTIMANDS["population"]}
    runs = [{b["regime"]: b for b in p["inference"]} for p in documents["diagnose-runs"][1]["pairs"]]
    assert runs and all({"iid", "runs"} <= set(r) and r["runs"]["method"] == "run_t" for r in runs)


def test_the_schemas_are_not_vacuous(documents):
    """A document with a required field removed, or with a field of the wrong type, fails."""
    for case, (command, doc, _) in documents.items():
        schema = lp.json_schema(command)
        assert {"schema_version", "llm_power_version", "command", "schema", "options"} <= set(schema["required"])
        for key in ("schema_version", "options", next(k for k in doc if k not in schema["$defs"]["header"]["required"]
                                                      and k in _required(schema, doc))):
            broken = copy.deepcopy(doc)
            del broken[key]
            assert _errors(command, broken), (case, key)
        wrong = {**doc, "llm_power_version": 1}
        assert _errors(command, wrong), case
    diag = copy.deepcopy(documents["diagnose"][1])
    diag["pairs"][0]["q"] = "0.5"
    assert any("pairs/0/q" in e for e in _errors("diagnose", diag))
    diag = copy.deepcopy(documents["diagnose"][1])
    diag["pairs"][0]["inference"][0]["regime"] = "bonferroni"
    assert any("inference" in e for e in _errors("diagnose", diag))
    diag["schema_version"] = "0.9"
    assert any("schema_version" in e for e in _errors("diagnose", diag))


def _required(schema: dict[str, Any], doc: dict[str, Any]) -> set[str]:
    """The top-level keys the schema requires of ``doc`` (of the variant it validates against)."""
    out = set(schema.get("required", ()))
    for variant in [*schema.get("anyOf", []), *schema.get("oneOf", [])]:
        if not list(jsonschema.Draft202012Validator({**variant, "$defs": schema["$defs"]}).iter_errors(doc)):
            out |= set(variant.get("required", ()))
    return out


def _canonical_sha256(text: str) -> str:
    canonical = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_a_schema_change_needs_a_version_bump():
    """versions.json records, for each schema version, the SHA-256 of each schema file (canonical
    JSON); the files shipped must hash to the current version's record."""
    registry = json.loads(SCHEMAS.joinpath("versions.json").read_text(encoding="utf-8"))
    assert registry["current"] == SCHEMA_VERSION
    recorded = registry["versions"][SCHEMA_VERSION]
    shipped = {p.name for p in SCHEMAS.iterdir() if p.name.endswith(".schema.json")}
    assert shipped == {schema_file(c) for c in SCHEMA_COMMANDS} == set(recorded)
    changed = sorted(name for name in shipped
                     if _canonical_sha256(SCHEMAS.joinpath(name).read_text(encoding="utf-8")) != recorded[name])
    assert not changed, (f"schema(s) {', '.join(changed)} changed but schema_version is still {SCHEMA_VERSION}: bump "
                         "SCHEMA_VERSION in llm_power/report/schema.py (and each schema's 'version' and '$id'), and "
                         "record the new version's SHA-256s in llm_power/schemas/versions.json "
                         "(python scripts/json_schemas.py --record)")
    for name in shipped:  # every schema declares the version it is recorded under
        schema = json.loads(SCHEMAS.joinpath(name).read_text(encoding="utf-8"))
        assert schema["version"] == SCHEMA_VERSION and f"/{SCHEMA_VERSION}/" in schema["$id"], name
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name


def test_the_registry_catches_an_edited_schema(tmp_path):
    """The check above is not vacuous: one changed type changes the recorded hash."""
    name = schema_file("compare")
    text = SCHEMAS.joinpath(name).read_text(encoding="utf-8")
    schema = json.loads(text)
    schema["properties"]["llm_power_version"] = {"type": "integer"}
    recorded = json.loads(SCHEMAS.joinpath("versions.json").read_text(encoding="utf-8"))["versions"][SCHEMA_VERSION]
    assert _canonical_sha256(text) == recorded[name]
    assert _canonical_sha256(json.dumps(schema)) != recorded[name]


def test_json_schema_names_the_commands():
    assert lp.json_schema("plan sample-size") == lp.json_schema("plan-sample-size")
    with pytest.raises(ValueError, match=r"`command` must be one of .*got 'diagnoze'.*diagnose"):
        lp.json_schema("diagnoze")
