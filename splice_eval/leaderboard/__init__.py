"""The SPLICE leaderboard (``splice leaderboard``): a board folder or Hub dataset repository
of submissions, each re-scored here with the board's metric, ranked with bootstrap intervals
and honest ties. ``table`` is what every view renders; ``web/`` is the page."""
