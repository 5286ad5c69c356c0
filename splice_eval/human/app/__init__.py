"""The human protocol in a browser: ``splice annotate serve`` and ``annotate space``.

An export's packages served by a Gradio app, one annotator at a time per session: the
shuffled clips of a folder side by side, a position per clip or "unknown", saved on every
submit into that annotator's sheet in the format ``annotate ingest`` reads. The app reads
only the package folders (never the organiser's ``key.json``), so the page cannot show
what it does not know. ``layout``: the package's file names (shared with ``export``);
``package``: a package folder read as tasks; ``store``: the answers file; ``app``: the
page; ``space``: a Space folder; ``cli``: the two subcommands.
"""
