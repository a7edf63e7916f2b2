"""Regenerate the golden renderer outputs after an intended change of the report format.

Run ``python tests/golden/regenerate.py`` and review the diff like code: the numbers in these
files are checked against oracles elsewhere (tests/resolution/test_resolution.py, tests/resolution/test_verdict.py);
these files pin the *format* of the Markdown and JSON reports so that a change is deliberate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "long.csv"


def render() -> dict[str, str]:
    """The Markdown and JSON reports of the long-format fixture (clusters, Holm, anytime)."""
    import warnings

    from llm_power import align_results, diagnose, rank_report, read_results
    from llm_power._core.results import to_plain
    from llm_power.report.markdown import render_markdown

    frame = read_results(FIXTURE, cluster="subject")
    aligned = align_results(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = diagnose(aligned.scores, models=aligned.models, cluster=aligned.clusters, correction="holm",
                        anytime=True, cluster_resamples=200, rng=0)
        rankings = rank_report(diag, rng=0)
    payload = json.dumps(to_plain({**diag.to_dict(), "rankings": rankings.to_dict()}), indent=2, sort_keys=True,
                         allow_nan=False) + "\n"
    return {"report.md": render_markdown(diag, rankings=rankings), "report.json": payload}


if __name__ == "__main__":
    for name, text in render().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote {HERE / name}", file=sys.stderr)
