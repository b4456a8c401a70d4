"""Numba kernels. Private: the public API in :mod:`qwirkle_core` validates input and wraps these.

Every kernel is ``@njit(cache=True)`` over plain numpy arrays and scalars. Set the
environment variable ``QWIRKLE_NO_CACHE=1`` to compile without the on-disk cache.

Modules, each importing only those above it:

``_jit``      how kernels are compiled (and when the disk cache is dropped)
``layout``    the named fields of every array, the agent parameter table, the named tuples
``rng``       per-game random streams
``board``     the board arrays: cells, cross-check masks, anchors, placing and taking back
``scoring``   checking and scoring one placement
``movegen``   every legal placement of a hand, with its score
``state``     the game flow: bag, hands, scores, turns, exchanges, passes, the end
``actions``   the game state tuple and its action word: list, write and apply an action
``leaves``    leaves (the tiles kept): canonical classes, ranks, the learned table's cells
``policies``  random, greedy, heuristic and static choices; the heuristic's reply search
``mc``        determinization, playouts, move evaluation, the Monte Carlo agent
``endgame``   the exact two-player endgame solver
``search``    the search agent: the solver's moves in the endgame, a Monte Carlo search before
``agents``    one turn of any agent (the dispatch on the agent id) and the agents' scratch
``cubes``     Qwirkle Cubes: the bag of colours, rolls, re-rolls, every agent's turn, playouts, its batch kernel
``batch``     many complete games, one row of results per game (a kernel per agent set); the leave learning's self-play
``vector``    the batched RL environment: N games stepped one action each, observations and masks

Compile time and speed (figures in docs/architecture.md, "Performance"):

- A call from Python compiles the kernel and everything it calls into one library
  (cached on disk); an argument that is a constant in the caller (``step(c, d, 1)``)
  is a literal type to numba, and each literal value compiles another specialisation.
  So: no default arguments on kernels (an omitted argument is one more), loop-carried
  counters start as ``np.int64(0)``, a constant passed where other call sites pass a
  variable is wrapped (``np.int64(0)``, ``np.bool_(False)``; a read-only global table's
  row is copied), and a batch runs only the kernel its agents need. A literal True or
  False never prunes code (numba types both branches; numba 0.68 prunes a branch on
  an argument only by its being None): a flag that must keep a callee out of a kernel
  is None there (``policies.play_turns``' ``heuristic``: ``heuristic is not None and
  heuristic``).
- Every kernel's library links in its callees' and numba optimises and generates
  machine code for the whole linked module again at each level, so a deep chain of
  thin wrappers costs a re-compile of everything below each of them: thin wrappers on
  the batch kernels' paths are ``inline="always"`` (``agents.search_agent_turn``,
  ``search._endgame``, ``search.rank_candidates``, ``policies.heuristic_values``,
  ``batch._start``); large or shared ones are not (numba types an inlined body at
  every call site). ``_jit.keep`` is an intrinsic (no kernel of its own).
- The two largest callees, the endgame solver and the search's playouts, are not linked
  at all: the search calls them through a pointer (``_jit.External``, ``search.SOLVE``
  and ``search.PLAYOUT``), so a kernel that plays the search agent compiles without
  them, at the same time as they do (in worker processes), and the Python
  layer binds them (``search.bind_search``: loaded from the cache or compiled) before
  such a kernel runs. A call before that raises RuntimeError. The search's rankings
  are called the same way (``search.RANK_LEARNED``, bound with the playouts; and,
  bound only for a search that uses them, ``search.RANK_NET`` and
  ``search.RANK_HEURISTIC`` with the playouts' heuristic policy
  ``policies.HEURISTIC_FILL``: ``search.bind_rank_net``, ``search.bind_heuristic``),
  so the default search compiles neither the net nor the heuristic's ranking.
- Cold-start figures, the warmup and the cache's reuse: docs/cold-start.md.
- Reference counts: numba counts the references of the arrays a call passes, with
  atomic operations where it cannot prove them balanced. The hot loops pass arrays one
  by one (not the state tuple), and their callees end in one exit that still uses
  their arrays (:func:`._jit.keep`), which lets numba drop the pairs in a kernel that
  calls no other (non-inlined) kernel. One that does keeps a pair for every array
  argument (numba 0.68: the branch that passes a callee's error on carries no
  decrefs, and its pruning then keeps them all), so the per-turn kernels of the
  playouts and the solver's search loop and placements are compiled without numba's runtime
  (``njit(_nrt=False)``: no counts at all). Such a kernel must not allocate, copy a
  slice (``a[:] = b``: numba's runtime; copy element by element), return an array or
  keep one a callee returns: it borrows its arguments from callers that hold them.
"""
