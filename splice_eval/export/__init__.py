"""SPLICE inside the toolkits themselves: the files a pull request to lmms-eval or VLMEvalKit
adds, generated from the product (``splice export-task``), never a second copy kept by hand."""
