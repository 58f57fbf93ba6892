#!/usr/bin/python3
"""A TCP proxy in front of a server, so a test can cut a client's connection
(and refuse its reconnects for a while) without touching the server.

As a library: Proxy("host:port") listens on a free loopback port (.addr);
.cut(refuse=True) closes every proxied connection and refuses new ones until
.resume(); .close() stops it.

As a program (for shell scripts, e.g. through a bash coproc):
    tcp_proxy.py HOST:PORT
prints its own address on the first line, then reads commands from stdin,
one a line, and answers each with "ok" once it has taken effect:
    cut      close every proxied connection, keep accepting
    refuse   close every proxied connection and refuse new ones
    resume   accept (and proxy) new connections again
It stops at end of input.
"""

import select
import socket
import sys
import threading


class Proxy:
    def __init__(self, target):
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.addr = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.conns = []
        self.refusing = False
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.refusing or self.closed:
                    down.close()
                    continue
                try:
                    up = socket.create_connection(self.target, timeout=5)
                except OSError:
                    down.close()
                    continue
                self.conns += [down, up]
            threading.Thread(target=self._pump, args=(down, up), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        socks = [a, b]
        try:
            while True:
                ready, _, _ = select.select(socks, [], [], 1.0)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for s in socks:
                s.close()

    def cut(self, refuse):
        """Close every proxied connection; refuse new ones if refuse."""
        with self.lock:
            self.refusing = refuse
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.conns = []

    def resume(self):
        with self.lock:
            self.refusing = False

    def close(self):
        with self.lock:
            self.closed = True
        self.cut(refuse=True)
        self.listener.close()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tcp_proxy.py HOST:PORT")
    proxy = Proxy(sys.argv[1])
    print(proxy.addr, flush=True)
    actions = {
        "cut": lambda: proxy.cut(refuse=False),
        "refuse": lambda: proxy.cut(refuse=True),
        "resume": proxy.resume,
    }
    for line in sys.stdin:
        action = actions.get(line.strip())
        if action is None:
            print("unknown command %r" % line.strip(), flush=True)
            continue
        action()
        print("ok", flush=True)
    proxy.close()


if __name__ == "__main__":
    main()
