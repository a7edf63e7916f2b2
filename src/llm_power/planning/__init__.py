"""Planning an eval: paired and unpaired sample size, MDE, power (normal and exact), the designs
(2x2 cells from margins, admissible rho), the shortcut recipe, retrodesign (type S/M), power by
simulation, and what aggregate scores alone can say.
"""

from ._aggregates import (
    PairedBoundsResult,
    aggregate_interval,
    paired_bounds,
)
from ._designs import (
    cells_from_margins,
    discordance_from_baseline,
    margins_from_cells,
    rho_bounds,
)
from ._retrodesign import (
    TypeSMResult,
    type_s_m,
)
from ._shortcut import (
    sample_size_shortcut,
    shortcut_constant,
    shortcut_prescreen,
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
    mde,
    mde_from_variance,
    n_star_from_variance,
    power,
    power_curve,
    sample_size,
    unrounded_sample_size,
)

__all__ = [
    "CalibrationResult",
    "PAIRED_METHODS",
    "PairedBoundsResult",
    "PowerSimulationResult",
    "SIMULATION_TESTS",
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
    "power",
    "power_curve",
    "rho_bounds",
    "sample_size",
    "sample_size_shortcut",
    "shortcut_constant",
    "shortcut_prescreen",
    "shortcut_raw",
    "simulate_pairs",
    "simulated_power",
    "type_s_m",
    "unrounded_sample_size",
]
