"""The package as a user installs it: a wheel in a fresh venv, far from any checkout.

The editable install of `make demo` hides every packaging mistake (the checkout is on the
path), and one hid that `splice_build.remote.release` was missing from the hand-written
package list: every `splice` command of a wheel failed. So this builds the sdist and the
wheel from a copy of the checkout's files with pypa's `build` (`python -P -m build`, as
docs/installing.md says; the wheel is built from the sdist, so the sdist is proven complete too),
installs the wheel into a venv made in an empty temporary folder, and runs from there
(working folder outside the clone, no PYTHONPATH): every subcommand's `--help`, `splice
demo`, the metric through `evaluate.load`, `splice import-release` on the release fixture of
tests/build/remote/test_release.py, and the lmms-eval task from the installed task folder.
One venv per test session; the builds and installs are the slow part and are shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from splice_build.cli import SUBCOMMANDS, subcommand_parser
from splice_dataset import DEFAULT_BUILD_DIR
from tests.support.paths import REPO
from tests.support.release_folder import IMPORTED, make_release
from tests.support.side_venvs import torch_python

# import name -> checkout folder, as setup.py maps them
INSTALLED_FOLDERS = {
    "splice_build": REPO / "build",
    "splice_eval": REPO / "splice_eval",
    "splice_eval/lmms_tasks": REPO / "lmms_eval_tasks" / "splice",
    "splice_metric": REPO / "splice_metric",
}
TOP_LEVEL = ("splice_build", "splice_eval", "splice_metric", "splice_dataset", "splice_formats")
WARNING = re.compile(r"warning", re.I)


@dataclass(frozen=True)
class Installed:
    """The wheel and sdist built, and the venv the wheel is installed in."""

    wheel: Path
    sdist: Path
    venv: Path
    build_log: str
    home: Path  # the empty temporary folder the commands run in

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def user_env(caches: Path) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH (nothing of the checkout), no hub,
    caches of this test only. PYTHONDONTWRITEBYTECODE (set on some machines) is dropped: it
    only makes setuptools say that it skips byte-compiling."""
    drop = {"PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "SPLICE_DATA"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {
        **env,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(caches / "hf-datasets"),
        "SPLICE_CLIP_CACHE": str(caches / "clips"),
        "SPLICE_FRAME_CACHE": str(caches / "frames"),
    }


