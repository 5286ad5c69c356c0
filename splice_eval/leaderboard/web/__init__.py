"""The leaderboard's web page (Gradio's own components) and its hosting: ``serve`` (a local
server), ``space`` (a Hugging Face Space folder reading the board from a dataset repo) and
``push`` (a board uploaded to a dataset repo). The page renders ``table.board_rows`` with
``columns`` and nothing else, so it says what ``show`` and ``export`` say."""
