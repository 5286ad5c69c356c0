"""``splice report``: the scored runs as a Markdown report (``report``), its PNG figures
(``figures``), and the paper's published rows set beside them (``paper``, ``paper_rows``).
Built on ``scoring``; knows nothing of how the runs were produced."""
