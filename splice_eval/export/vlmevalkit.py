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
# The release the files and patches are written for and tested against (the Makefile's VLMEVAL
# pin; PyPI's name of VLMEvalKit): the patches' context is its lines.
TARGET = "VLMEvalKit (ms-vlmeval) 0.0.20"
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


# Qwen2VLChat's transformers path (vlmeval/vlm/qwen2_vl/model.py) hands the processor the
# frames qwen-vl-utils sampled but not the rate it sampled them at, so the processor assumes
# its default and Qwen2.5-VL's time positions (`second_per_grid_ts`, 2 frames per temporal
# step) say every clip ran at 24 fps. The fix asks qwen-vl-utils for its video kwargs and each
# video's metadata, where transformers 5 reads the sampled fps (its processors refuse a list
# `fps`), and passes them on: a step then stands for 2 x seconds / frames of its clip, as the
# paper's runs had it. Upstream's lines (the patch's context) and the fix:
QWEN = "vlmeval/vlm/qwen2_vl/model.py"
QWEN_PATCH_FILE = "splice_vlmevalkit_qwen2_vl_fps.patch"
QWEN_AT = (
    484,
    ["            inputs = self.processor(text=text, images=images, audio=audios, videos=videos, "
     "padding=True, return_tensors='pt', use_audio_in_video=self.use_audio_in_video)  "
     "# noqa: E501", "        else:"],
    ["        inputs = inputs.to('cuda')", "",
     "        if listinstr(['omni'], self.model_path.lower()):"],
)  # fmt: skip
QWEN_REMOVED = [
    "            images, videos = process_vision_info([messages])",
    "            inputs = self.processor(text=text, images=images, videos=videos, padding=True, "
    "return_tensors='pt')  # noqa: E501",
]  # fmt: skip
QWEN_ADDED = [
    "            # each video with its metadata, where the processor reads the rate it was",
    "            # sampled at: Qwen2.5-VL's time positions (2 frames a step) follow the clip",
    "            images, videos, video_kwargs = process_vision_info([messages], "
    "return_video_kwargs=True, return_video_metadata=True)  # noqa: E501",
    "            video_metadata = None",
    "            if videos is not None:",
    "                videos, video_metadata = map(list, zip(*videos))",
    "            inputs = self.processor(text=text, images=images, videos=videos, "
    "video_metadata=video_metadata, padding=True, return_tensors='pt', **video_kwargs)  "
    "# noqa: E501",
]  # fmt: skip


def _hunk(at: tuple[int, list[str], list[str]], added: list[str], shift: int, removed=()) -> str:
    """One unified-diff hunk replacing upstream's ``removed`` lines (none: an insertion),
    which follow line ``at[0]``, by ``added``."""
    line, before, after = at
    start = line - len(before) + 1
    old = len(before) + len(removed) + len(after)
    new = len(before) + len(added) + len(after)
    head = f"@@ -{start},{old} +{start + shift},{new} @@\n"
    body = (
        [f" {x}" for x in before]
        + [f"-{x}" for x in removed]
        + [f"+{x}" for x in added]
        + [f" {x}" for x in after]
    )
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


def qwen_fps_patch() -> str:
    """The patch of ``Qwen2VLChat`` that passes qwen-vl-utils' sampled fps to the processor."""
    return f"diff --git a/{QWEN} b/{QWEN}\n--- a/{QWEN}\n+++ b/{QWEN}\n" + _hunk(
        QWEN_AT, QWEN_ADDED, 0, QWEN_REMOVED
    )


def exported_class() -> str:
    """The class module as VLMEvalKit's ``vlmeval/dataset/splice.py``: read now (so it
    carries whatever the product's class does), its project imports pointed at ``LIB``."""
    path = vendor.source_file(SOURCE_MODULE)
    where = relative_source(path)
    body = rewrite_imports(path.read_text(encoding="utf-8"), LIB, where)
    return header(where, COMMAND, TARGET) + body


def export_files(published: str) -> list[ExportedFile]:
    """Every file of the pull request by its path in VLMEvalKit's repository, and the
    patches of its own files (``PATCH_FILE``, ``QWEN_PATCH_FILE``), beside them."""
    from splice_eval.toolkits import vlmeval

    source = vendor.source_file(SOURCE_MODULE).read_text(encoding="utf-8")
    modules = vendored_modules(source, SOURCE_MODULE)
    files = [ExportedFile(DATASET_FILE, exported_class())]
    files += vendored_files(modules, LIB, LIB_FOLDER, COMMAND, TARGET)
    here = header(__name__.replace(".", "/") + ".py", COMMAND, TARGET)
    patch = register_patch(vlmeval.NAME, list(vlmeval.VARIANTS))
    files.append(ExportedFile(PATCH_FILE, here + patch))
    files.append(ExportedFile(QWEN_PATCH_FILE, here + qwen_fps_patch()))
    return files
