"""Scoring prediction files against a build: prediction files read as runs and scored
(``runs``: THE ``read_runs`` and ``score_run``, whatever the file's format), the question
formats' tables and pairwise consistency (``question_scores``), probe effects
(``probe_effects``), ``splice score`` (``score``) and ``splice baseline`` (``baselines``).
Reads prediction files and the build's text shards; never decodes a clip."""
