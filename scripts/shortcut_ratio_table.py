"""The table of docs/planning.md "The shortcut users get wrong": the shortcut's exact ratio n_h / N*
against Lemma 1's second-order expansion and the fourth-order one (:func:`llm_power.shortcut_ratio`)
on a grid of unequal accuracies. Usage::

    .venv/bin/python scripts/shortcut_ratio_table.py   # prints the Markdown table to paste

Each cell is "exact · 2nd order · 4th order" (4 decimals); p_A = p_B + gap; "—" where p_A would reach
1 or rho is outside the margins' admissible range.
"""

from __future__ import annotations

from llm_power import shortcut_ratio

P_B = (0.3, 0.5, 0.7, 0.85)
GAPS = (0.02, 0.05, 0.10, 0.20)
RHOS = (0.0, 0.3, 0.6)


def cell(p_a: float, p_b: float, rho: float) -> str:
    """One cell of the table: the exact ratio and the two approximations, or a dash."""
    if not p_a < 1:
        return "—"
    try:
        r = shortcut_ratio(p_a, p_b, rho=rho)
    except ValueError:
        return "—"
    return f"{r.ratio:.4f} · {r.second_order:.4f} · {r.fourth_order:.4f}"


def main() -> None:
    """Print the Markdown table."""
    print("| p_B | gap | " + " | ".join(f"ρ = {rho:g}" for rho in RHOS) + " |")
    print("| ---: | ---: | " + " | ".join("---:" for _ in RHOS) + " |")
    for p_b in P_B:
        for gap in GAPS:
            p_a = round(p_b + gap, 10)
            print(f"| {p_b:g} | {gap:.2f} | " + " | ".join(cell(p_a, p_b, rho) for rho in RHOS) + " |")


if __name__ == "__main__":
    main()
