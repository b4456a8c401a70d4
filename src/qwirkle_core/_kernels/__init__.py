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
``policies``  random, greedy and heuristic choices; the heuristic's reply search
``mc``        determinization, playouts, move evaluation, the Monte Carlo agent
``endgame``   the exact two-player endgame solver
``search``    the search agent: the solver's moves in the endgame, a Monte Carlo search before
``agents``    one turn of any agent (the dispatch on the agent id) and the agents' scratch
``batch``     many complete games in parallel, one row of results per game
"""
