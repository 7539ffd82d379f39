"""A Ctrl-C the run cannot lose.

Python raises KeyboardInterrupt wherever the main thread is when SIGINT arrives. Raised inside a
finalizer or a callback it is printed as "Exception ignored" and dropped, and the code it cut
short can fail later in another way (a half-built map raises KeyError), which the engine's
``except Exception`` around a rule reports as that file's failure: the run went on, and wrote the
files after it. The handler installed here also remembers the interrupt, and the engine asks
(``raise_if_requested``) wherever it turns an exception into a file's error and after every file
it checks, so a Ctrl-C stops the run at the latest there.
"""

from __future__ import annotations

import signal

_requested = False


def _remembering_handler(signum, frame) -> None:
    global _requested
    _requested = True
    signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt here, as before


def install() -> None:
    """Use the remembering handler where Python's own is in place (the main thread only)."""
    global _requested
    _requested = False
    try:
        if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, _remembering_handler):
            signal.signal(signal.SIGINT, _remembering_handler)
    except ValueError:  # not the main thread: signals reach only the main one
        pass


def raise_if_requested() -> None:
    """KeyboardInterrupt if a Ctrl-C came since ``install`` (even one something swallowed)."""
    if _requested:
        raise KeyboardInterrupt
