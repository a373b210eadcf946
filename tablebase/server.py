"""``tablebase serve``: an HTTP server speaking lila-tablebase's JSON, and a page to look.

Routes (as tablebase.lichess.ovh has them):

* ``GET /standard?fen=FEN``: :func:`tablebase.lichess.probe_json`;
* ``GET /standard/mainline?fen=FEN``: :func:`tablebase.lichess.mainline_json`;
* ``GET /``: the page (paste a FEN, see the board and the moves, click one to play it).

A FEN may use ``_`` for spaces. Invalid castling rights and an impossible en-passant
square are dropped, as Lichess does. Errors are plain text, as Lichess's: 400 for a FEN
that does not parse or an illegal position, 404 for a position no table holds (a missing
table, more pieces than the largest table; ``/standard/mainline`` also for castling
rights). Answers are cached, in an LRU bounded by bytes, keyed by the position's FEN.

Needs the ``serve`` extra (Starlette, uvicorn, orjson): ``pip install -e ".[serve]"``."""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from importlib import resources

import chess
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from .endgame.pychess import illegal_position_error
from .errors import BadFenError, CastlingRightsError, IllegalPositionError, MissingTableError, TooManyPiecesError
from .lichess import mainline_json, probe_json
from .probe import Tablebase, open_tablebase

__all__ = ["ResponseCache", "create_app", "parse_fen", "serve"]

#: Bytes of cached JSON answers per server process.
CACHE_BYTES = 64 << 20
#: Bytes of decoded table blocks per server process (the probe library's pool): a random
#: position's moves touch a block each, and decoding one costs about a millisecond, so
#: the pool is large and ``preload`` can fill it before serving.
TABLE_CACHE_BYTES = 1 << 30


class ResponseCache:
    """An LRU of encoded answers bounded by their bytes; safe to share between threads."""

    def __init__(self, capacity: int = CACHE_BYTES):
        self.capacity = capacity
        self._items: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> bytes | None:
        with self._lock:
            body = self._items.get(key)
            if body is not None:
                self._items.move_to_end(key)
            return body

    def put(self, key: tuple[str, str], body: bytes) -> None:
        if len(body) > self.capacity:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = body
            self._bytes += len(body)
            while self._bytes > self.capacity:
                self._bytes -= len(self._items.popitem(last=False)[1])


def parse_fen(fen: str | None) -> chess.Board:
    """The board of a FEN from a URL (``_`` for spaces), cleaned as lila-tablebase cleans it
    (castling rights without their king and rook, and an en-passant square no pawn can
    have passed, are dropped); BadFenError or IllegalPositionError, naming the input,
    for anything else.

    >>> parse_fen("4k3/8/8/8/8/8/Q7/4K3_w_K_-_0_1").fen()
    '4k3/8/8/8/8/8/Q7/4K3 w - - 0 1'
    """
    if not fen:
        raise BadFenError("missing query parameter fen, e.g. /standard?fen=4k3/6KP/8/8/8/8/7p/8_w_-_-_0_1")
    try:
        board = chess.Board(fen.replace("_", " "))
    except ValueError as e:
        raise BadFenError(f"bad FEN {fen!r}: {e}") from e
    board.castling_rights = board.clean_castling_rights()
    if board.status() & chess.STATUS_INVALID_EP_SQUARE:
        board.ep_square = None
    if not board.is_valid():
        raise illegal_position_error(board)
    return board


def _check_tables_hold(tb: Tablebase, board: chess.Board) -> None:
    """Raise MissingTableError or TooManyPiecesError where no table holds the board's
    material (castling rights aside: Lichess answers those from the moves)."""
    if board.castling_rights:
        board = board.copy(stack=False)
        board.castling_rights = chess.BB_EMPTY
    tb.probe_dtm(board)


