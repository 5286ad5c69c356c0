"""``splice import-release``: the authors' own clips (the Hub release
``prokajevo/splice-benchmark``) as a leak-free SPLICE build.

The release is the only public trace of the paper's 3,381 curated videos: loose clips named
by their chronological position, so the answer is in every file name. One file per job:

- `fetch`: the release's folder, local or fetched from the Hub (the only network call);
- `scan`: its files grouped by video, a video's parts taken as steps 1..n or not at all;
- `convert`: one video's parts into clips, remuxed or re-encoded (the workers' function);
- `tables`: the card's text on the release and the paper's Tables 1 and 6;
- `command`: the whole import on the build's executors and tail, and its command line.

Nothing is imported here, so a worker that unpickles `convert.import_one` loads only what
converting needs.
"""
