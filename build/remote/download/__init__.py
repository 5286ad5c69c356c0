"""``splice download``: fetch the source videos of a build with yt-dlp.

COIN ships only YouTube URLs, and years later many are gone, so the download is a stage of
its own with its own report: every video the build will select (the very same selection,
`select.select_annotations`) ends as downloaded, already present, unavailable (the source
says so; never retried) or failed (transient errors on every attempt, retried with
backoff). yt-dlp is used as a library (``yt_dlp.YoutubeDL``): its YouTube extractor for the
default URLs and its generic extractor for a mirror's direct URLs (``--url-template``).

Files appear in the output folder only when finished and probing whole: yt-dlp works in
``<out>/.splice-download/<id>/`` (hidden, so the build's source index never enters it),
where a cut-off download's ``.part`` stays to be resumed by the next attempt or run. What
it made and no longer needs is removed; nothing else is. A broken earlier copy of a video
is renamed ``<name>.broken`` (not deleted) once a good one is in place.

One module per job, in the order a run uses them: ``settings`` (the options as a record,
checked before any work), ``formats`` (which format to fetch), ``classify`` (what an error
means: retry or give up), ``fetch`` (one video, start to finish) and ``command`` (the
subcommand: arguments, the pool of fetchers, the report, the exit status).
"""
