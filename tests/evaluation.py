"""The mode the tests evaluate PyTensor graphs in: each op's Python ``perform``.

PyTensor's ``FAST_COMPILE`` links every op that has C code through g++ (about
0.7 s per op new to the compile cache, and CI starts from an empty one), and
so does its constant folding. An op with an inner graph (softmax, logsumexp,
PyMC's simplex transform) compiles that graph with the ``vm`` linker, which
is C, whatever the outer linker: :data:`EVAL_MODE` inlines those graphs and
rewrites nothing else (the inlining is ``compiled_cache.inline_inner_graphs``'s,
made a rewrite of the mode: ``model.compile_logp`` takes a mode, not graphs).
These tests evaluate a graph a few times, where
NumPy's ``perform`` is fast enough and needs no compiler. The product's own
functions keep their modes; the tests of those modes (``test_sampling.py``'s
C objective, ``test_hoisted.py``) keep theirs.
"""

from __future__ import annotations

from pytensor.compile.builders import OpFromGraph
from pytensor.compile.mode import Mode, optdb
from pytensor.compile.rewriting import inline_ofg_node
from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
from pytensor.graph.rewriting.db import RewriteDatabaseQuery

_TAG = "bayes_compare_tests_inline_inner_graphs"


@node_rewriter([OpFromGraph])
def _inline(fgraph, node):
    return inline_ofg_node(node)


# In PyTensor's database under a tag of its own (only a mode that asks for it runs
# it), so that PyMC can add its rewrites to the mode's query.
if _TAG not in optdb:
    optdb.register(_TAG, dfs_rewriter(_inline), f"{_TAG}_tag", position=-0.02)

#: The Python linker with every inner graph inlined, no other rewrite (no g++, no numba).
EVAL_MODE = Mode(linker="py", optimizer=RewriteDatabaseQuery(include=[f"{_TAG}_tag"]))

#: For shapes: ``FAST_COMPILE``'s rewrites (its shape inference reads a random
#: variable's shape without drawing it), linked by the Python linker.
SHAPE_MODE = Mode(linker="py", optimizer="fast_compile")
