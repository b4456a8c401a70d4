"""The batch layer, built on ``Game``: many games at once. Batch statistics and rows
(``stats``, ``rows``), one range of games in this process (``local``) or on a Dask
cluster (``distributed``), Python agents (``players``), :func:`simulate` and
:func:`tournament`."""
