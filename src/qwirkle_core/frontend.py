"""``qwirkle play``: a terminal front end to play against the built-in agents.

:func:`run_play` reads commands line by line from any text stream and writes to any
text stream, with colours (rich) only when asked or when the output is a terminal, so
it can be driven through a pipe. :func:`add_play_arguments` / :func:`main_play` plug
it into an ``argparse`` command line. See docs/frontend-guide.md.
"""

import sys

from rich.console import Console
from rich.text import Text

from .game import Game
from .players import AgentFailure, Player, check_time_limit
from .rules import OPENING_RULES, IllegalMoveError, Rules
from .simulate import AGENTS
from .tiles import COLORS, tile_code

__all__ = ["add_play_arguments", "main_play", "run_play"]

STYLES = dict(zip(COLORS, ("bold red", "bold dark_orange", "bold yellow", "bold green", "bold blue", "bold magenta")))
SHOWN_MOVES = 20

HELP = """\
Type a move in the notation, or a command:
  R1@0,0 R2@0,1   place tiles (TILE@ROW,COL; rows grow downward, columns rightward)
  x R1 B4         exchange tiles with the bag
  pass            pass (only when the bag is empty and nothing fits)
  N               play move number N of the last 'moves' list
  moves [all]     list the legal placements, best first (the best 20 unless 'all')
  hint            what the greedy agent would do now
  undo            take back your last move (and the replies to it)
  save FILE       write the game record (JSON) to FILE
  show            draw the board again
  help            this text
  quit            leave (end of input does too)
Tiles: colour R O Y G B P (red orange yellow green blue purple) + shape
1 circle, 2 square, 3 diamond, 4 clover, 5 cross, 6 star."""


