"""The human ordering protocol: ``splice annotate`` (``annotate``: export packages of
renamed clips, ingest the filled sheets as a prediction file), the sheet format
(``sheets``), captions burned into the picture (``burn``) and the annotation page served
in a browser (``app``)."""
