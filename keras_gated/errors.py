"""How the command-line tools end when something goes wrong: one sentence, an exit code.

* exit 2: the user's input is wrong (an argument, a file's content, a name): a
  ``ValueError`` (every error type of keras-gated that is about input derives from it);
* exit 1: the environment failed (disk full, permission denied, network, a read-only
  folder): an ``OSError``;
* a traceback only with ``--debug`` or ``KERAS_GATED_DEBUG=1``.

An error whose full message spans several lines may carry a ``summary`` (one short
paragraph, e.g. ``PlannedWeightsError``'s): that is what is printed.

Nothing here imports Keras, so the CLIs can use it before choosing a backend.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable

USER_ERROR = 2
ENVIRONMENT_FAULT = 1
INTERRUPTED = 130
DEBUG_VARIABLE = "KERAS_GATED_DEBUG"

_OS_ADVICE = {
    errno.ENOSPC: "the disk is full: free space or write somewhere else",
    errno.EDQUOT: "the disk quota is exceeded: free space or write somewhere else",
    errno.EACCES: "permission denied: choose a folder you can write to",
    errno.EPERM: "permission denied: choose a folder you can write to",
    errno.EROFS: "the file system is read-only: choose a writable folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder: choose another path",
    errno.EISDIR: "the path is a folder where a file is needed",
    errno.EEXIST: "it exists already: choose a new path",
    errno.ENOENT: "it does not exist",
}


# The user-information part of a URL (``scheme://user:password@``), which may hold a secret.
_URL_CREDENTIALS = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]*@")


def without_credentials(text: object) -> str:
    """``text`` with the credentials of every URL in it removed
    (``http://user:password@host/x`` -> ``http://host/x``): no message shows a secret
    that came with an endpoint such as ``HF_ENDPOINT``."""
    return _URL_CREDENTIALS.sub(r"\1", str(text))


def debug_enabled(flag: bool = False) -> bool:
    """True with ``--debug`` or ``KERAS_GATED_DEBUG=1``: show tracebacks."""
    return bool(flag) or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def describe_os_error(error: OSError) -> str:
    """One sentence for an OS error: what failed, on which file, and what to do."""
    advice = _OS_ADVICE.get(error.errno or -1)
    where = error.filename
    if advice and where:
        return f"{where}: {advice}."
    if advice:
        return f"{advice[0].upper()}{advice[1:]}."
    text = str(error.strerror or error) if error.errno else str(error)
    return f"{where}: {text}" if where and str(where) not in text else text


def run_command(prog: str, command: Callable[[], int], *, debug: bool = False) -> int:
    """Run ``command`` and turn its failure into one line on stderr and an exit code."""
    try:
        return command()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`keras-gated list | head`): stop quietly, as Unix tools do.
        # Python's exit would flush stdout into the closed pipe again, so point it at
        # /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except ValueError as error:
        if debug_enabled(debug):
            raise
        print(f"{prog}: error: {without_credentials(getattr(error, 'summary', None) or error)}",
              file=sys.stderr)
        return USER_ERROR
    except OSError as error:
        if debug_enabled(debug):
            raise
        print(f"{prog}: error: {without_credentials(describe_os_error(error))}", file=sys.stderr)
        return ENVIRONMENT_FAULT
    except Exception as error:  # a bug: say so, and how to see it
        if debug_enabled(debug):
            raise
        print(f"{prog}: internal error: {type(error).__name__}: {without_credentials(error)} "
              f"(rerun with --debug "
              f"or {DEBUG_VARIABLE}=1 for the traceback, and report it)", file=sys.stderr)
        return ENVIRONMENT_FAULT
