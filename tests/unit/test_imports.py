"""The shape of kadmin's imports, read from the source with ast (imports inside functions
count too): no module imports itself back through others, and the balancing core
(kadmin.balance) reaches neither files nor ZooKeeper, Spark or the terminal."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import kadmin

ROOT = Path(kadmin.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imported(name: str, path: Path, known: Mapping[str, Path] = MODULES) -> Iterator[str]:
    """The dotted names ``name``'s source imports, anywhere in it (absolute or relative;
    ``from a import b`` names ``a.b`` where that is a module, else ``a``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield full if full in known else base


def _graph(modules: Mapping[str, Path] = MODULES) -> dict[str, set[str]]:
    """Module -> the kadmin modules it imports (the packages they sit in are left out: a
    package's ``__init__`` maps its modules and imports none of them)."""
    return {name: {m for m in _imported(name, path, modules) if m in modules and m != name}
            for name, path in modules.items()}


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    """The check can fail: a lazy import inside a function closes a circle it reports."""
    (tmp_path / "a.py").write_text("import kadmin.model\n\n\ndef f():\n    from kadmin import b\n")
    (tmp_path / "b.py").write_text("from kadmin.a import x\n")
    (tmp_path / "c.py").write_text("from kadmin import a\n")
    modules = {f"kadmin.{n}": tmp_path / f"{n}.py" for n in "abc"}
    assert _graph(modules) == {"kadmin.a": {"kadmin.b"}, "kadmin.b": {"kadmin.a"},
                               "kadmin.c": {"kadmin.a"}}
    assert _cycles(_graph(modules)) == [["kadmin.a", "kadmin.b"]]


FORBIDDEN_IN_CORE = ("kadmin.files", "kazoo", "pyspark", "typer", "rich", "click")


def test_the_balance_core_reads_no_file_and_imports_no_shell() -> None:
    """Everything kadmin.balance reaches, directly or through other kadmin modules."""
    graph = _graph()
    reached: set[str] = set()
    todo = [m for m in MODULES if m == "kadmin.balance" or m.startswith("kadmin.balance.")]
    while todo:
        module = todo.pop()
        if module in reached:
            continue
        reached.add(module)
        todo.extend(graph[module])
    assert "kadmin.balance.machine" in reached and "kadmin.model" in reached
    outside = {m for module in reached for m in _imported(module, MODULES[module])}
    bad = sorted(m for m in outside | reached
                 if any(m == f or m.startswith(f + ".") for f in FORBIDDEN_IN_CORE))
    assert bad == []


def test_the_balance_package_maps_every_module_once() -> None:
    """``kadmin/balance/__init__.py`` is the newcomer's map: a line for each module."""
    import re

    init = (ROOT / "balance" / "__init__.py").read_text()
    listed = re.findall(r"^- :mod:`\.(\w+)`", init, re.M)
    modules = {p.stem for p in (ROOT / "balance").glob("*.py")} - {"__init__"}
    assert sorted(listed) == sorted(modules)
