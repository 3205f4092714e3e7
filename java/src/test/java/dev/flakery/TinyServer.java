package dev.flakery;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/** What the tests that need no real server ask a {@link Client} to talk to. */
final class TinyServer implements AutoCloseable {
    private final HttpServer server;
    /** The server's URL. */
    final String url;

    private TinyServer(HttpServer server) {
        this.server = server;
        this.url = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    /**
     * A tiny {@code flakery serve} on 127.0.0.1: its layout and increasing IDs, the two routes a
     * client uses (docs/server.md); enough for a client's whole path through the network.
     */
    static TinyServer start() throws IOException {
        return start(1L << 40);
    }

    /** As {@link #start()}, its IDs counting up from {@code firstId} (and so on its node ID). */
    static TinyServer start(long firstId) throws IOException {
        return start(firstId, 0);
    }

    /** As {@link #start()}, each answer of IDs sent at least {@code delayMs} after its request. */
    static TinyServer slow(long delayMs) throws IOException {
        return start(1L << 40, delayMs);
    }

    private static TinyServer start(long firstId, long delayMs) throws IOException {
        // The headers and the body go out as two writes: without TCP_NODELAY the second waits
        // for the client's delayed ACK (40 ms a request).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        AtomicLong next = new AtomicLong(firstId);
        server.createContext("/v1/layout", exchange -> answer(exchange, "{\"spec\":\"twitter\"}"));
        server.createContext("/v1/ids", exchange -> {
            int count = Integer.parseInt(exchange.getRequestURI().getQuery().replace("count=", ""));
            try {
                Thread.sleep(delayMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            StringBuilder body = new StringBuilder();
            long first = next.getAndAdd(count);
            for (int i = 0; i < count; i++) {
                body.append(first + i).append('\n');
            }
            answer(exchange, body.toString());
        });
        server.start();
        return new TinyServer(server);
    }

    private static void answer(HttpExchange exchange, String text) throws IOException {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    static String closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "http://127.0.0.1:" + socket.getLocalPort();
        }
    }
}
