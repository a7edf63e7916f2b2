"""The public API is pinned (the layering -- what may import what -- is tests/test_layering.py, derived from the tree)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import llm_power

SRC = Path(llm_power.__file__).resolve().parent


def test_the_public_list_is_written_once():
    """Each package's ``_LAZY`` table is its list of public names: its ``__all__`` and its
    ``TYPE_CHECKING`` imports are generated from it (scripts/api.py) and must be up to date."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "api.py"
    out = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert llm_power.__all__ == sorted(llm_power.__all__)


def test_every_public_name_is_its_familys_and_in_the_reference():
    """A top-level name is exported by the family it is loaded from, and the documentation reference
    has it twice: a ``::: llm_power.NAME`` section and a link in the index table (and nothing more)."""
    import importlib
    import re
    from pathlib import Path

    public = set(llm_power.__all__) - {"__version__"}
    for name, module in llm_power._LAZY.items():  # noqa: SLF001
        family = importlib.import_module(module, "llm_power")
        assert name in getattr(family, "__all__", dir(family)), (name, module)
    reference = Path(__file__).resolve().parents[1] / "docs" / "reference"
    sections: set[str] = set()
    for page in reference.glob("*.md"):
        sections |= set(re.findall(r"^::: llm_power\.([A-Za-z_]\w*)\s*$", page.read_text("utf-8"), re.M))
    index = set(re.findall(r"\[llm_power\.([A-Za-z_]\w*)\]", (reference / "index.md").read_text("utf-8")))
    assert sections - {"errors"} == public, (sorted(public - sections), sorted(sections - public))
    assert index == public, (sorted(public - index), sorted(index - public))

def test_spec_signatures():
    import inspect

    sig = inspect.signature(llm_power.proportion_ci)
    assert list(sig.parameters)[:2] == ["k", "n"]
    assert sig.parameters["method"].default == "wilson"
    assert sig.parameters["confidence_level"].default == 0.95
    assert sig.parameters["alternative"].default == "two-sided"
    assert all(sig.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY
               for p in ("method", "confidence_level", "alternative"))
    cov = inspect.signature(llm_power.coverage)
    assert cov.parameters["method"].default is inspect.Parameter.empty
    assert inspect.signature(llm_power.rule_of_three).parameters["confidence_level"].default == 0.95


def test_confidence_interval_is_a_namedtuple():
    ci = llm_power.proportion_ci(17, 20)
    assert ci._fields == ("low", "high")
    lo, hi = ci
    assert (lo, hi) == (ci.low, ci.high)


def test_importing_the_package_loads_no_heavy_optional_modules():
    code = "import sys, llm_power; print(sorted(m for m in ('pandas','rich','matplotlib','jinja2','statsmodels') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_py_typed_marker_is_shipped():
    assert (SRC / "py.typed").exists()


def test_renamed_results_keep_their_old_names_one_release():
    import warnings

    import pytest

    for old, new in llm_power._RENAMED.items():
        assert new.endswith("Result") and new in llm_power.__all__ and old not in llm_power.__all__
        with pytest.warns(DeprecationWarning, match=f"renamed `{new}`"):
            assert getattr(llm_power, old) is getattr(llm_power, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            llm_power.NoSuchThing  # noqa: B018
