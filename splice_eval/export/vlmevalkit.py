"""The files a VLMEvalKit pull request adds for SPLICE, generated from the product's class.

VLMEvalKit takes a benchmark as a dataset class in ``vlmeval/dataset/`` (a video benchmark:
a ``VideoBaseDataset`` subclass) that its ``__init__.py`` imports and lists, with its named
variants in ``video_dataset_config.py``. The product's class module
(``splice_eval/toolkits/vlmeval.py``) already is that class; it only imports the project. So
the export is that module, read now and its imports pointed at ``vlmeval/dataset/splice_lib/``
(the modules it runs, copied by ``vendor``), and a patch of VLMEvalKit's two registries
written from ``VARIANTS``: what ``vlmeval_command.register()`` does at run time. Nothing here
restates the class, a prompt, a parse or a metric.
"""

from __future__ import annotations

from splice_eval.export import vendor
from splice_eval.export.vendor import (
    ExportedFile,
    header,
    relative_source,
    rewrite_imports,
    vendored_files,
    vendored_modules,
)

COMMAND = "export-task vlmevalkit"
SOURCE_MODULE = "splice_eval.toolkits.vlmeval"
DATASET_FILE = "vlmeval/dataset/splice.py"
LIB_FOLDER = "vlmeval/dataset/splice_lib"
LIB = "vlmeval.dataset.splice_lib"  # an absolute package: VLMEvalKit installs vlmeval itself
PATCH_FILE = "splice_vlmevalkit_register.patch"  # applied with `git apply`, not a repo file

# Where the registrations go in ms-vlmeval 0.0.20 (the version this project pins): the line
# number after which to insert, and upstream's lines around it (the patch's context, so that
# `git apply` refuses another version instead of inserting in the wrong place).
INIT = "vlmeval/dataset/__init__.py"
CONFIG = "vlmeval/dataset/video_dataset_config.py"
INIT_IMPORT_AT = (
    132,
    ["from .spatial457 import Spatial457", "from .spatialvizbench import SpatialVizBench",
     "from .spbench import SPBench"],
    ["from .ssi_bench import SSIBenchDataset", "from .starebench import StareBench",
     "from .stibench import STIBench"],
)  # fmt: skip
INIT_LIST_AT = (
    327,
    ["", "# add by EASI team",
     "VIDEO_DATASET += [SiteBenchVideo, VsiBench, VsiSuperRecall, VsiSuperCount, "
     "MMSIVideoBench, STIBench, DSRBench]  # noqa: E501"],
    ["", "TEXT_DATASET = [",
     "    TextMCQDataset, SGI_Bench_Wet_Experiment, SGI_Bench_Dry_Experiment,"],
)  # fmt: skip
CONFIG_AT = (
    391,
    ["    sitebenchvideo_dataset, mmsi_video_dataset, vsisuper_recall_dataset, "
     "vsisuper_count_dataset,", "    sti_dataset, dsr_dataset", "]"],
    ["", "for grp in dataset_groups:", "    supported_video_datasets.update(grp)"],
)  # fmt: skip


def _hunk(at: tuple[int, list[str], list[str]], added: list[str], shift: int) -> str:
    """One unified-diff hunk inserting ``added`` after upstream line ``at[0]``."""
    line, before, after = at
    start = line - len(before) + 1
    old = len(before) + len(after)
    head = f"@@ -{start},{old} +{start + shift},{old + len(added)} @@\n"
    body = [f" {x}" for x in before] + [f"+{x}" for x in added] + [f" {x}" for x in after]
    return head + "\n".join(body) + "\n"


def register_patch(class_name: str, variants: list[str]) -> str:
    """The patch registering the class and its variants as VLMEvalKit's own modules do."""
    import_line = [f"from .splice import {class_name}"]
    list_line = [f"VIDEO_DATASET += [{class_name}]"]
    config = (
        ["", "# SPLICE (event-clip ordering): the paper's frame settings and the text setting"]
        + ["splice_dataset = {"]
        + [f"    '{name}': partial({class_name}, dataset='{name}')," for name in variants]
        + ["}", "dataset_groups += [splice_dataset]"]
    )
    return (
        f"diff --git a/{INIT} b/{INIT}\n--- a/{INIT}\n+++ b/{INIT}\n"
        + _hunk(INIT_IMPORT_AT, import_line, 0)
        + _hunk(INIT_LIST_AT, list_line, len(import_line))
        + f"diff --git a/{CONFIG} b/{CONFIG}\n--- a/{CONFIG}\n+++ b/{CONFIG}\n"
        + _hunk(CONFIG_AT, config, 0)
    )


def exported_class() -> str:
    """The class module as VLMEvalKit's ``vlmeval/dataset/splice.py``: read now (so it
    carries whatever the product's class does), its project imports pointed at ``LIB``."""
    path = vendor.source_file(SOURCE_MODULE)
    where = relative_source(path)
    body = rewrite_imports(path.read_text(encoding="utf-8"), LIB, where)
    return header(where, COMMAND) + body


def export_files(published: str) -> list[ExportedFile]:
    """Every file of the pull request by its path in VLMEvalKit's repository, and the patch
    of its registries (``PATCH_FILE``, beside them)."""
    from splice_eval.toolkits import vlmeval

    source = vendor.source_file(SOURCE_MODULE).read_text(encoding="utf-8")
    modules = vendored_modules(source, SOURCE_MODULE)
    files = [ExportedFile(DATASET_FILE, exported_class())]
    files += vendored_files(modules, LIB, LIB_FOLDER, COMMAND)
    patch = register_patch(vlmeval.NAME, list(vlmeval.VARIANTS))
    files.append(
        ExportedFile(PATCH_FILE, header(__name__.replace(".", "/") + ".py", COMMAND) + patch)
    )
    return files