def _tile_text(t):
    return Text(tile_code(t), style=STYLES[COLORS[t // 6]])


def board_text(board):
    """The board ``{(row, col): tile}`` as a rich Text grid with row and column numbers,
    one empty ring of cells around the tiles (plain text when printed without colour)."""
    if not board:
        return Text("(empty board: the opening goes at 0,0 and runs rightward, e.g. R1@0,0 R2@0,1)\n")
    rows = [r for r, _ in board]
    cols = [c for _, c in board]
    col_range = range(min(cols) - 1, max(cols) + 2)
    out = Text("    " + "".join(f"{c:>4}" for c in col_range) + "\n")
    for r in range(min(rows) - 1, max(rows) + 2):
        out.append(f"{r:>4}")
        for c in col_range:
            t = board.get((r, c))
            out.append("  ")
            out.append(_tile_text(t) if t is not None else Text(" ."))
        out.append("\n")
    return out


def _tiles_text(tiles):
    out = Text()
    for i, t in enumerate(tiles):
        if i:
            out.append(" ")
        out.append(_tile_text(t))
    return out


class _Session:
    """One game in a terminal: the state of the loop of :func:`run_play`."""

    def __init__(self, game, human, opponent, console, echo, time_limit=None):
        self.g = game
        self.human = human
        self.opponent = opponent.label
        self.seats = {p: opponent.seat(game.seed, p) for p in range(game.players) if p != human}
        self.time_limit = time_limit
        self.console = console
        self.echo = echo
        self.listed = None  # (turn, moves) of the last 'moves' listing

    def say(self, *parts, end="\n"):
        self.console.print(*parts, end=end)

    def name(self, p):
        return "you" if p == self.human else f"{self.opponent} (seat {p})"

    def show(self):
        g = self.g
        self.say(board_text(g.board), end="")
        scores = " | ".join(f"{self.name(p)} {s}" for p, s in enumerate(g.scores))
        self.say(f"scores: {scores} | bag {g.bag_size} | turn {g.turn}")
        self.say(Text("your hand: ").append(_tiles_text(g.hand(self.human))))

    def report(self, action):
        move = "pass" if action.move.kind == "pass" else str(action.move)
        points = f": {action.points} points" if action.move.kind == "place" else ""
        verb = "play" if action.player == self.human else "plays"
        self.say(f"{self.name(action.player)} {verb} {move}{points}")

    def agents_play(self):
        g = self.g
        while not g.is_over and g.current_player != self.human:
            self.report(self.seats[g.current_player].play(g, self.time_limit))

    def announce_end(self):
        g = self.g
        result = "a tie" if g.winner == -1 else f"{self.name(g.winner)} won" if g.winner != self.human else "you won"
        scores = ", ".join(f"{self.name(p)} {s}" for p, s in enumerate(g.scores))
        self.say(f"game over: {result} ({scores}). 'save FILE' keeps the record, 'undo' takes back, 'quit' leaves.")

    def after_change(self):
        self.agents_play()
        self.show()
        if self.g.is_over:
            self.announce_end()

    # -- commands -----------------------------------------------------------------------

    def cmd_help(self):
        self.say(HELP)

    def cmd_moves(self, everything):
        g = self.g
        moves = sorted(g.legal_moves(), key=lambda m: (-m.score, str(m)))
        self.listed = (g.turn, moves)
        if not moves:
            what = "the game is over" if g.is_over else "exchange (x TILES)" if g.bag_size else "pass"
            self.say(f"no placement is possible: {what}")
            return
        shown = moves if everything else moves[:SHOWN_MOVES]
        for i, m in enumerate(shown, start=1):
            self.say(f"{i:>4}. {m}  ({m.score})")
        if len(shown) < len(moves):
            self.say(f"      ... and {len(moves) - len(shown)} more ('moves all')")

    def cmd_number(self, n):
        if self.listed is None or self.listed[0] != self.g.turn:
            raise ValueError("no current 'moves' list: type 'moves' first")
        moves = self.listed[1]
        if not 1 <= n <= len(moves):
            raise ValueError(f"no move number {n}; the list has 1 to {len(moves)}")
        self.play(moves[n - 1])

    def cmd_hint(self):
        if self.g.is_over:
            raise IllegalMoveError("the game is over")
        action = self.g.copy().play_agent("greedy")
        points = f" ({action.points} points)" if action.move.kind == "place" else ""
        self.say(f"hint: {action.move}{points}")

    def cmd_undo(self):
        g = self.g
        if not any(a.player == self.human for a in g.history):
            raise IllegalMoveError("there is no move of yours to undo")
        while g.undo().player != self.human:
            pass
        self.say("undone: your turn again")
        self.show()

    def cmd_save(self, arg):
        if not arg:
            raise ValueError("save needs a file name: save FILE")
        agents = ["human" if p == self.human else self.opponent for p in range(self.g.players)]
        with open(arg, "w", encoding="utf-8") as f:
            f.write(self.g.record(agents).to_json(indent=2) + "\n")
        self.say(f"saved the record of {self.g.turn} actions to {arg}")

    def play(self, move):
        self.g.play(move)
        self.report(self.g.history[-1])
        self.after_change()

    def handle(self, line):
        """Carry out one input line; False to stop."""
        word, _, arg = line.strip().partition(" ")
        command, arg = word.lower(), arg.strip()
        plain = {"help": self.cmd_help, "?": self.cmd_help, "show": self.show, "hint": self.cmd_hint, "undo": self.cmd_undo}
        if command in ("quit", "exit"):
            return False
        if command in plain:
            if arg:
                raise ValueError(f"'{command}' takes nothing after it")
            plain[command]()
        elif command == "moves":
            if arg not in ("", "all"):
                raise ValueError("'moves' takes nothing or 'all' after it")
            self.cmd_moves(everything=arg == "all")
        elif command == "save":
            self.cmd_save(arg)
        elif command.isdigit() and not arg:
            self.cmd_number(int(command))
        elif command:
            self.play(line.strip())
        return True

    def loop(self, input_stream):
        self.say("Each turn, type a move such as R1@0,0 R2@0,1, or a command ('help' lists them).")
        self.after_change()
        while True:
            self.console.print("> ", end="")
            line = input_stream.readline()
            if not line:
                self.say("")
                return
            if self.echo:
                self.say(line.rstrip("\n"))
            try:
                if not self.handle(line):
                    return
            except AgentFailure:
                raise  # the opponent cannot go on: the game stops
            except IllegalMoveError as e:
                self.say(f"illegal: {e}")
            except (ValueError, OSError) as e:
                self.say(f"error: {e}")


def run_play(players=2, opponent="greedy", seed=None, human_seat=0, input_stream=None, output_stream=None, color=None, opening="largest_group", time_limit=None):
    """Play one game in a terminal: the human at ``human_seat`` against ``opponent``
    (a name in ``qwirkle_core.AGENTS``, ``package.module:Name`` or a Python agent, see
    :mod:`qwirkle_core.players`) in every other seat, until ``quit`` or the end of
    ``input_stream`` (default stdin). Writes to ``output_stream`` (default stdout), in
    colour if ``color`` is True, plain if False, and when None only if the output is a
    terminal. ``seed``: the game's seed (random when None). ``time_limit``: a Python
    opponent's seconds per move (None: no limit). Returns the :class:`Game`; a Python
    opponent that fails raises :class:`~qwirkle_core.players.AgentFailure`.
    """
    input_stream = sys.stdin if input_stream is None else input_stream
    output_stream = sys.stdout if output_stream is None else output_stream
    opponent = Player.of(opponent)
    rules = Rules(players=players, opening=opening)
    if isinstance(human_seat, bool) or not isinstance(human_seat, int) or not 0 <= human_seat < players:
        raise ValueError(f"the human's seat must be 0..{players - 1}, not {human_seat!r}")
    if color is None:
        color = _isatty(output_stream)
    console = Console(
        file=output_stream, force_terminal=color, color_system="auto" if color else None, highlight=False, markup=False, emoji=False, soft_wrap=True
    )
    game = Game(seed=seed, rules=rules)
    names = ", ".join(f"seat {p}" for p in range(players) if p != human_seat)
    console.print(f"qwirkle-core: you are seat {human_seat}; {opponent.label} plays {names}. Seed {game.seed}.", highlight=False)
    _Session(game, human_seat, opponent, console, echo=not _isatty(input_stream), time_limit=check_time_limit(time_limit)).loop(input_stream)
    return game


def _isatty(stream):
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def add_play_arguments(parser):
    """Add the options of ``qwirkle play`` to an ``argparse`` parser."""
    from .cli import python_agent, seed_type, time_limit_type

    parser.add_argument("--players", type=int, choices=range(2, 7), default=2, metavar="N", help="number of seats, 2 to 6 (default: 2)")
    parser.add_argument("--opponent", type=python_agent, default="greedy", help=f"the agent in the other seats: {', '.join(AGENTS)}, or a Python agent as package.module:Name (default: greedy)")
    parser.add_argument("--time-limit", type=time_limit_type, default=None, metavar="SECONDS", help="a Python opponent's seconds per move (default: no limit)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, from 0 (default: 0); the rules decide who opens")
    parser.add_argument("--seed", type=seed_type, default=None, help="the game's seed (default: random; printed at the start)")
    parser.add_argument("--opening", choices=sorted(OPENING_RULES), default="largest_group", help="opening rule (default: largest_group, the official one)")
    parser.add_argument("--no-color", action="store_true", help="no colours even on a terminal")


def main_play(args):
    """Run ``qwirkle play`` with parsed ``args`` (from :func:`add_play_arguments`); returns 0."""
    run_play(
        players=args.players,
        opponent=args.opponent,
        seed=args.seed,
        human_seat=args.seat,
        color=False if args.no_color else None,
        opening=args.opening,
        time_limit=args.time_limit,
    )
    return 0
