#!/usr/bin/env python3
"""A system under test over HTTP, the way people write one with the standard library: an
http.server handler speaking HTTP/1.1 (keep-alive), which sends its headers and its body in two
writes (end_headers() flushes the headers, then wfile.write(body)). Answers {"output": ...} to
POST /, like benches/eval/sut.sh does. Usage: server.py PORT_FILE [--nodelay] (writes the port it
bound; --nodelay sets TCP_NODELAY on the server's sockets, the control row: no stall to find)."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def answer(prompt):
    if "#" in prompt and prompt.split(":")[0][-1:] in "05":
        return "ls -l"
    for key, value in (("list files", "ls -la"), ("current directory", "pwd"), ("count lines", "wc -l notes.txt"),
                       ("make directories", "mkdir -p a/b/c"), ("find logs", "find . -name '*.log'")):
        if key in prompt:
            return value
    return "true"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        case = json.loads(self.rfile.read(length) or b"{}")
        body = json.dumps({"output": answer(case.get("prompt", ""))}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    Handler.disable_nagle_algorithm = "--nodelay" in sys.argv[2:]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
