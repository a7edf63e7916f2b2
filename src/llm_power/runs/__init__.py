"""Runs as a factor of their own: seeds, prompt templates, serving engines and judge reruns shift
every item of a model at once, so their variance does not shrink with more items.

- :func:`run_variance` -- item, run and item x run components of each score and gap;
- :func:`plan_runs` -- the runs (at the current items) and the cost-optimal (items, runs) for a gap;
- :func:`noise` -- flaky items, signal-to-noise and template sensitivity;
- the run regime of :func:`llm_power.diagnose` (``runs=``) goes through the same kernel
  (:mod:`llm_power._kernel.crossed`, :func:`llm_power._kernel.verdict.run_verdict`).

Each name is imported from its module on first use.
"""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_names

if TYPE_CHECKING:
    from ._noise import NoiseReport, noise
    from ._plan import RunPlanResult, plan_runs
    from ._variance import RunVarianceResult, as_run_scores, run_variance

_LAZY = {
    "NoiseReport": "._noise",
    "RunPlanResult": "._plan",
    "RunVarianceResult": "._variance",
    "as_run_scores": "._variance",
    "noise": "._noise",
    "plan_runs": "._plan",
    "run_variance": "._variance",
}

__all__ = ["NoiseReport", "RunPlanResult", "RunVarianceResult", "as_run_scores", "noise", "plan_runs", "run_variance"]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
