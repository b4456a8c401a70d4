"""The package's layering, computed from the source (docs/architecture.md).

Every import of every module of ``src/qwirkle_core`` is read from its syntax tree,
imports inside functions and under ``TYPE_CHECKING`` included. The test fails on:

- an import cycle among the package's modules;
- an import from a lower layer to a higher one (the layers are listed below; a new
  module must be given a layer here);
- the use of another module's private name: ``from .x import _name``, ``mod._name``
  for an imported module ``mod``, or ``obj._name`` where ``_name`` is not defined in the
  module that uses it (so ``game._board`` outside game.py fails).

Run ``python tests/test_layers.py`` to print the import graph, layer by layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "qwirkle_core"
SRC = Path(__file__).resolve().parent.parent / "src" / PACKAGE

# The layers are the package's folders, lowest first (docs/architecture.md). A module
# belongs to the layer of its folder and may import modules of its own layer or of a
# lower one; a module directly in the package folder belongs to "base"; a new folder
# must be given a layer here.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kernels", ("_kernels",)),
    ("base", ("",)),
    ("game", ("game",)),
    ("built on Game", ("evaluation", "batch")),
    ("interfaces", ("cli", "env", "server")),
    ("package", (PACKAGE,)),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def folder_of(name: str) -> str:
    """The folder of a module below the package: ``qwirkle_core.game.move`` -> ``game``;
    ``""`` for a module directly in the package folder; the package itself is its own."""
    if name == PACKAGE:
        return PACKAGE
    path = SRC.joinpath(*name.split(".")[1:])
    return name.split(".")[1] if path.is_dir() or len(name.split(".")) > 2 else ""


def layer_of(name: str) -> int:
    folder = folder_of(name)
    for rank, (_, folders) in enumerate(LAYERS):
        if folder in folders:
            return rank
    raise AssertionError(
        f"folder {folder}/ of {name} has no layer: add it to LAYERS in tests/test_layers.py (and docs/architecture.md)"
    )


def test_every_folder_has_a_layer() -> None:
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    listed = {f for _, fs in LAYERS for f in fs}
    assert folders <= listed, f"folders without a layer: {sorted(folders - listed)}"
    assert listed - {"", PACKAGE} <= folders, f"layers name missing folders: {sorted(listed - {'', PACKAGE} - folders)}"


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (before its imported names)."""
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Module:
    """What one module imports and which private names it uses."""

    def __init__(self, name: str, path: Path, known: set[str]) -> None:
        self.name = name
        self.tree = ast.parse(path.read_text(), filename=str(path))
        self.is_package = path.name == "__init__.py"
        self.imports: set[str] = set()
        self.aliases: dict[str, str] = {}  # local name -> imported package module
        self.problems: list[str] = []
        self._read_imports(known)
        self._check_private()

    def _read_imports(self, known: set[str]) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        self.imports.add(alias.name)
                        self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(self.name, self.is_package, node)
                if base.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in known:  # a submodule
                        self.imports.add(full)
                        self.aliases[alias.asname or alias.name] = full
                    else:
                        self.imports.add(base)
                        if _private(alias.name):
                            self.problems.append(
                                f"{self.name}:{node.lineno} imports the private name {alias.name} of {base}"
                            )

    def _check_private(self) -> None:
        defined = _defined_names(self.tree)
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in self.aliases:
                self.problems.append(
                    f"{self.name}:{node.lineno} uses {self.aliases[base.id]}.{node.attr}, a private name of another module"
                )
            elif node.attr not in defined:
                self.problems.append(f"{self.name}:{node.lineno} uses .{node.attr}, a private name it does not define")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_names(tree: ast.Module) -> set[str]:
    """Every name a module defines: functions, classes, assignments and attributes it
    assigns (``self._x = ...``, ``obj._x = ...``), class fields and ``__slots__``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        names.add(sub.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "getattr")
            and len(node.args) >= 2
        ):
            if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                names.add(node.args[1].value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)  # names listed in __slots__ or given to object.__setattr__
    return names


def analyse() -> tuple[dict[str, set[str]], list[str]]:
    """The import graph {module: imported package modules} and every problem found."""
    found = modules()
    known = set(found)
    graph: dict[str, set[str]] = {}
    problems: list[str] = []
    for name, path in found.items():
        m = _Module(name, path, known)
        graph[name] = {i for i in m.imports if i in known and i != name}
        problems.extend(m.problems)
    for name, deps in graph.items():
        for dep in sorted(deps):
            if layer_of(dep) > layer_of(name):
                problems.append(
                    f"{name} ({LAYERS[layer_of(name)][0]}) imports {dep} from a higher layer ({LAYERS[layer_of(dep)][0]})"
                )
    problems.extend(f"import cycle: {' -> '.join(cycle)}" for cycle in _cycles(graph))
    return graph, problems


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component) + [sorted(component)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer() -> None:
    for name in modules():
        layer_of(name)


def test_imports_flow_downward_without_cycles_or_private_names() -> None:
    _, problems = analyse()
    assert not problems, "\n".join(problems)


def test_the_checker_sees_a_cycle_a_lazy_import_and_a_private_name(tmp_path: Path) -> None:
    """The checks themselves can fail: on a planted cycle made of a lazy import and on
    a use of another module's private attribute."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert _cycles(graph) == [["a", "b", "a"]]
    code = "def f(g):\n    from .game import Game\n    return g._board\n"
    path = tmp_path / "probe.py"
    path.write_text(code)
    m = _Module("qwirkle_core.game.records", path, set(modules()))
    assert "qwirkle_core.game.game" in m.imports
    assert any("_board" in p for p in m.problems)


def test_the_library_below_the_interfaces_imports_neither_rich_nor_argparse() -> None:
    interfaces = next(rank for rank, (layer, _) in enumerate(LAYERS) if layer == "interfaces")
    for name, path in modules().items():
        if layer_of(name) >= interfaces:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            roots = (
                [a.name.split(".")[0] for a in node.names]
                if isinstance(node, ast.Import)
                else [(node.module or "").split(".")[0]]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            assert not {"rich", "argparse"} & set(roots), (
                f"{name} imports {roots}: interface code belongs to the cli/ folder"
            )


if __name__ == "__main__":
    g, found_problems = analyse()
    for rank, (layer, _) in enumerate(LAYERS):
        print(f"[{layer}]")
        for mod in sorted(m for m in g if layer_of(m) == rank):
            print(f"  {mod} -> {', '.join(sorted(d.removeprefix('qwirkle_core.') for d in g[mod])) or '-'}")
    print("\n".join(found_problems) or "no problems")
