"""Clients that try to take every connection, against the real binary (issue 24 item 5): a flood
of refused uploads that go on sending their bodies, and one address opening many connections."""

from __future__ import annotations

import socket
import time

from connection_flood import LingeringFlood, NormalClient
from test_hostile_clients import address, read_until_closed


def test_a_flood_of_lingering_uploads_leaves_a_normal_client_served(tmp_path, start_server):
    # Issue 24 item 5: the cap that `ulimit -n 128` gives (24 with 2 threads), 160 refused uploads
    # still sending: 3603e40 kept the cap full of lingering connections, and a normal client got 503.
    server = start_server(tmp_path / "data", "--threads", "2", "--max-connections", "24")
    with LingeringFlood(address(server), clients=160) as flood:
        time.sleep(1.5)  # every place under the cap taken
        client = NormalClient(address(server))
        client.run(requests=47, every=0.1)
    assert client.statuses == [200] * 47, client.statuses
    # The flood's connections were closed to make room, and it opened them again.
    assert flood.connections > 160
    assert "lingering or idle connections closed since the last warning to make room" in server.stderr()
    assert NormalClient(address(server)).request() == 200


def test_one_address_holds_at_most_its_share_of_the_connections(tmp_path, start_server):
    server = start_server(tmp_path / "data", "--max-connections-per-address", "4")
    host, port = address(server)
    held = [socket.create_connection((host, port)) for _ in range(4)]
    try:
        time.sleep(0.2)
        with socket.create_connection((host, port)) as fifth:
            fifth.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_until_closed(fifth, 5)
        assert answer.startswith(b"HTTP/1.1 503 "), answer
        assert b"Retry-After: 1\r\n" in answer
        assert b"your address has its limit of 4 connections open (--max-connections-per-address)" in answer
        # Another address on the loopback network is another client.
        with socket.create_connection((host, port), source_address=("127.0.0.2", 0)) as elsewhere:
            elsewhere.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert read_until_closed(elsewhere, 5).startswith(b"HTTP/1.1 200 ")
    finally:
        for connection in held:
            connection.close()

