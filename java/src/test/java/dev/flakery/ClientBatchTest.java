package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * One {@link Client#nextIds} call, one deadline: the binding fills a batch 4,096 IDs at a time
 * (bindings-java/src/handles.rs), and each chunk had a deadline of its own, so one call could
 * last a timeout per chunk.
 */
class ClientBatchTest {
    /** The binding's chunk. */
    private static final int CHUNK = 4096;

    /**
     * Each answer comes at least 300 ms after its request, and each chunk needs one (blocks of
     * exactly a chunk, no prefetch, one request at a time): the fourth cannot come before
     * 1,200 ms, after the call's one deadline of 1,004 ms (the timeout and 4 ms to make 16,384
     * IDs), however slow the machine. With a deadline a chunk, all four came.
     */
    @Test
    void aBatchOfChunksFailsWithinItsOneDeadline() throws Exception {
        try (TinyServer server = TinyServer.slow(300);
                Client client = Client.builder().server(server.url).minBlock(CHUNK).maxBlock(CHUNK)
                        .prefetch(false).timeoutMs(1000).requestTimeoutMs(1000).build()) {
            FlakeryException e = assertThrows(FlakeryException.class, () -> client.nextIds(4 * CHUNK));
            assertEquals("servers_unavailable", e.code(), e.getMessage());
            assertTrue(e.getMessage().contains("within 1004 ms (the timeout, 1000 ms, and 4 ms to make 16384 IDs"),
                    "the whole call's deadline, not a chunk's: " + e.getMessage());
        }
    }
}
