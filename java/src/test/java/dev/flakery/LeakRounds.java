package dev.flakery;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.stream.Collectors;

/**
 * The program LeakTest runs in a JVM of its own (a fixed, pre-touched heap): one round of
 * public calls, named by its first argument, made WARMUP times and then ROUNDS times in
 * SEGMENTS segments; it prints how much the process's resident set (VmRSS: JNI's allocations
 * are outside the Java heap, which Native Memory Tracking does not see either) grew over each
 * segment, read after {@code System.gc()}. The clients' server (the second argument) is LeakTest's, in the test's
 * JVM: the JDK's HttpServer grows the JVM it runs in by megabytes of its own.
 */
final class LeakRounds {
    static final int WARMUP = 30_000;
    static final int ROUNDS = 100_000;
    /** The measured rounds in segments, the resident set read after each. */
    static final int SEGMENTS = 10;

    private LeakRounds() {}

    public static void main(String[] args) throws Exception {
        IntConsumer round = switch (args[0]) {
            case "generator" -> generator();
            case "generatorsMadeAndClosed" -> generatorsMadeAndClosed();
            case "layoutAndDecode" -> layoutAndDecode();
            case "composeAndText" -> composeAndText();
            case "errors" -> errors();
            case "client" -> client(args[1]);
            case "clientsMadeAndClosed" -> clientsMadeAndClosed(args[1]);
            default -> throw new IllegalArgumentException(args[0]);
        };
        for (int i = 0; i < WARMUP; i++) {
            round.accept(i);
        }
        long[] steps = new long[SEGMENTS];
        long before = resident();
        long last = before;
        for (int segment = 0; segment < SEGMENTS; segment++) {
            for (int i = 0; i < ROUNDS / SEGMENTS; i++) {
                round.accept(i);
            }
            long now = resident();
            steps[segment] = now - last;
            last = now;
        }
        // "steps" is read by LeakTest: the growth of each segment, in order, then in total.
        System.out.println("steps " + Arrays.stream(steps).mapToObj(Long::toString).collect(Collectors.joining(" "))
                + " total " + (last - before));
    }

