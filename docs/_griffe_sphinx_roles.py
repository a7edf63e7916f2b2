"""Griffe extension for the documentation site: Sphinx roles in docstrings become links.

The docstrings of llm-power are numpydoc and refer to other objects with Sphinx roles
(``:func:`proportion_ci```, ``:class:`~llm_power.DataError```). mkdocstrings renders Markdown,
where a role would show up literally. This extension (loaded from ``mkdocs.yml``, never imported
by the package) rewrites each role, before the docstring is parsed, into

- a Markdown cross-reference ``[`name`][llm_power.name]`` when the target is documented on the
  API reference pages (the public names of ``llm_power`` and ``llm_power.io`` and their members),
  so ``mkdocs build --strict`` checks the link;
- plain code ``` `name` ``` otherwise (private helpers, built-ins such as ``ValueError``).

The source files are not changed.
"""

from __future__ import annotations

import re
from typing import Any

try:  # mkdocstrings installs griffe; pytest's doctest collection may import this file without it
    from griffe import Extension
except ImportError:  # pragma: no cover
    Extension = object  # type: ignore[assignment,misc]

__all__ = ["SphinxRoles", "rewrite_roles", "rewrite_rst"]

#: ``:role:`target``` or ``:role:`title <target>```
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):`(?P<body>[^`]+)`")
_MATH = re.compile(r":math:`(?P<tex>[^`]+)`")
_CITATION = re.compile(r"^(?P<indent>[ \t]*)\.\. \[(?P<label>[^\]]+)\][ \t]+", re.MULTILINE)
_LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)
#: the modules whose public names (``__all__``) are documented on the reference pages
_DOCUMENTED_MODULES = ("llm_power", "llm_power.io")


def _public_names(pkg: Any, module_path: str) -> set[str]:
    """``__all__`` of a loaded griffe module, as a set (empty when it cannot be read)."""
    try:
        module = pkg if module_path == pkg.path else pkg.get_member(module_path.split(".", 1)[1])
        names = module.exports
    except (KeyError, AttributeError):  # pragma: no cover - the layout changed; fall back to code spans
        return set()
    return {str(name) for name in names or ()}


def _member_names(pkg: Any, module_path: str, name: str) -> set[str]:
    """Public member names of the object ``module_path.name`` (a class's methods and fields)."""
    try:
        module = pkg if module_path == pkg.path else pkg.get_member(module_path.split(".", 1)[1])
        obj = module.get_member(name)
        # only members that are rendered: public and with a docstring (show_if_no_docstring: false)
        return {key for key, member in obj.all_members.items() if not key.startswith("_") and member.docstring}
    except (KeyError, AttributeError, ValueError):
        return set()
    except Exception as error:  # noqa: BLE001 - griffe raises its own alias-resolution errors
        if type(error).__name__ in {"AliasResolutionError", "CyclicAliasError"}:
            return set()
        raise


class _Targets:
    """Which identifiers the reference pages document, and how a role's target maps to one."""

    def __init__(self, pkg: Any) -> None:
        self.public: dict[str, str] = {}  # bare name -> documented identifier
        self.members: dict[str, set[str]] = {}  # documented identifier -> its public members
        for module_path in _DOCUMENTED_MODULES:
            for name in sorted(_public_names(pkg, module_path)):
                if name.startswith("_") or not name[0].isalpha():
                    continue
                ident = f"{module_path}.{name}"
                self.public.setdefault(name, ident)
                self.members[ident] = _member_names(pkg, module_path, name)

    def resolve(self, target: str, context: list[str]) -> str | None:
        """The documented identifier for ``target`` seen from the objects in ``context``, or None."""
        target = target.lstrip(".")
        if target in self.members:  # already a documented path: llm_power.compare
            return target
        short = target.removeprefix("llm_power.")
        if short in self.public:
            return self.public[short]
        head, _, tail = short.rpartition(".")
        if head in self.public:  # Class.method
            ident = self.public[head]
            if tail in self.members.get(ident, ()):
                return f"{ident}.{tail}"
        for name in context:  # :meth:`update` inside SequentialMonitor's docstrings
            ident = self.public.get(name)
            if ident and target in self.members.get(ident, ()):
                return f"{ident}.{target}"
        return None


def rewrite_roles(text: str, resolve: Any, context: list[str]) -> str:
    """Replace every Sphinx role in ``text`` by a cross-reference or a code span.

    Parameters
    ----------
    text : str
        A docstring.
    resolve : callable
        ``resolve(target, context)`` returns the documented identifier or None.
    context : list of str
        Names of the enclosing objects (innermost first), for bare method names.

    Returns
    -------
    str
        The docstring with Markdown cross-references.

    Examples
    --------
    >>> table = {"proportion_ci": "llm_power.proportion_ci"}
    >>> rewrite_roles("See :func:`proportion_ci` and :class:`ValueError`.", lambda t, c: table.get(t), [])
    'See [`proportion_ci`][llm_power.proportion_ci] and `ValueError`.'
    >>> rewrite_roles(":class:`~llm_power.DataError`", lambda t, c: None, [])
    '`DataError`'
    """

    def replace(match: re.Match[str]) -> str:
        body = match.group("body").strip()
        explicit = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", body)
        if explicit:
            title, target = explicit.group("title"), explicit.group("target")
        else:
            target = body.lstrip("!")
            title = target[1:].rsplit(".", 1)[-1] if target.startswith("~") else target
        target = target.lstrip("~")
        title = title.removesuffix("()")
        ident = resolve(target.removesuffix("()"), context)
        return f"[`{title}`][{ident}]" if ident else f"`{title}`"

    return _ROLE.sub(replace, text)


def rewrite_rst(text: str) -> str:
    """Turn the reStructuredText left in a numpydoc docstring into Markdown.

    ``:math:`x``` becomes a code span (the site loads no math renderer: nothing is fetched),
    ``.. [1] ref`` a list item, and a paragraph ending in ``::`` (before a literal block) ends in
    ``:``.

    Examples
    --------
    >>> rewrite_rst("so :math:`z = d / s`::")
    'so `z = d / s`:'
    >>> rewrite_rst(".. [1] Koehn, P. (2004). EMNLP.")
    '- [1] Koehn, P. (2004). EMNLP.'
    """
    text = _MATH.sub(lambda m: f"`{m.group('tex')}`", text)
    text = _CITATION.sub(lambda m: f"{m.group('indent')}- [{m.group('label')}] ", text)
    return _LITERAL.sub(":", text)


class SphinxRoles(Extension):  # type: ignore[misc,valid-type]
    """Rewrite Sphinx roles in every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:  # noqa: ARG002 - griffe's hook signature
        """Rewrite the docstrings of ``pkg`` (griffe calls this after loading a package)."""
        if pkg.path != "llm_power":
            return
        targets = _Targets(pkg)
        self._walk(pkg, targets, [], set())

    def _walk(self, obj: Any, targets: _Targets, context: list[str], seen: set[str]) -> None:
        if obj.is_alias or obj.path in seen:
            return
        seen.add(obj.path)
        here = [obj.name, *context]
        if obj.docstring is not None:
            text = rewrite_roles(obj.docstring.value, targets.resolve, here)
            obj.docstring.value = rewrite_rst(text)
        for member in list(obj.members.values()):
            self._walk(member, targets, here, seen)
