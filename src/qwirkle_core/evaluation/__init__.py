"""The evaluation layer, built on ``Game``: flat Monte Carlo move evaluation
(``evaluate``), the exact endgame solver (``endgame``) and record analysis
(``analysis``)."""
