"""jsonfile - reading the JSON files a run leaves (record.json, hourglass.json, report.json,
lab-run.json, paper-run.json): one reader, so that every command names a bad one the same way."""
from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:     # typing for the type checker alone
    from typing import Any

from .errors import HgError, cannot


def load(path: str, missing_ok: bool = False) -> Any:
    """@path's JSON value. A missing file is None with @missing_ok; otherwise a file that cannot
    be read, or is not JSON, is an HgError (bad input, 3) naming it."""
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError as e:
        if missing_ok:
            return None
        raise cannot("read", path, e) from None
    except OSError as e:
        raise cannot("read", path, e) from None
    except ValueError as e:
        raise HgError(f"{path}: not JSON ({e})") from None


def load_object(path: str) -> Any:
    """@path's JSON object (a dict), or None when the file is missing or holds another value;
    a file that cannot be read or is not JSON is an HgError naming it."""
    v = load(path, missing_ok=True)
    return v if isinstance(v, dict) else None
