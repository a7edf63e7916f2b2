"""mkdocs hook: publish the JSON Schemas shipped in ``llm_power/schemas`` at their ``$id``
(``<site>/schemas/<version>/<command>.schema.json``), as docs/json-schema.md links them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parents[1] / "src" / "llm_power" / "schemas"


def on_post_build(config: Any, **_: Any) -> None:
    """Copy each schema (and the version registry) into the built site under its version."""
    site = Path(config["site_dir"])
    for path in sorted(SCHEMAS.glob("*.json")):
        if path.name == "versions.json":
            continue
        version = json.loads(path.read_text(encoding="utf-8"))["version"]
        target = site / "schemas" / version / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    shutil.copy2(SCHEMAS / "versions.json", site / "schemas" / "versions.json")
