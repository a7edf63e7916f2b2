"""``python -m llm_power.cli.github_action``: the GitHub Action's entry point under its former name
(workflows that copied the ``run:`` line keep working); it lives in
:mod:`llm_power.integrations.github_action`.
"""

from __future__ import annotations

from ..integrations.github_action import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
