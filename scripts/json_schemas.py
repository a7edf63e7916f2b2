"""Record the SHA-256 of every shipped JSON Schema under its version (``llm_power/schemas/versions.json``).

Usage::

    .venv/bin/python scripts/json_schemas.py --record   # after a schema change and a version bump
    .venv/bin/python scripts/json_schemas.py --check    # exit 1 when a schema changed but its version did not

The hash is of canonical JSON (sorted keys, no spaces), so reformatting a file changes nothing. A version
once recorded is never rewritten: a changed schema needs a new ``SCHEMA_VERSION`` (in
``llm_power/report/schema.py``, and each schema's ``version`` and ``$id``), then ``--record``.
``tests/report/test_json_schema.py`` runs the same check.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "src" / "llm_power" / "schemas"
REGISTRY = SCHEMAS / "versions.json"


def canonical_sha256(path: Path) -> str:
    """SHA-256 of the file's JSON in canonical form."""
    text = json.dumps(json.loads(path.read_text(encoding="utf-8")), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hashes() -> dict[str, str]:
    """Schema file name -> its canonical SHA-256."""
    return {p.name: canonical_sha256(p) for p in sorted(SCHEMAS.glob("*.schema.json"))}


def version() -> str:
    """``SCHEMA_VERSION`` of the source tree."""
    sys.path.insert(0, str(ROOT / "src"))
    from llm_power.report.schema import SCHEMA_VERSION

    return SCHEMA_VERSION


def main(argv: list[str]) -> int:
    """``--record`` or ``--check``; returns the exit code."""
    current = version()
    registry = json.loads(REGISTRY.read_text(encoding="utf-8")) if REGISTRY.exists() else {"versions": {}}
    recorded = registry["versions"].get(current)
    now = hashes()
    if "--record" in argv:
        if recorded is not None and recorded != now:
            changed = sorted(set(recorded) ^ set(now) | {k for k in now if recorded.get(k) != now[k]})
            print(f"schema version {current} is recorded with other hashes ({', '.join(changed)} changed): bump "
                  "SCHEMA_VERSION first", file=sys.stderr)
            return 1
        registry["current"] = current
        registry["versions"][current] = now
        REGISTRY.write_text(json.dumps(registry, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(now)} schemas under version {current}", file=sys.stderr)
        return 0
    if recorded != now:
        print(f"the schemas differ from those recorded under version {current}: bump SCHEMA_VERSION and run "
              "scripts/json_schemas.py --record", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
