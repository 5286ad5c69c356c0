"""The one thing setup.cfg cannot say: which folders install under another import name.

Everything else (metadata, dependencies, package data) is in setup.cfg. The packages are
found from the folders, never listed by hand: a list once left out a package
(``splice_build.remote.release``), and every ``splice`` command of a wheel failed on it.
Folders holding only data (``build/data/coin``) are found as namespace packages, so their
files ship as package data and setuptools has no "absent from packages" warning to print.
"""

import warnings

from setuptools import find_namespace_packages, setup
from setuptools.warnings import InformationOnly

# `pip install -e .` (the editable install `make demo` makes): setuptools reports that it
# installed an import hook, as a warning since a build backend has no other channel
# (InformationOnly); pip then prints it as a BuildBackendWarning. Nothing is wrong, so the
# note is not shown; any real warning still is.
warnings.filterwarnings("ignore", message="Editable installation", category=InformationOnly)

# import name -> folder: build/ is splice_build (pypa's `build` owns the name `build`), and
# the lmms-eval task folder ships inside splice_eval (`splice lmms-tasks` prints its path).
RENAMED = {"splice_build": "build", "splice_eval.lmms_tasks": "lmms_eval_tasks/splice"}
# folders installed under their own name (the py_modules are in setup.cfg)
AS_IS = ("splice_eval", "splice_metric")
NOT_PACKAGES = ("*__pycache__*", "*.egg-info*")


def packages() -> list[str]:
    """Every package under each installed folder, data-only folders included."""
    found = [*RENAMED, *AS_IS]
    for name, folder in RENAMED.items():
        found += [f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=NOT_PACKAGES)]
    for name in AS_IS:
        found += [f"{name}.{sub}" for sub in find_namespace_packages(name, exclude=NOT_PACKAGES)]
    return sorted(set(found))


setup(packages=packages(), package_dir=RENAMED)
