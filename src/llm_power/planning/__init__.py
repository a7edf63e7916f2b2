"""Planning an eval: paired and unpaired sample size, MDE, power (normal and exact), the designs
(2x2 cells from margins, admissible rho), the shortcut recipe, retrodesign (type S/M), power by
simulation, and what aggregate scores alone can say.

Each name is imported from its module on first use (``import llm_power.planning`` loads nothing else).
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._aggregates import PairedBoundsResult, aggregate_interval, paired_bounds
    from ._designs import cells_from_margins, discordance_from_baseline, margins_from_cells, rho_bounds
    from ._leaderboard import LeaderboardPlan, plan_leaderboard
    from ._mde import mde
    from ._retrodesign import TypeSMResult, type_s_m
    from ._shortcut import (
        ShortcutRatioResult,
        sample_size_shortcut,
        shortcut_constant,
        shortcut_prescreen,
        shortcut_ratio,
        shortcut_raw,
    )
    from ._simulation import (
        SIMULATION_TESTS,
        CalibrationResult,
        PowerSimulationResult,
        calibrate,
        simulate_pairs,
        simulated_power,
    )
    from ._sizes import (
        PAIRED_METHODS,
        UNPAIRED_METHODS,
        ceil_items,
        k_factor,
        mde_from_variance,
        n_star_from_variance,
        power,
        power_curve,
        sample_size,
        unrounded_sample_size,
    )

#: public name -> the module of this family that defines it
_LAZY = {
    "CalibrationResult": "._simulation",
    "LeaderboardPlan": "._leaderboard",
    "PAIRED_METHODS": "._sizes",
    "PairedBoundsResult": "._aggregates",
    "PowerSimulationResult": "._simulation",
    "SIMULATION_TESTS": "._simulation",
    "TypeSMResult": "._retrodesign",
    "UNPAIRED_METHODS": "._sizes",
    "aggregate_interval": "._aggregates",
    "calibrate": "._simulation",
    "ceil_items": "._sizes",
    "cells_from_margins": "._designs",
    "discordance_from_baseline": "._designs",
    "k_factor": "._sizes",
    "margins_from_cells": "._designs",
    "mde": "._mde",
    "mde_from_variance": "._sizes",
    "n_star_from_variance": "._sizes",
    "paired_bounds": "._aggregates",
    "plan_leaderboard": "._leaderboard",
    "power": "._sizes",
    "power_curve": "._sizes",
    "rho_bounds": "._designs",
    "sample_size": "._sizes",
    "sample_size_shortcut": "._shortcut",
    "shortcut_constant": "._shortcut",
    "shortcut_prescreen": "._shortcut",
    "shortcut_raw": "._shortcut",
    "shortcut_ratio": "._shortcut",
    "ShortcutRatioResult": "._shortcut",
    "simulate_pairs": "._simulation",
    "simulated_power": "._simulation",
    "type_s_m": "._retrodesign",
    "unrounded_sample_size": "._sizes",
}

__all__ = [
    "CalibrationResult",
    "LeaderboardPlan",
    "PAIRED_METHODS",
    "PairedBoundsResult",
    "PowerSimulationResult",
    "SIMULATION_TESTS",
    "ShortcutRatioResult",
    "TypeSMResult",
    "UNPAIRED_METHODS",
    "aggregate_interval",
    "calibrate",
    "ceil_items",
    "cells_from_margins",
    "discordance_from_baseline",
    "k_factor",
    "margins_from_cells",
    "mde",
    "mde_from_variance",
    "n_star_from_variance",
    "paired_bounds",
    "plan_leaderboard",
    "power",
    "power_curve",
    "rho_bounds",
    "sample_size",
    "sample_size_shortcut",
    "shortcut_constant",
    "shortcut_prescreen",
    "shortcut_ratio",
    "shortcut_raw",
    "simulate_pairs",
    "simulated_power",
    "type_s_m",
    "unrounded_sample_size",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
