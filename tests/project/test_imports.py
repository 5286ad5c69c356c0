"""The project's import graph: no cycles, and no private name used across modules.

A cycle means two modules can only be read (and changed) together, and a private name used
from another module is an interface nobody promised. Both crept in once (``card`` took
``publish._human`` while ``publish`` imported ``validate`` inside a function because
``validate`` imported ``card``), so this walks every import statement of the product code
with ``ast`` -- at module level and inside functions alike, since a lazy import is still a
dependency -- and fails on either.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

# import name -> folder or file, as setup.py installs them (build/ is splice_build, the
# lmms-eval task folder is splice_eval.lmms_tasks)
ROOTS = {
    "splice_build": REPO / "build",
    "splice_eval": REPO / "splice_eval",
    "splice_eval.lmms_tasks": REPO / "lmms_eval_tasks" / "splice",
    "splice_metric": REPO / "splice_metric",
    "splice_dataset": REPO / "splice_dataset.py",
    "splice_formats": REPO / "splice_formats.py",
}


def _modules() -> dict[str, Path]:
    found = {}
    for name, path in ROOTS.items():
        if path.is_file():
            found[name] = path
            continue
        for file in sorted(path.rglob("*.py")):
            parts = file.relative_to(path).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((name, *parts))] = file
    return found


MODULES = _modules()


def _package_of(module: str) -> str:
    is_package = MODULES[module].name == "__init__.py"
    return module if is_package else module.rpartition(".")[0]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _project(name: str) -> str | None:
    """The project module that ``import name`` loads last (a package's module, or itself)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[str, str, int]]:
    """(imported project module, name taken from it or "", line) for every import."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _project(alias.name)
                if target:
                    found.append((target, "", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:
                    found.append((submodule, "", node.lineno))
                elif _project(source):
                    found.append((_project(source), alias.name, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _name, _line in _imports(module):
            # a package's own __init__ importing from inside it is no cycle to untangle
            if target != module and not target.startswith(module + "."):
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or round a loop: the strongly
    connected components of more than one module (each found by a forward and a backward
    reachability search, plenty for a graph of a hundred modules)."""

    def reach(start: str, edges: dict[str, set[str]]) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reverse: dict[str, set[str]] = {}
    for node, targets in graph.items():
        for target in targets:
            reverse.setdefault(target, set()).add(node)
    components, placed = [], set()
    for node in sorted(graph):
        if node not in placed:
            component = reach(node, graph) & reach(node, reverse)
            placed |= component
            if len(component) > 1:
                components.append(sorted(component))
    return components


def test_the_walker_sees_the_project():
    assert "splice_build.cli" in MODULES and "splice_dataset" in MODULES
    graph = _graph()
    assert "splice_build.errors" in graph["splice_build.cli"]
    # and it would see a cycle: a two-module loop is one component
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_private_name_imported_across_modules():
    offenders = [
        f"{MODULES[module].relative_to(REPO)}:{line} takes {name} from {target}"
        for module in MODULES
        for target, name, line in _imports(module)
        if _is_private(name) and target != module
    ]
    assert not offenders, "\n".join(offenders)


def _bound_modules(module: str, tree: ast.AST) -> dict[str, str]:
    """Local name -> project module, for every ``import x as y`` / ``from p import m``."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound.update(
                (alias.asname, _project(alias.name))
                for alias in node.names
                if alias.asname and _project(alias.name)
            )
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            bound.update(
                (alias.asname or alias.name, f"{source}.{alias.name}")
                for alias in node.names
                if f"{source}.{alias.name}" in MODULES
            )
    return bound


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_attribute_of_another_project_module():
    """``module._name`` on an imported project module is the same leak as importing it."""
    offenders = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = _bound_modules(module, tree)
        offenders += [
            f"{path.relative_to(REPO)}:{node.lineno} uses {node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and bound.get(node.value.id, module) != module
            and _is_private(node.attr)
        ]
    assert not offenders, "\n".join(offenders)


# Modules that read files (prediction files, a build's Parquet, the frame cache) or answers,
# and build prompts, and must stay cheap to import: none may load `datasets` (over a second).
LIGHT_MODULES = (
    "splice_eval.predictions",
    "splice_eval.builddata",
    "splice_eval.run.frame_cache",
    "splice_metric",  # its readers of answers; the metric module loads on first use
    "splice_eval.run.prompts",
)


def _imports_of(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """``python -X importtime *args`` run as a user would, and every module it imported (the
    last column of the report on its stderr)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, cwd=REPO
    )
    return run, {line.split("|")[-1].strip() for line in run.stderr.splitlines() if "|" in line}


