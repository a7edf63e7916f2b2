"""``llm-power ppi --labeled F --unlabeled F``: a judge-scored eval with a human-labelled subset --
the PPI++ estimate of the human score with its interval, beside the labels alone, and how many
labels a target interval needs.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from .._core.suggest import hint
from ._json import document
from ._types import HelpFormatter

HELP = ("prediction-powered inference: the human score from a judge on every item and humans on a few, and "
        "labels needed")

EPILOG = """examples:
  llm-power ppi --labeled labeled.csv --unlabeled judged.csv
  llm-power ppi --labeled labeled.csv --unlabeled judged.csv --plan 0.02     # labels for ±2 points

--labeled has one row per human-labelled item: a human label and the judge's score of the same
item; --unlabeled the judge's scores of the other items. Columns are found by name (label: label,
human, y, gold; judge: judge, prediction, yhat, pred, score) or given with --label-column and
--judge-column.
"""

LABEL_COLUMNS = ("label", "human", "y", "gold", "human_label")
JUDGE_COLUMNS = ("judge", "prediction", "yhat", "pred", "judge_score", "score")


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add the subcommand and its options to the parser."""
    p = sub.add_parser("ppi", parents=[parent], help=HELP, description=HELP[:1].upper() + HELP[1:] + ".",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("--labeled", required=True, metavar="FILE",
                   help="items with a human label and the judge's score (CSV/TSV/JSONL/Parquet; required)")
    p.add_argument("--unlabeled", required=True, metavar="FILE", help="items with the judge's score only (required)")
    p.add_argument("--label-column", metavar="NAME", help="the human label's column (default: found by name)")
    p.add_argument("--judge-column", metavar="NAME", help="the judge score's column (default: found by name)")
    p.add_argument("--plan", type=float, metavar="HALF_WIDTH",
                   help="also: human labels needed for an interval of ±HALF_WIDTH (in score units: 0.02 = 2 "
                        "points of accuracy), from this pilot's sd and correlation (default: no plan)")
    p.add_argument("--lam", type=float, default=None, metavar="L",
                   help="fixed weight of the judge in [0, 1] (default: power-tuned; 1 is classical PPI, 0 labels only)")
    p.add_argument("--confidence-level", type=float, default=0.95, metavar="L",
                   help="level of the intervals (default 0.95)")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="write the numbers as JSON (default: none)")
    p.add_argument("--markdown", dest="markdown_out", metavar="FILE", help="write the Markdown report (default: none)")
    p.set_defaults(run=run)


def _column(path: str, columns: list[str], given: str | None, names: tuple[str, ...], what: str, flag: str) -> str:
    from .._core.errors import DataError

    if given is not None:
        if given not in columns:
            msg = f"{flag} {given!r}: no such column{hint(given, columns)}; columns are {', '.join(map(repr, columns))}"
            raise DataError(msg, file=path)
        return given
    found = next((c for c in names if c in columns), None)
    if found is None:
        msg = f"no {what} column (one of {', '.join(names)}); columns are {', '.join(map(repr, columns))}; name it " \
              f"with {flag}"
        raise DataError(msg, file=path)
    return found


def _values(path: str, frame: Any, column: str) -> Any:
    import numpy as np

    from ..io.plain import parse_score

    return np.array([parse_score(v, file=path, record=f"row {k}", field=column)
                     for k, v in enumerate(frame[column].tolist())], dtype=float)


def _read(path: str) -> Any:
    import pandas as pd

    from .._core.errors import DataError
    from ..io.plain import plain_suffix
    from ..io.safe import open_bounded, read_parquet

    suffix = plain_suffix(__import__("pathlib").Path(path))
    try:
        if suffix == ".parquet":
            return read_parquet(path)
        with open_bounded(path) as fh:  # a regular file only (.gz under the archive limits); pandas opens nothing
            if suffix in (".jsonl", ".ndjson"):
                return pd.read_json(fh, lines=True)
            return pd.read_csv(fh, sep="\t" if suffix == ".tsv" else ",")
    except DataError:
        raise
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        msg = f"not readable as a table ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
        raise DataError(msg, file=path) from None


