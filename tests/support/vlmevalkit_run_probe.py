"""Run VLMEvalKit's own ``run.main()`` (its ``python run.py``) with its REAL model classes on
tiny local checkpoints, in a venv WITHOUT this project (tests/splice_eval/export/
test_vlmevalkit.py): the exported SPLICE class is found in the vlmeval package on PYTHONPATH.

Used as ``<.venv-torch>/bin/python tests/support/vlmevalkit_run_probe.py CHECKPOINTS_JSON
--data NAME... --model NAME [run.py options...]``. The checkpoints become model names and the
GPU-only classes run on the CPU exactly as for ``splice vlmeval``
(tests/support/vlmeval_models_probe.py, on PYTHONPATH by its folder). One ``run.main()`` per
dataset, as ``splice vlmeval`` runs them: within one run a local model keeps the previous
variant's frame settings.
"""

from __future__ import annotations

import argparse
import json
import sys

if __name__ == "__main__":
    import vlmeval_models_probe as probe

    probe.on_the_cpu()
    probe.register(json.loads(sys.argv[1]))
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--data", nargs="+", required=True)
    known, rest = parser.parse_known_args(sys.argv[2:])
    from vlmeval import run

    for name in known.data:
        sys.argv = ["run.py", "--data", name, *rest]
        run.main()
