"""Write examples/passk_samples.csv: a simulated 30-question x 16-sample benchmark of a base and a
tuned checkpoint (long format: model, item, sample, score), used by the README's `llm-power passk`.

Each question has its own pass rate, drawn from Beta(0.6, 0.9); the tuned checkpoint adds 0.12 to
every question's rate. Simulated, so the truth is known: nothing here is a real model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "examples" / "passk_samples.csv"


def main() -> None:
    rng = np.random.default_rng(16)
    p = rng.beta(0.6, 0.9, 30)
    lines = ["model,item,sample,score"]
    for model, shift in (("base", 0.0), ("tuned", 0.12)):
        x = rng.random((30, 16)) < np.clip(p + shift, 0, 1)[:, None]
        lines += [f"{model},q{i:02d},{s + 1},{int(x[i, s])}" for i in range(30) for s in range(16)]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