@pytest.mark.parametrize("module", LIGHT_MODULES)
def test_reading_predictions_does_not_import_datasets(module):
    """Import costs follow the layers: ``splice score`` and the report read prediction files
    often, and importing ``datasets`` costs over a second. It crept in once through
    ``predictions`` -> ``probes`` -> ``sampling``, so this runs the import as a user would."""
    run, imported = _imports_of("-c", f"import {module}")
    assert run.returncode == 0, run.stderr[-2000:]
    assert module in imported  # the report lists what was imported
    assert not {name for name in imported if name.split(".")[0] == "datasets"}


# What ``splice --help`` must not load: the dispatcher imports a subcommand's module only
# once it knows which runs (`cli.SUBCOMMANDS`), and these cost from 0.1 s (av) to over a
# second (datasets, which evaluate imports).
HEAVY = ("av", "datasets", "evaluate")


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_the_dispatcher_alone_imports_no_heavy_module(argv):
    """Issue 31, wall 3: ``splice --help`` (and a bare ``splice``, or ``--version``) is
    answered from the command table alone, as the ``splice`` script runs it."""
    run, imported = _imports_of("-m", "splice_build.cli", *argv)
    assert run.returncode == (0 if argv else 2), run.stderr[-2000:]
    assert "splice_build.errors" in imported  # the report lists what was imported
    assert not {name for name in imported if name.split(".")[0] in HEAVY}


# splice_eval/ by role: each folder a role, the top level what every role shares.
ROLES = ("run", "toolkits", "scoring", "report", "human", "leaderboard", "export")
# what a role's modules never import: scoring reads prediction files whoever wrote them,
# the report is built on scoring alone (the human run is a prediction file like any other,
# its model name `predictions.HUMAN_MODEL`), and nothing shared depends on a role above it
# The leaderboard sits above scoring and the report (it scores with the one scorer and
# shows the paper's rows); nothing below it imports it.
NEVER_IMPORTS = {
    "scoring": ("report", "human", "toolkits", "leaderboard"),
    "report": ("run", "human", "toolkits", "leaderboard"),
    "human": ("scoring", "report", "toolkits", "leaderboard"),
    "leaderboard": ("human", "toolkits"),
    "top": ("scoring", "report", "human", "toolkits", "leaderboard"),
}


def _role(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "splice_eval" or len(parts) < 2 or parts[1] == "lmms_tasks":
        return None
    return parts[1] if parts[1] in ROLES else "top"


def test_splice_eval_roles_import_down_only():
    graph = _graph()
    offenders = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if _role(target) in NEVER_IMPORTS.get(_role(module) or "", ())
    ]
    assert not offenders, "\n".join(sorted(offenders))
    # and the rule sees a breach: the report importing the human protocol
    assert _role("splice_eval.human.annotate") in NEVER_IMPORTS["report"]


def test_no_splice_eval_folder_over_twelve_modules():
    folders: dict[Path, int] = {}
    for file in (REPO / "splice_eval").rglob("*.py"):
        if file.name != "__init__.py":
            folders[file.parent] = folders.get(file.parent, 0) + 1
    assert folders[REPO / "splice_eval" / "run"] >= 9  # the walk sees the folders
    crowded = {str(f.relative_to(REPO)): n for f, n in folders.items() if n > 12}
    assert not crowded, crowded
