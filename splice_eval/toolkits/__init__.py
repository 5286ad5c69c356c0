"""SPLICE inside peer evaluation toolkits: the lmms-eval task folder's location
(``lmms_folder``, ``splice lmms-tasks``) and VLMEvalKit's dataset class (``vlmeval``,
``splice vlmeval``). Each writes our prediction format and scores it as ``splice score``
does, so the numbers a toolkit prints are ours."""
