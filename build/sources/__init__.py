"""Source adapters: what a step-annotated source ships (a file or a release folder) in,
``records.VideoEntry`` records out. One module per source; `registry` maps names to them;
`rules` holds the rules every source obeys; `base` the records they share."""
