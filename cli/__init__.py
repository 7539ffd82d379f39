"""The thin command-line front end of codemod; all logic lives in the engine (``jax_codemod``)."""

import os as _os
import signal as _signal
import sys as _sys


def _interrupted_while_starting(_signum, _frame) -> None:
    # Before main() runs nothing has been read or written: one line and exit 130, as later.
    _os.write(2, b"codemod: interrupted\n")
    _os._exit(130)


# The console script imports cli.main (click, the engine) before it can call entry(): a Ctrl-C
# during those imports would print a traceback. Only for the `codemod` command itself; main()
# puts Python's own handler back as soon as it runs.
if _os.path.basename(_sys.argv[0] if _sys.argv else "") in ("codemod", "codemod.exe"):
    try:
        if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
            _signal.signal(_signal.SIGINT, _interrupted_while_starting)
    except ValueError:  # not the main thread
        pass
