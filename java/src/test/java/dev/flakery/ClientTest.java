package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Client} against real {@code flakery serve} instances on 127.0.0.1 (IdServer): IDs from
 * two servers on many threads, a server killed mid-way, every server down or paused, a bad
 * token, bad options, and the Java quick start of docs/client.md. Every ID is counted for
 * duplicates.
 */
@Tag("processes")
class ClientTest {
    private static final String TOKEN = "java-token-4a7c";

    /** Each thread's IDs, and every exception a thread met. */
    private static final class Taken {
        final List<Long> ids = Collections.synchronizedList(new ArrayList<>());
        final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    }

    private static Thread thread(Taken taken, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (RuntimeException e) {
                taken.errors.add(e);
            }
        });
        t.start();
        return t;
    }

    /**
     * Four threads take IDs with {@code take} (which adds what one call gave to the thread's
     * list); once a thread holds 500, {@code server} is killed, and each thread makes 1000 more
     * calls. Every ID (each thread's in its order) and every error a thread met.
     */
    private static Taken takeAcrossAKill(IdServer server, Consumer<List<Long>> take) throws InterruptedException {
        Taken taken = new Taken();
        CountDownLatch enough = new CountDownLatch(1);
        AtomicBoolean killed = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(thread(taken, () -> {
                List<Long> mine = new ArrayList<>();
                int after = 0;
                try {
                    while (after < 1000) {
                        take.accept(mine);
                        if (mine.size() >= 500) {
                            enough.countDown();
                        }
                        after += killed.get() ? 1 : 0;
                    }
                } finally {
                    taken.ids.addAll(mine);
                    enough.countDown(); // a thread that failed early lets the test see its error
                }
            }));
        }
        enough.await();
        server.kill();
        killed.set(true);
        for (Thread t : threads) {
            t.join();
        }
        return taken;
    }

    private static int duplicates(List<Long> ids) {
        Set<Long> seen = new HashSet<>();
        int dup = 0;
        for (long id : ids) {
            if (!seen.add(id)) {
                dup++;
            }
        }
        return dup;
    }

    private static FlakeryException fails(String code, Runnable call) {
        FlakeryException e = assertThrows(FlakeryException.class, call::run);
        assertEquals(code, e.code(), e::toString);
        return e;
    }

    @Test
    void idsFromTwoServersOnEightThreadsAreUniqueAndTheirs() throws Exception {
        try (IdServer a = IdServer.start("--worker-id", "11"); IdServer b = IdServer.start("--worker-id", "12")) {
            Client client = Client.builder().server(a.url()).server(b.url()).maxBlock(256).build();
            try (client) {
                assertEquals(List.of(a.url(), b.url()), client.servers());
                assertEquals("twitter", client.layout().toString());
                Taken taken = new Taken();
                List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    threads.add(thread(taken, () -> {
                        List<Long> mine = new ArrayList<>();
                        for (int i = 0; i < 100; i++) {
                            mine.add(client.nextId());
                            for (long id : client.nextIds(8)) {
                                mine.add(id);
                            }
                            mine.add(Flakery.fromBase62(client.nextIdText("base62")));
                        }
                        taken.ids.addAll(mine);
                    }));
                }
                for (Thread t : threads) {
                    t.join();
                }
                assertEquals(List.of(), taken.errors);
                assertEquals(8 * 1000, taken.ids.size());
                assertEquals(0, duplicates(taken.ids));
                Set<Long> workers = new HashSet<>();
                for (long id : taken.ids) {
                    workers.add(client.decode(id).workerId());
                }
                assertTrue(Set.of(11L, 12L).containsAll(workers), workers::toString);
                assertEquals(13, client.nextIdText("base32").length());
                assertTrue(Long.parseLong(client.nextIdText("decimal")) > 0);
                assertEquals(0, client.nextIds(0).length);
                fails("invalid_argument", () -> client.nextIdText("hex"));
                fails("invalid_argument", () -> client.nextIds(-1));
            }
            // Closed: what it held is dropped, and every later call fails with a stable code.
            assertTrue(fails("invalid_argument", client::nextId).getMessage().contains("closed"));
            fails("invalid_argument", () -> client.nextIds(3));
            client.close();
        }
    }

    @Test
    void aServerKilledMidWayCostsNoCallAndNoId() throws Exception {
        try (IdServer a = IdServer.start("--worker-id", "21"); IdServer b = IdServer.start("--worker-id", "22")) {
            try (Client client = Client.builder().server(a.url() + "," + b.url()).preferFirst(true).maxBlock(64)
                    .build()) {
                Taken taken = takeAcrossAKill(a, mine -> mine.add(client.nextId()));
                assertEquals(List.of(), taken.errors);
                assertEquals(0, duplicates(taken.ids));
                Set<Long> workers = new HashSet<>();
                for (long id : taken.ids) {
                    workers.add(client.decode(id).workerId());
                }
                assertEquals(Set.of(21L, 22L), workers);
                // Each thread made 1000 calls after the kill: its last ID is the second server's.
                assertEquals(22L, client.decode(taken.ids.get(taken.ids.size() - 1)).workerId());
            }
        }
    }

    @Test
    void everyServerDownIsServersUnavailable() throws Exception {
        String dead1 = "http://127.0.0.1:" + IdServer.freePort();
        String dead2 = "http://127.0.0.1:" + IdServer.freePort();
        try (Client client = Client.builder().server(dead1).server(dead2).timeoutMs(2000).build()) {
            List<Supplier<Object>> calls = List.of(client::nextId, () -> client.nextIds(10),
                    () -> client.nextIdText("base62"));
            for (Supplier<Object> call : calls) {
                FlakeryException e = fails("servers_unavailable", call::get);
                assertTrue(e.getMessage().contains(dead1) && e.getMessage().contains(dead2), e::getMessage);
            }
        }
    }

    /**
     * A fallback generator of its own datacenter ID takes over when the one server is killed:
     * no call fails, no ID repeats, and the calls after the kill end on the fallback's IDs.
     */
    @Test
    void aFallbackTakesOverWhenEveryServerIsKilled() throws Exception {
        try (IdServer a = IdServer.start("--worker-id", "31");
                Generator fallback = Generator.builder().datacenterId(7).workerId(31).build()) {
            try (Client client = Client.builder().server(a.url()).fallback(fallback).maxBlock(64).timeoutMs(2000)
                    .requestTimeoutMs(500).build()) {
                Taken taken = takeAcrossAKill(a, mine -> {
                    mine.add(client.nextId());
                    for (long id : client.nextIds(3)) {
                        mine.add(id);
                    }
                });
                assertEquals(List.of(), taken.errors);
                assertEquals(0, duplicates(taken.ids));
                Map<Long, Integer> byDatacenter = new java.util.TreeMap<>();
                for (long id : taken.ids) {
                    DecodedId parts = client.decode(id);
                    assertEquals(31L, parts.workerId());
                    byDatacenter.merge(parts.datacenterId(), 1, Integer::sum);
                }
                assertEquals(Set.of(0L, 7L), byDatacenter.keySet(), byDatacenter::toString);
                // 1000 calls after the kill outlast any block the client held: the last are the fallback's.
                assertEquals(7L, client.decode(taken.ids.get(taken.ids.size() - 1)).datacenterId());
                assertEquals(7L, client.decode(Flakery.fromBase62(client.nextIdText("base62"))).datacenterId());
            }
        }
    }

    /** With no server ever up, every call is the fallback's; a closed fallback is its own error. */
    @Test
    void noServerUpGivesTheFallbacksIdsAndAClosedFallbackFails() throws Exception {
        String dead = "http://127.0.0.1:" + IdServer.freePort();
        Generator fallback = Generator.builder().datacenterId(5).workerId(1).build();
        try (Client client = Client.builder().server(dead).fallback(fallback).timeoutMs(2000).build()) {
            long previous = 0;
            for (int i = 0; i < 50; i++) {
                long id = client.nextId();
                assertEquals(5L, client.decode(id).datacenterId());
                assertTrue(id > previous);
                previous = id;
            }
            for (long id : client.nextIds(5000)) {
                assertEquals(5L, client.decode(id).datacenterId());
                assertTrue(id > previous);
                previous = id;
            }
            fallback.close();
            fails("lease_lost", client::nextId);
        }
        // The same builder without a fallback: the servers' error.
        try (Client client = Client.builder().server(dead).timeoutMs(2000).build()) {
            fails("servers_unavailable", client::nextId);
        }
    }

    /** A refused token is a configuration to fix: the fallback is not used for it. */
    @Test
    void aRefusedTokenDoesNotFallBack() throws Exception {
        try (IdServer a = IdServer.start(Map.of("FLAKERY_SERVER_TOKEN", TOKEN));
                Generator fallback = Generator.builder().datacenterId(5).workerId(2).build();
                Client client = Client.builder().server(a.url()).token("wrong-token").fallback(fallback).build()) {
            fails("unauthorized", client::nextId);
            fails("unauthorized", () -> client.nextIds(10));
        }
    }

    /** The order of events: with both servers stopped the call fails while they still are. */
    @Test
    void everyServerPausedFailsBeforeTheyResume() throws Exception {
        try (IdServer a = IdServer.start(); IdServer b = IdServer.start()) {
            try (Client client = Client.builder().server(a.url()).server(b.url()).timeoutMs(3000)
                    .requestTimeoutMs(1000).build()) {
                a.signal("STOP");
                b.signal("STOP");
                try {
                    FlakeryException e = fails("servers_unavailable", client::nextId);
                    assertTrue(a.alive() && b.alive());
                    assertTrue(e.getMessage().contains(a.url()) && e.getMessage().contains(b.url()), e::getMessage);
                } finally {
                    a.signal("CONT");
                    b.signal("CONT");
                }
            }
            try (Client client = Client.builder().server(a.url()).server(b.url()).build()) {
                assertTrue(client.nextId() > 0);
            }
        }
    }

    @Test
    void aBadTokenIsUnauthorizedAndNeverShown() throws Exception {
        String wrong = "wrong-token-0b3e";
        try (IdServer a = IdServer.start(Map.of("FLAKERY_SERVER_TOKEN", TOKEN))) {
            for (Client client : List.of(Client.builder().server(a.url()).token(wrong).build(),
                    Client.builder().server(a.url()).build())) {
                try (client) {
                    assertFalse(client.toString().contains(wrong), client::toString);
                    FlakeryException e = fails("unauthorized", client::nextId);
                    assertTrue(e.getMessage().contains("401") && e.getMessage().contains(a.url()), e::getMessage);
                    assertFalse(e.toString().contains(wrong) || e.toString().contains(TOKEN), e::toString);
                }
            }
            FlakeryException e = fails("invalid_argument",
                    () -> Client.builder().server(a.url()).token(" " + TOKEN).build());
            assertFalse(e.getMessage().contains(TOKEN), e::getMessage);
            e = fails("invalid_argument",
                    () -> Client.builder().server("http://user:" + TOKEN + "@127.0.0.1:" + a.port).build());
            assertFalse(e.getMessage().contains(TOKEN), e::getMessage);
            try (Client right = Client.builder().server(a.url()).token(TOKEN).build()) {
                assertFalse(right.toString().contains(TOKEN));
                assertTrue(right.nextId() > 0);
            }
        }
    }

    @Test
    void badOptionsAreInvalidArgument() throws Exception {
        String url = "http://127.0.0.1:" + IdServer.freePort();
        fails("invalid_argument", () -> Client.builder().build());
        fails("invalid_argument", () -> Client.builder().server("ftp://127.0.0.1:1").build());
        fails("invalid_argument", () -> Client.builder().server(url).minBlock(0).build());
        fails("invalid_argument", () -> Client.builder().server(url).minBlock(20).maxBlock(10).build());
        fails("invalid_argument", () -> Client.builder().server(url).maxBlock(100_001).build());
        // A duration as Java wrote it, named as Java spells it: never a Rust Duration ("not 0ns").
        assertEquals("maxAgeMs must be at least 1, not 0",
                fails("invalid_argument", () -> Client.builder().server(url).maxAgeMs(0).build()).getMessage());
        assertEquals("timeoutMs must be at least 1, not 0",
                fails("invalid_argument", () -> Client.builder().server(url).timeoutMs(0).build()).getMessage());
        assertEquals("requestTimeoutMs must be at least 1, not 0",
                fails("invalid_argument", () -> Client.builder().server(url).requestTimeoutMs(0).build()).getMessage());
        Client.builder().server(url).maxAgeMs(1).timeoutMs(1).requestTimeoutMs(1).build().close();
        fails("invalid_argument", () -> Client.builder().server(url).timeoutMs(-1).build());
        fails("invalid_layout", () -> Client.builder().server(url).layout("nope").build());
        try (Client client = Client.builder().server(" " + url + " , ").layout(Layout.parse("discord")).build()) {
            assertEquals(List.of(url), client.servers());
            assertEquals("Client[servers=[" + url + "], layout=discord]", client.toString());
        }
    }

    @Test
    void theJavaQuickStartOfTheDocsRuns(@TempDir Path dir) throws Exception {
        Path root = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
        String page = Files.readString(root.resolve("docs/client.md"));
        Matcher block = Pattern.compile("## Java quick start.*?```java\n(.*?)```", Pattern.DOTALL).matcher(page);
        assertTrue(block.find(), "docs/client.md has no Java quick start");
        try (IdServer a = IdServer.start("--worker-id", "9");
                IdServer b = IdServer.start("--worker-id", "9", "--datacenter-id", "1")) {
            String source = block.group(1);
            assertTrue(source.contains("http://127.0.0.1:8080") && source.contains("http://127.0.0.1:8081"));
            source = source.replace("http://127.0.0.1:8080", a.url()).replace("http://127.0.0.1:8081", b.url());
            Path file = dir.resolve("QuickStart.java");
            Files.writeString(file, source);
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            List<String> command = new ArrayList<>(List.of(java.toString(), "-cp",
                    System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))));
            if (Runtime.version().feature() >= 22) {
                command.add("--enable-native-access=ALL-UNNAMED"); // as docs/java.md says
            }
            command.add(file.toString());
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().keySet().removeIf(k -> k.startsWith("FLAKERY_"));
            Process process = builder.start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, process.waitFor(), out);
            String[] lines = out.strip().split("\n");
            assertEquals(2, lines.length, out);
            assertTrue(lines[0].endsWith(" worker 9"), out);
            assertEquals(11, lines[1].length(), out);
        }
    }
}