def create_app(path=None, *, cache_bytes: int = CACHE_BYTES, table_cache_bytes: int = TABLE_CACHE_BYTES,
               preload_tables: bool = False) -> Starlette:
    """The ASGI application serving the tables of ``path`` (a folder, several, or None:
    ``TABLEBASE_PATH``, else ``data/tables``; see :func:`tablebase.probe.table_folders`);
    ``cache_bytes`` bounds the cache of answers, ``table_cache_bytes`` that of decoded
    table values, which ``preload_tables`` fills before the first request.
    """
    tb = open_tablebase(path, cache_bytes=table_cache_bytes)
    if preload_tables:
        tb.preload()
    cache = ResponseCache(cache_bytes)
    page = resources.files("tablebase").joinpath("static/index.html").read_bytes()

    # Computed in the event loop's thread: probing is pure Python under the GIL, so a
    # thread pool would add switching and no parallelism (workers are processes).
    def answer(kind: str, request: Request) -> Response:
        fen = request.query_params.get("fen")
        try:
            board = parse_fen(fen)
            key = (kind, board.fen())
            body = cache.get(key)
            if body is None:
                if kind == "mainline":
                    if board.castling_rights:  # as lila-tablebase: its line needs the root's DTZ
                        raise CastlingRightsError(f"castling rights: tables hold positions without them: {fen!r}")
                    _check_tables_hold(tb, board)
                    reply = mainline_json(tb, board)
                else:
                    _check_tables_hold(tb, board)
                    reply = probe_json(tb, board)
                body = orjson.dumps(reply)
                cache.put(key, body)
        except (BadFenError, IllegalPositionError) as e:
            return PlainTextResponse(str(e), status_code=400)
        except (MissingTableError, TooManyPiecesError, CastlingRightsError) as e:
            return PlainTextResponse(str(e), status_code=404)
        return Response(body, media_type="application/json")

    async def standard(request: Request) -> Response:
        return answer("standard", request)

    async def mainline(request: Request) -> Response:
        return answer("mainline", request)

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        tb.close()

    app = Starlette(routes=[Route("/", index), Route("/standard", standard), Route("/standard/mainline", mainline)],
                    lifespan=lifespan)
    app.state.tablebase = tb
    return app


# The settings of uvicorn's worker processes, which build their app from the environment.
_WORKER_SETTINGS = "TABLEBASE_SERVE_SETTINGS"


def _app_from_environment() -> Starlette:
    """The application of a uvicorn worker process: the folders come in TABLEBASE_PATH."""
    table_cache_bytes, preload_tables = os.environ[_WORKER_SETTINGS].split(",")
    return create_app(None, table_cache_bytes=int(table_cache_bytes), preload_tables=preload_tables == "1")


def serve(path=None, *, host: str = "127.0.0.1", port: int = 9000, workers: int = 1,
          table_cache_bytes: int = TABLE_CACHE_BYTES, preload_tables: bool = False) -> None:
    """Run the server until interrupted; ``workers`` processes share the port."""
    import uvicorn

    from .probe import TABLEBASE_PATH, table_folders
    folders = table_folders(path)
    with open_tablebase(folders) as tb:  # a missing folder is an error here, not in each worker
        print(f"serving {len(tb.materials())} tables from {', '.join(map(str, folders))} on http://{host}:{port}/"
              + (" (preloading them first)" if preload_tables else ""), flush=True)
    if workers > 1:
        os.environ[TABLEBASE_PATH] = os.pathsep.join(str(f.resolve()) for f in folders)
        os.environ[_WORKER_SETTINGS] = f"{table_cache_bytes},{int(preload_tables)}"
        uvicorn.run("tablebase.server:_app_from_environment", factory=True, host=host, port=port, workers=workers,
                    log_level="warning", access_log=False)
    else:
        uvicorn.run(create_app(folders, table_cache_bytes=table_cache_bytes, preload_tables=preload_tables),
                    host=host, port=port, log_level="warning", access_log=False)
