package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A fallback generator on a node ID a server issues with (issue 33): the client core refuses it
 * (client/src/shared.rs, docs/client.md#fallback) from the first block that shows that node,
 * every call, and Java passes the refusal on as {@code invalid_argument} naming the node (in
 * Java's names: {@code datacenterId}, {@code workerId}). A fallback of a node of its own takes
 * over once the server is gone. (Python, C, Node, Go: tests/client/test_fallback_surfaces.py;
 * the core: client/tests/fallback.rs.)
 */
class FallbackTest {
    /** The tiny server's IDs: twitter's datacenter 0, worker 11 (4096 of them before worker 12). */
    private static final long SERVERS_NODE = (1L << 40) | (11L << 12);

    private static Client client(String server, long fallbackWorker) {
        Generator fallback = Generator.builder().datacenterId(0).workerId(fallbackWorker).build();
        return Client.builder().server(server).minBlock(16).maxBlock(16).timeoutMs(30_000)
                .requestTimeoutMs(200).fallback(fallback).build();
    }

    @Test
    void aFallbackOnTheServersNodeIsRefusedFromTheFirstBlockOn() throws IOException {
        try (TinyServer server = TinyServer.start(SERVERS_NODE); Client client = client(server.url, 11)) {
            List<Executable> calls = List.of(client::nextId, () -> client.nextIds(3),
                    () -> client.nextIdText("base62"), client::nextId, () -> client.nextIds(1));
            // The server answers every request: each call, not only the first, is refused.
            for (int i = 0; i < calls.size(); i++) {
                FlakeryException e = assertThrows(FlakeryException.class, calls.get(i), "call " + i + " is refused");
                assertEquals("invalid_argument", e.code(), e.toString());
                String message = e.getMessage();
                assertTrue(message.contains("fallback") && message.contains("(datacenterId 0, workerId 11)")
                        && message.contains(server.url), message);
            }
        }
    }

    @Test
    void aFallbackOfItsOwnNodeTakesOverWhenTheServerIsGone() throws IOException {
        TinyServer server = TinyServer.start(SERVERS_NODE);
        try (Client client = client(server.url, 12)) {
            assertEquals(11, client.decode(client.nextId()).workerId(), "the server's ID");
            server.close();
            int fallbackIds = 0;
            // Bounded: the stock (a few blocks of 16) runs out, then the fallback answers.
            for (int i = 0; i < 1000 && fallbackIds < 10; i++) {
                if (client.decode(client.nextId()).workerId() == 12) {
                    fallbackIds++;
                }
            }
            assertEquals(10, fallbackIds, "the fallback took over");
        } finally {
            server.close(); // again when the test got there: stopping a stopped server does nothing
        }
    }
}