def estimate(labeled: Any, unlabeled: Any, *, label_column: str | None = None, judge_column: str | None = None,
             lam: float | None = None, confidence_level: float = 0.95, plan: float | None = None,
             sources: tuple[str, str] = ("labeled", "unlabeled")) -> dict[str, Any]:
    """Every number the command prints, as plain data."""
    import numpy as np

    from .._core.errors import DataError
    from ..preferences import labels_only_interval, ppi_labels_needed, ppi_mean

    lab_cols, unl_cols = [str(c) for c in labeled.columns], [str(c) for c in unlabeled.columns]
    ycol = _column(sources[0], lab_cols, label_column, LABEL_COLUMNS, "human label", "--label-column")
    fcol = _column(sources[0], lab_cols, judge_column, JUDGE_COLUMNS, "judge score", "--judge-column")
    ucol = _column(sources[1], unl_cols, judge_column, JUDGE_COLUMNS, "judge score", "--judge-column")
    if ycol == fcol:
        msg = (f"the label and the judge score are the same column {ycol!r}; name them with --label-column and "
               "--judge-column")
        raise DataError(msg, file=sources[0])
    y, f = _values(sources[0], labeled, ycol), _values(sources[0], labeled, fcol)
    fu = _values(sources[1], unlabeled, ucol)
    if y.size < 2 or fu.size < 1:
        msg = f"need at least 2 labelled and 1 unlabelled item; got {y.size} and {fu.size}"
        raise DataError(msg)
    res = ppi_mean(y, f, fu, lam=lam, confidence_level=confidence_level)
    ci = res.confidence_interval()
    classical = labels_only_interval(res, confidence_level)
    binary = bool(np.isin(y, (0.0, 1.0)).all())
    out: dict[str, Any] = {
        "label_column": ycol, "judge_column": fcol, "n_labeled": res.n_labeled, "n_unlabeled": res.n_unlabeled,
        "binary": binary, "confidence_level": confidence_level, "estimate": res.estimate,
        "standard_error": res.standard_error, "ci_low": ci.low, "ci_high": ci.high, "lam": res.lam,
        "classical_estimate": res.classical_estimate, "classical_se": res.classical_se,
        "classical_ci_low": classical.low,
        "classical_ci_high": classical.high,
        "effective_labels": res.effective_labels, "judge_mean_labeled": float(f.mean()),
        "judge_mean_unlabeled": float(fu.mean()),
        "correlation": float(np.corrcoef(y, f)[0, 1]) if y.std() > 0 and f.std() > 0 else math.nan,
    }
    if plan is not None:
        sd = float(y.std(ddof=1))
        rho = out["correlation"] if math.isfinite(out["correlation"]) else 0.0
        out["plan"] = {"half_width": plan, "sd": sd, "correlation": rho,
                       "labels_needed": ppi_labels_needed(plan, sd=sd, correlation=rho,
                                                          n_unlabeled=float(fu.size),
                                                          confidence_level=confidence_level),
                       "labels_needed_without_judge": ppi_labels_needed(plan, sd=sd, correlation=0.0,
                                                                        n_unlabeled=float(fu.size),
                                                                        confidence_level=confidence_level)}
    return out


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit code."""
    from ..report.files import write_reports
    from ..report.tables import ppi_caption, ppi_markdown, ppi_plan_line, ppi_view, print_view
    from ..report.terminal import dump_json, say

    out = estimate(_read(args.labeled), _read(args.unlabeled), label_column=args.label_column,
                   judge_column=args.judge_column, lam=args.lam, confidence_level=args.confidence_level, plan=args.plan,
                   sources=(args.labeled, args.unlabeled))
    doc = document(args, out)
    write_reports(args, doc, lambda: ppi_markdown(out), (args.labeled, args.unlabeled))
    if args.format == "json":
        dump_json(doc)
        return 0
    print_view(ppi_view(out))
    say(ppi_caption(out))
    if "plan" in out:
        say(ppi_plan_line(out))
    return 0
