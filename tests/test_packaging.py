"""The sdist and wheel are what PyPI and users get: built, checked, installed and run.

The working tree (committed or not) is copied to a temporary directory and built there, so the
repository gets no build/, dist/ or egg-info. The wheel is then installed into a fresh venv (its
dependencies come from the configured package index) and `llm-power demo` is run from an empty
directory, so the test sees only what the wheel ships.
"""

from __future__ import annotations

import configparser
import email
import email.message
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Not copied: at the top level, the venv, git and outputs of earlier builds; anywhere, caches.
_TOP_LEVEL_SKIP = {".venv", ".git", "build", "dist", "site", "report.html"}
_ANYWHERE_SKIP = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "*.egg-info",
                  "*.pyc")


@dataclass(frozen=True)
class Built:
    """The copied source tree and the sdist and wheel built from it."""

    source: Path
    sdist: Path
    wheel: Path

    @property
    def version(self) -> str:
        # PEP 427: {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl
        return self.wheel.name.split("-")[1]

    @property
    def dist_info(self) -> str:
        return f"{self.wheel.name.split('-')[0]}-{self.version}.dist-info"


def _ignore(directory: str, names: list[str]) -> set[str]:
    skipped = {n for n in names if any(fnmatch.fnmatch(n, pat) for pat in _ANYWHERE_SKIP)}
    if Path(directory).resolve() == ROOT:
        skipped |= _TOP_LEVEL_SKIP.intersection(names)
    return skipped


def _run(cmd: list[str | Path], *, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH would let the fresh venv import the repository's source instead of the wheel
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _output(res: subprocess.CompletedProcess[str]) -> str:
    return f"exit {res.returncode}\n--- stdout ---\n{res.stdout[-4000:]}\n--- stderr ---\n{res.stderr[-4000:]}"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Sdist and wheel built from a copy of the working tree (once per module and xdist worker)."""
    pytest.importorskip("build", reason="build is not installed (pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("packaging")
    source, out = tmp / "source", tmp / "dist"
    shutil.copytree(ROOT, source, ignore=_ignore)
    res = _run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out], cwd=source)
    assert res.returncode == 0, _output(res)
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in out.iterdir())
    return Built(source=source, sdist=sdists[0], wheel=wheels[0])


def _wheel_names(built: Built) -> set[str]:
    with zipfile.ZipFile(built.wheel) as zf:
        return set(zf.namelist())


def _wheel_text(built: Built, name: str) -> str:
    with zipfile.ZipFile(built.wheel) as zf:
        return zf.read(name).decode("utf-8")


def _metadata(built: Built) -> email.message.Message:
    return email.message_from_string(_wheel_text(built, f"{built.dist_info}/METADATA"))


def _long_description(built: Built) -> str:
    body = _metadata(built).get_payload()  # core metadata 2.1+: the description is the message body
    assert isinstance(body, str), type(body)
    return body


# --- build and twine -----------------------------------------------------------------------------------------


def test_twine_check_strict_passes(built: Built) -> None:
    pytest.importorskip("twine", reason="twine is not installed (pip install -e '.[test]')")
    res = _run([sys.executable, "-m", "twine", "check", "--strict", built.sdist, built.wheel], cwd=built.source)
    assert res.returncode == 0, _output(res)


# --- what the wheel ships --------------------------------------------------------------------------------------


def test_wheel_ships_license_marker_data_and_templates(built: Built) -> None:
    names = _wheel_names(built)
    pkg = built.source / "src" / "llm_power"
    expected = {f"{built.dist_info}/licenses/LICENSE", "llm_power/py.typed", "llm_power/data/README.md"}
    data = sorted(pkg.glob("data/*.csv.gz"))
    templates = sorted(pkg.glob("report/templates/*"))
    schemas = sorted(pkg.glob("schemas/*.json"))  # every command's JSON Schema and their version registry
    assert data and templates and schemas, "the source tree has no bundled data, report templates or JSON schemas"
    expected |= {p.relative_to(pkg.parent).as_posix() for p in [*data, *templates, *schemas]}
    assert not expected - names, f"missing from {built.wheel.name}: {sorted(expected - names)}"
    assert _wheel_text(built, f"{built.dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_wheel_holds_only_the_package(built: Built) -> None:
    top = {name.split("/")[0] for name in _wheel_names(built)}
    assert top == {"llm_power", built.dist_info}, sorted(top)


def test_wheel_declares_the_console_script(built: Built) -> None:
    entry_points = configparser.ConfigParser()
    entry_points.read_string(_wheel_text(built, f"{built.dist_info}/entry_points.txt"))
    assert entry_points.has_option("console_scripts", "llm-power"), entry_points.sections()
    module = entry_points.get("console_scripts", "llm-power").split(":")[0]
    assert f"{module.replace('.', '/')}.py" in _wheel_names(built)


def test_wheel_metadata_has_urls_license_and_markdown_readme(built: Built) -> None:
    meta = _metadata(built)
    assert meta["Version"] == built.version
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert (meta["Description-Content-Type"] or "").startswith("text/markdown"), meta["Description-Content-Type"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls), urls
    assert all(u.startswith("https://") for u in urls.values()), urls
    assert _long_description(built).strip() == (ROOT / "README.md").read_text(encoding="utf-8").strip()


def _long_description_links(markdown: str) -> list[str]:
    # markdown-it (a dependency of rich) parses as CommonMark, as PyPI's renderer does (plus GFM
    # extensions whose autolinks are absolute anyway); links in code are not links, raw HTML is scanned
    from markdown_it import MarkdownIt

    targets: list[str] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        for tok in [token, *(token.children or [])]:
            if tok.type == "link_open":
                targets.append(str(tok.attrs["href"]))
            elif tok.type == "image":
                targets.append(str(tok.attrs["src"]))
            elif tok.type in {"html_block", "html_inline"}:
                targets += re.findall(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""", tok.content, re.I)
    return targets