    /** VmRSS in bytes, after the collector ran (and with it the handles' Cleaner's work). */
    static long resident() throws IOException, InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            // The Cleaner's thread frees the handles of unreachable objects after a collection.
            Thread.sleep(100);
        }
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    /** {@code call} must throw a FlakeryException: its code and message are read, as a log would. */
    static void refused(String code, Runnable call) {
        try {
            call.run();
        } catch (FlakeryException e) {
            if (!e.code().equals(code) || e.getMessage().isEmpty()) {
                throw new AssertionError("expected " + code + ", got " + e);
            }
            return;
        }
        throw new AssertionError("no " + code + " was thrown");
    }

    static IntConsumer generator() {
        Generator generator = Generator.builder().workerId(11).sequencePolicy(SequencePolicy.BORROW).build();
        Flakery.nextId();
        return i -> {
            generator.nextId();
            generator.nextIds(3);
            generator.datacenterId();
            generator.workerId();
            generator.leaseStatus();
            generator.layout();
            generator.constants();
            Flakery.nextId();
            Flakery.nextIds(2);
            Flakery.version();
            Flakery.optionNames();
        };
    }

    static IntConsumer generatorsMadeAndClosed() {
        return i -> {
            try (Generator generator = Generator.builder().workerId(12).layout("sonyflake").build()) {
                generator.nextId();
                generator.leaseStatus();
            }
            Generator.builder().layout("vesta-max-peak").workerId(3).field("method", 2)
                    .randomSequenceStart(true).build().nextId();
        };
    }

    static IntConsumer layoutAndDecode() {
        Layout layout = Layout.parse("time:41,worker:10,sequence:12;epoch=2020-01-01T00:00:00Z");
        Layout vesta = Layout.parse("vesta-max-peak");
        Generator generator = Generator.builder().workerId(13).build();
        long[] ids = generator.nextIds(1000);
        return i -> {
            long id = ids[i % 1000];
            DecodedId decoded = generator.decode(id);
            decoded.instant();
            layout.decode(id).fields();
            vesta.decode(id);
            layout.instant(id);
            Layout parsed = Layout.parse("time:41,datacenter:5,worker:5,sequence:12;epoch=" + (2000 + i % 10) + "-01-01T00:00:00Z");
            parsed.fields();
            parsed.epochMs();
            parsed.unitMs();
            parsed.isUnsigned();
            parsed.toString();
            if (parsed.equals(layout) || parsed.hashCode() == 0) {
                throw new AssertionError("two layouts of other epochs are equal");
            }
            Layout.parse("discord");
            if (i % 100 == 0) {
                Layout.presets();
            }
        };
    }

    static IntConsumer composeAndText() {
        Layout twitter = Layout.parse("twitter");
        Layout vesta = Layout.parse("vesta-max-peak");
        Generator generator = Generator.builder().workerId(14).build();
        return i -> {
            long id = twitter.compose(1_700_000_000_000L + i, 0, i % 32, 7);
            generator.compose(1_700_000_000_000L + i, 0, 1, 2);
            vesta.compose(1_500_000_000_000L, 0, 5, 0, Map.of("method", 1L));
            if (Flakery.fromBase32(Flakery.toBase32(id)) != id || Flakery.fromBase62(Flakery.toBase62(id)) != id) {
                throw new AssertionError("text forms of " + id);
            }
        };
    }

    static IntConsumer errors() {
        Layout twitter = Layout.parse("twitter");
        Generator closed = Generator.builder().workerId(15).build();
        closed.close();
        return i -> {
            refused("invalid_layout", () -> Layout.parse("time:41,worker:" + (30 + i % 9)));
            refused("invalid_argument", () -> Flakery.fromBase32("!!"));
            refused("invalid_argument", () -> Flakery.fromBase62("z".repeat(40)));
            refused("invalid_argument", () -> Flakery.fromBase62(null));
            refused("invalid_argument", () -> Flakery.toBase62(-5));
            refused("invalid_argument", () -> twitter.compose(0, 0, 1 << 20, 0));
            refused("invalid_argument", () -> twitter.compose(0, 0, 1, 0, Map.of("x", 1L)));
            refused("invalid_argument", () -> Generator.builder().workerId(5000).build());
            refused("invalid_argument", () -> Generator.builder().workerId(1).field("nope", 1).build());
            refused("lease_lost", closed::nextId);
            refused("lease_lost", () -> closed.nextIds(5));
            refused("invalid_argument", () -> Flakery.nextIds(-1));
            refused("invalid_argument", () -> Client.builder().server("ftp://127.0.0.1:1").build());
        };
    }

    static IntConsumer client(String server) throws IOException {
        Client client = Client.builder().server(server).minBlock(16).maxBlock(64).token("t0ken").build();
        Client withFallback = Client.builder().server(TinyServer.closedPort())
                .fallback(Generator.builder().workerId(16).build()).build();
        Client without = Client.builder().server(TinyServer.closedPort()).server(TinyServer.closedPort()).build();
        return i -> {
            client.nextId();
            client.nextIds(3);
            client.nextIdText("base62");
            client.layout();
            client.servers();
            client.toString();
            client.decode(i + 1);
            withFallback.nextId();
            refused("servers_unavailable", without::nextId);
            refused("servers_unavailable", () -> without.nextIds(2));
        };
    }

    static IntConsumer clientsMadeAndClosed(String server) {
        return i -> {
            try (Client client = Client.builder().server(server).minBlock(16).maxBlock(16).build()) {
                if (i % 10 == 0) {
                    client.nextId(); // the client's thread and connection, made and ended
                }
            }
            refused("invalid_argument", () -> Client.builder().server("http://u:p@127.0.0.1:1").build());
        };
    }
}
