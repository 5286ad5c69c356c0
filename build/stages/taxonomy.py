"""The COIN taxonomy (domain -> task -> steps), loaded from the CSVs shipped in the package.

Ingest, the card's statistics and the demo all need to know which domain a task belongs
to, which task a ``recipe_type`` names and which steps a task has. This module is the one
place that reads ``taxonomy/*.csv`` (see ``taxonomy/SOURCES.md`` for provenance and the
CC BY-NC 4.0 licence) and the one place that knows COIN's 2019 task-name aliases.

The CSVs are read through ``importlib.resources`` so that they are found the same way in a
source checkout, an editable install and a wheel.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

_PACKAGE = "splice_build"
_DIR = ("data", "taxonomy")
DOMAIN_CSV = "taxonomy_domain_target_mapping.csv"
STEP_CSV = "taxonomy_target_action_mapping.csv"

# COIN's 2019 release used three task names that the current taxonomy renamed
# (taxonomy/SOURCES.md); annotation files of either vintage must resolve to one name.
TASK_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "InstallIpadScreenProtector": "PasteScreenProtectorOnPad",
        "InstallBicycleRackToCar": "InstallBicycleRack",
        "MakeFrenchFried": "MakeFrenchFries",
    }
)


@dataclass(frozen=True)
class StepInfo:
    """One COIN step ("Action") of a task."""

    step_id: int
    label: str


@dataclass(frozen=True)
class TaskInfo:
    """One COIN task ("Target"), with its domain and its steps in the taxonomy's order."""

    name: str
    recipe_type: int
    domain: str
    steps: tuple[StepInfo, ...]

    def step_label(self, step_id: int) -> str | None:
        """The taxonomy label of a step of this task, or None if the step is not one of its."""
        for step in self.steps:
            if step.step_id == step_id:
                return step.label
        return None


@dataclass(frozen=True)
class Taxonomy:
    """The whole taxonomy, indexed the ways the pipeline looks things up."""

    tasks: Mapping[str, TaskInfo]  # current task name -> task
    by_recipe_type: Mapping[int, TaskInfo]
    steps: Mapping[int, tuple[str, StepInfo]]  # step id -> (task name, step); ids are global
    domains: tuple[str, ...]  # in the order of the domain sheet

    def resolve(self, name: str) -> str:
        """The current name of a task, mapping a 2019 alias to its new name."""
        return TASK_ALIASES.get(name, name)

    def task(self, name: str) -> TaskInfo:
        """A task by current or 2019 name; KeyError names the unknown task."""
        try:
            return self.tasks[self.resolve(name)]
        except KeyError:
            raise KeyError(f"unknown COIN task {name!r}") from None

    def domain_of(self, name: str) -> str:
        return self.task(name).domain

    def tasks_in(self, domain: str) -> tuple[TaskInfo, ...]:
        return tuple(t for t in self.tasks.values() if t.domain == domain)


def _read_csv(name: str) -> list[dict[str, str]]:
    text = resources.files(_PACKAGE).joinpath(*_DIR, name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@functools.cache
def load() -> Taxonomy:
    """The packaged taxonomy (parsed once per process).

    Raises ValueError, naming the CSV and row, if the two sheets disagree: a task without a
    domain, a domain row without steps, a step id used twice or a task with two ids.
    """
    domain_rows = _read_csv(DOMAIN_CSV)
    domain_of: dict[str, str] = {}
    domains: list[str] = []
    for line, row in enumerate(domain_rows, start=2):
        task, domain = row["Targets"].strip(), row["Domains"].strip()
        if task in domain_of:
            raise ValueError(f"{DOMAIN_CSV} line {line}: task {task!r} listed twice")
        domain_of[task] = domain
        if domain not in domains:
            domains.append(domain)

    ids: dict[str, int] = {}
    steps: dict[str, list[StepInfo]] = {}
    step_owner: dict[int, tuple[str, StepInfo]] = {}
    for line, row in enumerate(_read_csv(STEP_CSV), start=2):
        task, recipe_type = row["Target Label"].strip(), int(row["Target Id"])
        step = StepInfo(int(row["Action Id"]), row["Action Label"].strip())
        if ids.setdefault(task, recipe_type) != recipe_type:
            raise ValueError(f"{STEP_CSV} line {line}: task {task!r} has two Target Ids")
        if task not in domain_of:
            raise ValueError(f"{STEP_CSV} line {line}: task {task!r} has no domain")
        if step.step_id in step_owner:
            raise ValueError(f"{STEP_CSV} line {line}: Action Id {step.step_id} used twice")
        steps.setdefault(task, []).append(step)
        step_owner[step.step_id] = (task, step)
    missing = sorted(set(domain_of) - set(steps))
    if missing:
        raise ValueError(f"{DOMAIN_CSV}: tasks without steps in {STEP_CSV}: {missing}")
    if len(set(ids.values())) != len(ids):
        raise ValueError(f"{STEP_CSV}: a Target Id is shared by two tasks")

    tasks = {
        name: TaskInfo(name, ids[name], domain_of[name], tuple(steps[name]))
        for name in sorted(ids, key=ids.__getitem__)
    }
    return Taxonomy(
        tasks=MappingProxyType(tasks),
        by_recipe_type=MappingProxyType({t.recipe_type: t for t in tasks.values()}),
        steps=MappingProxyType(step_owner),
        domains=tuple(domains),
    )


__all__ = ["TASK_ALIASES", "StepInfo", "TaskInfo", "Taxonomy", "load"]
