"""``splice run --backend transformers`` / ``vllm``: the paper's models run in this process.

Nothing here is imported unless one of those backends is asked for, and nothing imports
torch, transformers or vLLM at module level but the modules that run them
(``transformers_backend``, ``vllm_backend``, ``adapters``). ``families`` says which model
types each adapter serves and the paper's frame settings for them (Appendix A.2), and is
importable anywhere.
"""
