"""``splice export-task``'s options as a user meets them: the dataset the export names
(``--dataset``, never the docs' placeholder), the toolkit release each export targets, and
``--out``/``--check`` on what is not an export (a file, a missing folder, a user's own file),
each answered in one line through the real dispatcher."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from splice_build.cli import main as splice_main
from splice_eval.export import lmms_eval, vlmevalkit
from tests.support.one_line_errors import assert_one_line, splice_without
from tests.support.paths import REPO

DATASET = "splice-lab/splice"


def export(toolkit: str, out, *extra: str) -> list[str]:
    return ["export-task", toolkit, "--out", str(out), *extra]


@pytest.mark.parametrize("toolkit", ["lmms-eval", "vlmevalkit"])
def test_the_export_names_the_dataset_given_and_never_a_placeholder(toolkit, tmp_path):
    # no --dataset: nothing records where the build was published, so no default
    for extra, words in (
        ((), ("--dataset NAME/ID", "ORG/splice")),
        (("--dataset", "ORG/splice"), ("--dataset ORG/splice", "placeholder")),
        (("--dataset", "ORG/my-splice"), ("--dataset ORG/my-splice", "placeholder")),
        (("--dataset", "splice"), ("--dataset 'splice'", "NAME/ID")),
    ):
        done = splice_without(None, export(toolkit, tmp_path / "refused", *extra), tmp_path)
        assert_one_line(done, *words)
        assert not (tmp_path / "refused").exists()
    out = tmp_path / "out"
    assert splice_main(export(toolkit, out, "--dataset", DATASET)) == 0
    texts = {p: p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()}
    assert not [p for p, t in texts.items() if re.search(r"ORG/splice", t)]
    lib = lmms_eval.TASK_FOLDER + "/splice_task_lib" if toolkit == "lmms-eval" else None
    lib = lib or vlmevalkit.LIB_FOLDER
    schema = (out / lib / "splice_dataset.py").read_text(encoding="utf-8")
    assert f'PUBLISHED_ID = "{DATASET}"' in schema
    if toolkit == "lmms-eval":
        readme = (out / lmms_eval.TASK_FOLDER / "README.md").read_text(encoding="utf-8")
        assert f"loaded from the Hub as `{DATASET}`" in readme
    assert splice_main(export(toolkit, out, "--dataset", DATASET, "--check")) == 0


def test_the_exported_vlmevalkit_class_loads_the_published_dataset_without_a_build(tmp_path):
    """VLMEvalKit's other datasets download themselves: with no $SPLICE_DATA and no
    ./splice-data, the exported class reads the dataset the export names (the product's
    class, which names no published dataset, still asks for a build)."""
    out = tmp_path / "out"
    assert splice_main(export("vlmevalkit", out, "--dataset", DATASET)) == 0
    code = "from vlmeval.dataset.splice import data_source; print(data_source())"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(out), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )  # vlmeval and vlmeval.dataset: namespace packages of the export's folders
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == DATASET
    product_code = code.replace("vlmeval.dataset.splice", "splice_eval.toolkits.vlmeval")
    product = subprocess.run(
        [sys.executable, "-c", product_code],
        capture_output=True, text=True, cwd=tmp_path,
        env={**env, "PYTHONPATH": ":".join(sys.path)},
    )  # fmt: skip
    assert product.returncode != 0 and "./splice-data" in product.stderr


def test_each_export_and_its_help_name_the_toolkit_release_it_targets(tmp_path):
    done = splice_without(None, ["export-task", "--help"], tmp_path)
    assert done.returncode == 0
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for module, pin in ((lmms_eval, "LMMS_EVAL"), (vlmevalkit, "VLMEVAL")):
        version = re.search(rf"^{pin} := \S+==(\S+)$", makefile, re.M).group(1)
        assert module.TARGET.endswith(version), (module.TARGET, version)  # the tested pin
        assert module.TARGET in " ".join(done.stdout.split())
    for toolkit, module in (("lmms-eval", lmms_eval), ("vlmevalkit", vlmevalkit)):
        out = tmp_path / toolkit
        assert splice_main(export(toolkit, out, "--dataset", DATASET)) == 0
        for path in (p for p in out.rglob("*") if p.is_file()):
            assert f"for {module.TARGET}" in path.read_text(encoding="utf-8").splitlines()[0]


def test_out_a_file_is_one_line(tmp_path):
    """Issue 47 §7: ``--out`` a file, or a path through one, is one line, no traceback."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    for out in (a_file, a_file / "deeper"):
        done = splice_without(None, export("lmms-eval", out, "--dataset", DATASET), tmp_path)
        assert_one_line(done, f"--out {out}", "is a file, not a folder")
    assert a_file.read_text() == "mine\n"


def test_check_on_a_missing_folder_says_the_folder_is_missing(tmp_path):
    missing = tmp_path / "no-checkout"
    done = splice_without(
        None, export("vlmevalkit", missing, "--dataset", DATASET, "--check"), tmp_path
    )
    assert_one_line(done, f"--out {missing}", "no such folder")
    assert "stale" not in done.stderr


def test_check_names_a_users_own_file_as_not_part_of_the_export(tmp_path):
    """Issue 47 §7: a file of the user's in the export's folder is no stale export file (a
    rerun never clears it): it is named as a file the export does not write."""
    out = tmp_path / "checkout"
    assert splice_main(export("lmms-eval", out, "--dataset", DATASET)) == 0
    own = out / lmms_eval.TASK_FOLDER / "my_notes.py"
    own.write_text("# mine\n")
    for _ in range(2):  # the rerun the message once asked for changes nothing
        done = splice_without(
            None, export("lmms-eval", out, "--dataset", DATASET, "--check"), tmp_path
        )
        assert_one_line(done, str(own), "is not part of the export")
        assert "stale" not in done.stderr
        assert splice_main(export("lmms-eval", out, "--dataset", DATASET)) == 0
    assert own.read_text() == "# mine\n"  # never removed unasked