def run(command: list[str], cwd: Path, timeout: float = 900, **env: str) -> str:
    """Run a command in ``cwd`` as a user would (caches beside ``cwd``); its output
    (stdout + stderr) once it exited 0."""
    proc = subprocess.run(
        command,
        cwd=cwd,
        env={**user_env(cwd.parent / "caches"), **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(command)} exited {proc.returncode}:\n{output[-4000:]}"
    return output


def tracked_copy(dest: Path) -> Path:
    """The checkout's files (tracked or new, never ignored ones such as venvs or builds):
    what a clone holds, so the build cannot lean on a file only this machine has."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listing.split("\0")):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return dest


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    home = root / "home"
    home.mkdir()
    source = tracked_copy(root / "source")
    dist = root / "dist"
    # -P: the source folder is the working folder, and its build/ is not pypa's build
    log = run([sys.executable, "-P", "-m", "build", "--outdir", str(dist), "."], source)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", str(venv)], home)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], home)
    return Installed(wheel, sdist, venv, log, home)


# --- the package ----------------------------------------------------------------------------


def expected_files() -> set[str]:
    """Every file the wheel must hold, by its installed path: each installed folder's files
    (modules and package data alike), and the two top-level modules."""
    files = {"splice_dataset.py", "splice_formats.py"}
    for installed_as, folder in INSTALLED_FOLDERS.items():
        listing = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        files |= {f"{installed_as}/{name}" for name in listing if (folder / name).is_file()}
    return files


def test_the_wheel_holds_every_module_and_data_file(installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        held = {n for n in wheel.namelist() if ".dist-info/" not in n}
    expected = expected_files()
    assert "splice_build/remote/release/command.py" in expected  # the module once left out
    assert "splice_eval/lmms_tasks/_default_template_yaml" in expected
    assert expected <= held, sorted(expected - held)
    assert not [n for n in held if "__pycache__" in n or n.startswith("build/")]


def test_the_sdist_holds_the_sources_and_building_prints_no_warning(installed):
    import tarfile

    with tarfile.open(installed.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for needed in ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "LICENSE"):
        assert needed in names
    assert "build/remote/release/command.py" in names
    assert "lmms_eval_tasks/splice/splice.yaml" in names
    # the ~190 lines of "Package 'splice_build.data.coin' is absent..." are gone
    warned = [line for line in installed.build_log.splitlines() if WARNING.search(line)]
    assert warned == [], warned


def test_pip_wheel_and_the_editable_install_print_no_warning(installed, tmp_path):
    """`pip wheel .` (docs/installing.md's way) and `pip install -e .` (make demo's) on a
    clean copy."""
    source = tracked_copy(tmp_path / "source")
    pip = [installed.bin("python"), "-m", "pip"]
    out = run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), "."], source)
    assert [line for line in out.splitlines() if WARNING.search(line)] == []
    venv = tmp_path / "editable"
    run([sys.executable, "-m", "venv", str(venv)], installed.home)
    out = run([str(venv / "bin" / "pip"), "install", "--no-deps", "-e", "."], source)
    assert [line for line in out.splitlines() if WARNING.search(line)] == []


# --- the commands, from the venv ------------------------------------------------------------


def command_lines() -> list[list[str]]:
    """Every subcommand, and each nested one (``annotate export``), as the parsers have them."""
    lines = []
    for name in sorted(SUBCOMMANDS):
        lines.append([name])
        parser, _ = subcommand_parser(name)
        for action in parser._actions:  # argparse exposes nested parsers only this way
            if isinstance(action, argparse._SubParsersAction):
                lines += [[name, sub] for sub in action.choices]
    return lines


def test_every_subcommand_help_runs_from_the_wheel(installed):
    lines = command_lines()
    assert ["annotate", "export"] in lines and ["import-release"] in lines
    out = run([installed.bin("splice"), "--help"], installed.home)
    assert all(name in out for name in SUBCOMMANDS)
    assert run([installed.bin("splice"), "--version"], installed.home).strip() == "splice 0.1.0"
    for line in lines:
        out = run([installed.bin("splice"), *line, "--help"], installed.home)
        assert out.startswith(f"usage: splice {' '.join(line)}"), out[:400]


def test_the_installed_modules_are_the_wheels(installed):
    code = "import importlib, json; print(json.dumps([importlib.import_module(m).__file__ "
    code += f"for m in {list(TOP_LEVEL)!r}]))"
    files = json.loads(run([installed.bin("python"), "-c", code], installed.home))
    site = installed.venv.resolve()
    assert all(Path(f).resolve().is_relative_to(site) for f in files), files


@pytest.fixture(scope="session")
def wheel_demo(installed: Installed) -> tuple[Path, str]:
    """`splice demo` with its defaults, in the empty folder: (its build, its output)."""
    out = run([installed.bin("splice"), "demo", "--workers", "2"], installed.home, timeout=1800)
    return installed.home / DEFAULT_BUILD_DIR, out


def test_splice_demo_builds_loads_and_scores_from_the_wheel(wheel_demo):
    build, out = wheel_demo
    assert (build / "build_report.json").is_file() and (build / "README.md").is_file()
    assert not (build.parent / "splice").exists()  # the old default, lmms-eval's group name
    assert "Random answers for 24 videos" in out
    assert re.search(r"^binary_accuracy +\d\.\d{4}", out, re.M), out[-2000:]
    assert "invalid_rate: 0.000" in out


def test_the_metric_loads_with_evaluate_from_the_wheel(installed):
    code = (
        "import json, evaluate, splice_metric\n"
        "m = evaluate.load(splice_metric.path())\n"
        "r = m.compute(predictions=[[1, 2, 3], [2, 1]], references=[[1, 2, 3], [1, 2]])\n"
        "print(json.dumps({'path': splice_metric.path(), 'binary': r['binary_accuracy'],"
        " 'invalid': r['invalid_rate']}))\n"
    )
    result = json.loads(run([installed.bin("python"), "-c", code], installed.home).splitlines()[-1])
    assert Path(result["path"]).resolve().is_relative_to(installed.venv.resolve())
    assert result["binary"] == 0.5 and result["invalid"] == 0.0


def test_import_release_runs_from_the_wheel(installed, tmp_path):
    release = make_release(tmp_path / "splice-benchmark")
    out = installed.home / "splice-release"
    command = [installed.bin("splice"), "import-release", str(release), "--out", str(out)]
    run([*command, "--workers", "2"], installed.home, timeout=1800)
    report = json.loads((out / "build_report.json").read_text("utf-8"))
    included = {v["video_id"] for v in report["videos"] if v["status"] == "included"}
    assert included == IMPORTED


# --- lmms-eval, on the installed task folder ---------------------------------------------------


def test_lmms_eval_runs_the_installed_task_folder(installed, wheel_demo, tmp_path):
    """lmms-eval (.venv-torch: it pins PyAV < 16 and needs torch; this project is not
    installed there) with the task folder
    `splice lmms-tasks` prints from the wheel's venv, the wheel's modules importable (and
    nothing of the checkout), run in the folder `splice demo` wrote ./splice-data into, with
    no SPLICE_DATA: the installed task finds the demo's build there by default."""
    lmms = torch_python("lmms_eval")
    folder = Path(run([installed.bin("splice"), "lmms-tasks"], installed.home).strip())
    assert folder.resolve().is_relative_to(installed.venv.resolve())
    assert (folder / "splice.yaml").is_file() and (folder / "utils.py").is_file()
    # the wheel's five top-level names, and nothing else of its venv, on lmms-eval's path
    shim = tmp_path / "wheel-modules"
    shim.mkdir()
    site = folder.parents[1]
    for name in TOP_LEVEL:
        entry = site / name if (site / name).is_dir() else site / f"{name}.py"
        (shim / entry.name).symlink_to(entry)
    code = f"import importlib; print([importlib.import_module(m).__file__ for m in {TOP_LEVEL}])"
    seen = run([str(lmms), "-c", code], installed.home, PYTHONPATH=str(shim))
    assert str(REPO) not in seen and seen.count(str(shim)) == len(TOP_LEVEL), seen
    out = tmp_path / "out"
    command = [str(lmms.parent / "lmms-eval"), "eval", "--model", "dummy", "--tasks", "splice"]
    command += ["--include_path", str(folder), "--limit", "3", "--output_path", str(out)]
    command += ["--model_args", "response=Video 2 -> Video 1"]
    log = run(command, installed.home, timeout=1800, PYTHONPATH=str(shim))
    assert "Traceback" not in log, log[-4000:]
    (results_file,) = out.rglob("*_results.json")
    results = json.loads(results_file.read_text("utf-8"))
    build = str(wheel_demo[0].resolve())
    for task in ("splice_video", "splice_video_text", "splice_text"):
        assert results["configs"][task]["dataset_path"] == build
    assert "binary_accuracy,none" in results["results"]["splice"]
