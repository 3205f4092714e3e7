package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code close()} is final (issue 33): a {@link Client} closed before its first call, or after
 * its use, refuses every later call, whether a server would answer or its fallback would.
 */
class ClosedClientTest {
    private static final Map<String, String> REFUSED = Map.of("nextId", "invalid_argument", "nextIds",
            "invalid_argument", "nextIdText", "invalid_argument");

    private static TinyServer server;

    @BeforeAll
    static void start() throws IOException {
        server = TinyServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Every call that hands out IDs, each with the code it threw, or "ids". */
    private static Map<String, String> calls(Client client) {
        Map<String, Supplier<Object>> calls = new LinkedHashMap<>();
        calls.put("nextId", client::nextId);
        calls.put("nextIds", () -> client.nextIds(3));
        calls.put("nextIdText", () -> client.nextIdText("base62"));
        Map<String, String> result = new LinkedHashMap<>();
        calls.forEach((name, call) -> {
            try {
                call.get();
                result.put(name, "ids");
            } catch (FlakeryException e) {
                result.put(name, e.code());
            }
        });
        return result;
    }

    @Test
    void aClientClosedBeforeItsFirstCallRefusesEveryCall() throws IOException {
        Client served = Client.builder().server(server.url).build();
        Client fallingBack = Client.builder().server(TinyServer.closedPort())
                .fallback(Generator.builder().workerId(21).build()).build();
        for (Client client : new Client[] {served, fallingBack}) {
            client.close();
            assertEquals(REFUSED, calls(client), client.toString());
            assertEquals(REFUSED, calls(client), "and again: " + client);
        }
    }

    @Test
    void aClientClosedAfterUseRefusesEveryCall() {
        Client client = Client.builder().server(server.url).build();
        assertEquals(10, client.nextIds(10).length);
        client.close();
        assertEquals(REFUSED, calls(client));
    }
}
