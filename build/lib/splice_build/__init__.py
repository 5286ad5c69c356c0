"""The SPLICE build pipeline (installed as ``splice_build``).

Stages, one module each, data flowing one way with a typed record between them
(see ``records.py``)::

    ingest -> select -> probe -> cut -> shuffle -> write -> card -> validate

``pipeline.py`` runs them (local processes or Ray), ``cli.py`` is the ``splice`` command.
"""
