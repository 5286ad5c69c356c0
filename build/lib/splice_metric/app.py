"""The metric's Hub Space: evaluate's standard Gradio widget around splice_metric.py."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# Loaded by path so the same file works in this repository and at the root of the Space.
module = evaluate.load(str(Path(__file__).with_name("splice_metric.py")))
launch_gradio_widget(module)
