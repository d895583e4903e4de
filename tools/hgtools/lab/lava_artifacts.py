"""lava_artifacts - where a LAVA job's run directories go: a file store that takes HTTP PUT.

    python3 -m hgtools.lab.lava_artifacts --dir DIR [--bind ADDR] [--port N] [--max-mb N]

A farm keeps what its devices make on an artifact store, and the job links each file to a
test case with lava-test-reference (LKFT and KernelCI do the same with their storage).
scripts/lava-lab --upload URL sends its run directories there with `curl -T FILE URL/`; this
is the smallest such store, for scripts/lava-local: each PUT /NAME writes DIR/NAME (a plain
file name, no directories; written whole to a temporary file, then renamed) and answers 201
with its URL; GET /NAME reads it back. Prints "listening on ADDR:PORT" once it is. A name
with a slash or a leading dot, a body without Content-Length or over --max-mb gets 400/411/413
and writes nothing. Bound to 127.0.0.1 by default: QEMU's user network shows it to the guest
as 10.0.2.2.
"""
from __future__ import annotations

import argparse
import http.server
import os
import re
import sys
import tempfile
import urllib.parse
from typing import Optional

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}$")


def file_name(path: str) -> Optional[str]:
    """The file a request's @path names, or None: one plain name, nothing else."""
    name = urllib.parse.unquote(path.split("?", 1)[0]).lstrip("/")   # curl sends a '+' as %2B
    return name if NAME.match(name) and ".." not in name else None


class Store(http.server.BaseHTTPRequestHandler):
    root = "."
    max_bytes = 0

    def log_message(self, fmt: str, *args: object) -> None:   # noqa: D401 - the store's one log line
        sys.stderr.write("lava_artifacts: " + (fmt % args) + "\n")

    def answer(self, code: int, text: str) -> None:
        body = (text + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self) -> None:   # noqa: N802 - http.server's name
        name = file_name(self.path)
        if not name:
            self.answer(400, f"not a plain file name: {self.path}")
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.answer(411, "a Content-Length is needed")
            return
        size = int(length)
        if size > self.max_bytes:
            self.answer(413, f"{size} bytes: more than the store takes ({self.max_bytes})")
            return
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".put-")
        try:
            left = size
            with os.fdopen(fd, "wb") as f:
                while left:
                    chunk = self.rfile.read(min(left, 1 << 20))
                    if not chunk:
                        raise ConnectionError(f"the body ended {left} bytes short")
                    f.write(chunk)
                    left -= len(chunk)
            os.replace(tmp, os.path.join(self.root, name))
        except (OSError, ConnectionError) as e:
            os.unlink(tmp)
            self.answer(500, f"not stored: {e}")
            return
        self.answer(201, f"http://{self.headers.get('Host', '')}/{name}")

    def do_GET(self) -> None:   # noqa: N802
        name = file_name(self.path)
        path = os.path.join(self.root, name) if name else ""
        if not name or not os.path.isfile(path):
            self.answer(404, f"no such file: {self.path}")
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> int:
    ap = argparse.ArgumentParser(description="a file store that takes HTTP PUT: where scripts/lava-local's "
                                             "job uploads its run directories (docs/lava.md)")
    ap.add_argument("--dir", required=True, help="where the files go")
    ap.add_argument("--bind", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    ap.add_argument("--port", type=int, default=0, help="the port (default: any free one, printed)")
    ap.add_argument("--max-mb", type=int, default=512, help="the largest file taken, in MiB (512)")
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        ap.error(f"--dir {a.dir}: not a directory")
    Store.root = os.path.abspath(a.dir)
    Store.max_bytes = a.max_mb << 20
    try:
        srv = http.server.ThreadingHTTPServer((a.bind, a.port), Store)
    except OSError as e:
        print(f"lava_artifacts: cannot listen on {a.bind}:{a.port}: {e.strerror}", file=sys.stderr)
        return 2
    host = srv.server_address[0]
    print(f"listening on {host.decode() if isinstance(host, bytes) else host}:{srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
