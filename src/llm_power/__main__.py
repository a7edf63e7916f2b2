"""``python -m llm_power`` runs the command-line interface."""

from .cli.main import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
