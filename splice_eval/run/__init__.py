"""Running a model on SPLICE: ``splice run``'s command line (``runner``), the
OpenAI-compatible client (``chat``, ``http_post``), the job loop (``jobs``), the paper's
prompts and frame sampling (``prompts``, ``sampling``), the shortcut probes and the frame
cache (``probes``, ``frame_cache``), the resumable prediction file (``resume``) and the
in-process backends (``local``). Only this layer decodes clips or talks to a model."""
