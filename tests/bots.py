"""Python agents for the tests, loadable as ``bots:Name`` (tests/ is on sys.path)."""

import time

import qwirkle_core as qc


def best_move(observation, legal_moves, rng):
    """The best-scoring placement (the first of equal ones), else the first action."""
    places = [m for m in legal_moves if m.kind == "place"]
    return max(places, key=lambda m: m.score) if places else legal_moves[0]


class Best:
    """``best_move`` as a class (instantiated once per game and seat)."""

    def act(self, observation, legal_moves, rng):
        return best_move(observation, legal_moves, rng)


class Randomly:
    """A uniformly random legal action, drawn from the agent's own generator."""

    def act(self, observation, legal_moves, rng):
        return legal_moves[int(rng.integers(len(legal_moves)))]


class Raises:
    """Plays well for its first two turns, then raises."""

    def __init__(self):
        self.turns = 0

    def act(self, observation, legal_moves, rng):
        self.turns += 1
        if self.turns > 2:
            raise RuntimeError("bot exploded")
        return best_move(observation, legal_moves, rng)


class Illegal:
    """Returns a placement far from every tile: never legal."""

    def act(self, observation, legal_moves, rng):
        return qc.Move([(500, 500, observation.hand[0])])


class Malformed:
    """Returns the move as text instead of a Move."""

    def act(self, observation, legal_moves, rng):
        return str(legal_moves[0])


class Slow:
    """Sleeps ``delay`` seconds per move, then plays the best move."""

    delay = 0.3

    def act(self, observation, legal_moves, rng):
        time.sleep(self.delay)
        return best_move(observation, legal_moves, rng)


class Hangs:
    """Busy-loops for ever (and swallows ordinary exceptions)."""

    def act(self, observation, legal_moves, rng):
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass


class Peeks:
    """Records what it is given, to check it never sees hidden information."""

    seen = []

    def act(self, observation, legal_moves, rng):
        Peeks.seen.append((observation, list(legal_moves)))
        return best_move(observation, legal_moves, rng)


class Interrupts:
    """Plays the best move, but its ``after``-th call (counted over every instance) is
    Ctrl-C arriving while it thinks: it raises KeyboardInterrupt."""

    after = 10**9
    calls = 0

    def act(self, observation, legal_moves, rng):
        Interrupts.calls += 1
        if Interrupts.calls == Interrupts.after:
            raise KeyboardInterrupt
        return best_move(observation, legal_moves, rng)
