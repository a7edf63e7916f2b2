"""Read pairwise battles -- arena logs, MT-Bench and AlpacaEval judge verdicts, OpenCompass
subjective results -- through the battle readers of the registry (each format module's ``BATTLES``);
the readers themselves are in :mod:`llm_power.io.battle_tables`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._core.errors import DataError
from .battle_tables import (
    is_battle_file,
    is_opencompass_battles,
    read_battle_table,
    read_opencompass_battles,
    where_rows,
)
from .safe import parse_once

__all__ = ["battle_files", "is_battle_file", "is_opencompass_battles", "read_battle_table", "read_battles",
           "read_opencompass_battles", "where_rows"]


def battle_files(folder: Path) -> list[Path]:
    """The battle files in a folder: what every battle reader of the registry finds there (MT-Bench
    ``*_pair.jsonl``, AlpacaEval ``annotations.json``, OpenCompass subjective ``results/<a>_<b>/*.json``).
    """
    from .formats import battles_by_order

    return sorted({p for reader in battles_by_order() for p in reader.finds(folder)})


def _read_one(path: Path) -> tuple[Any, int]:
    """One file by the first battle reader of the registry that claims it."""
    from .formats import battles_by_order

    readers = battles_by_order()
    reader = next((r for r in readers if r.claims(path)), None)
    if reader is None:
        known = "; ".join(r.summary for r in readers)
        msg = f"not a battles file (known: {known})"
        raise DataError(msg, file=str(path))
    return reader.read(path)


@parse_once()
def read_battles(paths: str | Path | Iterable[str | Path]) -> Any:
    r"""Read battle logs and judge verdicts into one long table (pandas DataFrame).

    Formats (detected per file from its first record): an arena log with ``model_a``,
    ``model_b``, ``winner`` (``model_a`` | ``model_b`` | ``tie`` | ``tie (bothbad)`` or a model's
    name; optional ``question_id``, ``judge``, ``g1_winner``, ``g2_winner``, anything else kept) as
    CSV/TSV, JSONL, a JSON array or Parquet (optionally .gz); MT-Bench ``*_pair.jsonl``
    (``model_1``, ``model_2``, ``g1_winner``, ``g2_winner``: FastChat's rule, a verdict that flips
    with the order is a tie; records whose judge output failed to parse — ``error`` — are dropped
    and counted in ``frame.attrs["n_dropped"]``); AlpacaEval ``annotations.json``
    (``generator_1`` is the baseline = model_a, ``generator_2`` the model = model_b;
    ``preference`` 1..2 becomes ``preference - 1`` in [0, 1]; unannotated rows are dropped);
    OpenCompass pairwise subjective results (``results/<model1>_<model2>/<dataset>.json``: the
    judge's ``Choice: A|B|C|D`` -- C and D are ties -- and ``gold`` naming answer1/answer2, read
    with ``ast.literal_eval``; a ``choice`` and a ``capability`` column).

    Parameters
    ----------
    paths : str, pathlib.Path or iterable of them
        One file, a folder, or several of either. A folder is searched recursively for
        ``*_pair.jsonl``, ``annotations.json`` and OpenCompass ``results/<a>_<b>/*.json`` files
        (give plain battle logs by file name).
        No path at all, or a folder without such files, is a :class:`~llm_power.DataError`; so is
        a bad record (the error names the file, the record and the field).

    Returns
    -------
    pandas.DataFrame
        One row per battle, from all files in order: ``model_a``, ``model_b``, ``winner``
        (``"model_a"``, ``"model_b"`` or ``"tie"``), ``question_id`` and ``judge`` (text, ""
        when absent), then the format's other columns (``g1_winner``, ``g2_winner``, ``turn``,
        ``preference``, ``dataset``, the extra columns of a log) and ``source`` (the file name).
        ``frame.attrs["n_dropped"]`` counts the records dropped (MT-Bench ``error`` verdicts,
        unannotated AlpacaEval rows).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from llm_power.io import read_battles
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "gpt-4_pair.jsonl").write_text(
    ...     '{"question_id": 81, "model_1": "x", "model_2": "y", "g1_winner": "model_1", '
    ...     '"g2_winner": "model_1", "judge": ["gpt-4", "pair-v2"], "turn": 1}\n'
    ...     '{"question_id": 82, "model_1": "x", "model_2": "y", "g1_winner": "model_1", '
    ...     '"g2_winner": "model_2", "judge": ["gpt-4", "pair-v2"], "turn": 1}\n')
    >>> read_battles(folder / "gpt-4_pair.jsonl")[["question_id", "winner", "g1_winner", "g2_winner"]]
      question_id   winner g1_winner g2_winner
    0          81  model_a   model_a   model_a
    1          82      tie   model_a   model_b
    """
    import pandas as pd

    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not items:
        msg = "no battle files given"
        raise DataError(msg)
    frames: list[Any] = []
    dropped = 0
    for raw in items:
        path = Path(raw)
        if path.is_dir():
            found = battle_files(path)
            if not found:
                from .formats import battles_by_order

                known = "; ".join(r.summary for r in battles_by_order())
                msg = f"no battle files in this folder ({known}); give the files"
                raise DataError(msg, file=str(path))
        else:
            found = [path]
        for p in found:
            got, n_drop = _read_one(p)
            got["source"] = p.name
            frames.append(got)
            dropped += n_drop
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
    for column in ("question_id", "judge"):
        if column not in frame.columns:
            frame[column] = ""
        frame[column] = frame[column].fillna("").astype(str)
    front = ["model_a", "model_b", "winner", "question_id", "judge"]
    frame = frame[front + [c for c in frame.columns if c not in front]]
    frame.attrs["n_dropped"] = dropped
    return frame