def test_long_description_links_are_absolute(built: Built) -> None:
    # On PyPI a relative link (docs/x.md, an image, even #anchor) resolves against pypi.org and breaks
    links = _long_description_links(_long_description(built))
    assert links, "no links found in the long description: the parser is broken"
    relative = [link for link in links if not link.startswith("https://")]
    assert not relative, f"{len(relative)} links in README.md are not absolute https:// URLs: {relative}"


# --- the sdist ----------------------------------------------------------------------------------------------------


def test_sdist_is_complete_for_building(built: Built) -> None:
    with tarfile.open(built.sdist) as tf:
        root = tf.getnames()[0].split("/")[0]
        names = {n.removeprefix(f"{root}/") for n in tf.getnames()}
    wheel_pkg = {f"src/{n}" for n in _wheel_names(built) if n.startswith("llm_power/")}
    needed = {"PKG-INFO", "pyproject.toml", "README.md", "LICENSE"} | wheel_pkg
    assert not needed - names, f"missing from {built.sdist.name}: {sorted(needed - names)}"
    # Either the whole test suite or none of it: test files without their conftest cannot pass
    shipped_tests = {n for n in names if n.startswith("tests/")}
    assert not shipped_tests or "tests/conftest.py" in shipped_tests, sorted(shipped_tests)


# --- installed from the wheel into a fresh venv ---------------------------------------------------------------------


@pytest.mark.slow  # a fresh venv and every dependency from the package index: ~100 s, most of it pip
def test_wheel_installs_and_demo_runs(built: Built, tmp_path: Path) -> None:
    venv, workdir = tmp_path / "venv", tmp_path / "work"
    workdir.mkdir()
    res = _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    assert res.returncode == 0, _output(res)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    res = _run([python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", built.wheel],
               cwd=tmp_path)
    assert res.returncode == 0, _output(res)

    res = _run([python, "-c", "import llm_power; print(llm_power.__version__); print(llm_power.__file__)"],
               cwd=workdir)
    assert res.returncode == 0, _output(res)
    version, location = res.stdout.split()
    assert version == built.version
    assert Path(location).resolve().is_relative_to(venv.resolve()), location  # the wheel, not the repository

    script = bindir / ("llm-power.exe" if os.name == "nt" else "llm-power")
    res = _run([script, "demo"], cwd=workdir)
    assert res.returncode == 0, _output(res)
    report = workdir / "report.html"
    assert report.is_file(), sorted(p.name for p in workdir.iterdir())
    assert "MMLU-Pro" in report.read_text(encoding="utf-8")
    res = _run([python, "-c", "import llm_power; print(llm_power.json_schema('demo')['version'])"], cwd=workdir)
    assert res.returncode == 0 and res.stdout.strip(), _output(res)  # the schemas are read from the installed wheel
