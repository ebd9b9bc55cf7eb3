"""A proxy that forwards nothing and records every connection attempt.

Chromium is pointed at it with --proxy-server: any request the page makes
(http, https via CONNECT, ws) shows up here as one line in LOG. Binds the
first free port of FIRST..LAST on 127.0.0.1 and writes it to PORT_FILE.
Usage: proxy_recorder.py FIRST LAST PORT_FILE LOG
"""
import socket
import sys


def main():
    first, last, port_file, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for port in range(first, last + 1):
        try:
            srv.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    else:
        sys.exit(f"proxy_recorder: no free port in {first}-{last}")
    srv.listen(16)
    with open(port_file, "w") as f:
        f.write(str(port))
    while True:
        conn, _ = srv.accept()
        conn.settimeout(2)
        try:
            first_line = conn.recv(4096).split(b"\r\n", 1)[0]
        except OSError:
            first_line = b"(no request line)"
        # A connection closed before sending anything (chromium's speculative
        # preconnects to its proxy) carried no request: marked so the test
        # can tell it from one that did.
        if not first_line:
            first_line = b"(closed without a request)"
        with open(log, "a") as f:
            f.write(first_line.decode("latin-1") + "\n")
        try:
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass
        conn.close()


if __name__ == "__main__":
    main()
