package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Native memory (issue 33): every public call of the package, 100,000 rounds of it, leaves the
 * JVM's resident set where it was. Each round runs in a JVM of its own (LeakRounds) whose heap
 * is fixed and touched at start ({@code -Xms} = {@code -Xmx}, {@code AlwaysPreTouch}), so that
 * only native memory (JNI's, Rust's, the JIT's) can grow it; a warm-up run of 30,000 rounds
 * lets the JIT, the allocator and the caches reach their steady size first.
 *
 * <p>A leak grows the process in every segment of the measured rounds; what else moves it is a
 * step in one segment: the handles' Cleaner falling behind on a loaded machine (objects made
 * and dropped: up to 29 MB once), the JIT, the allocator's heap. So the bound is on the median
 * segment's growth times the segments. A leak of 30 bytes a round makes it 3 MB; measured without
 * one it was 0 to 8 kB, and the bound is 1.5 MB. Breaking the binding once (a Rust
 * {@code Box::leak} of 32 bytes in {@code Native.decode}) failed the rounds layoutAndDecode
 * (19.5 MB) and client (5.2 MB); a JNI global reference never deleted in {@code toText} failed
 * composeAndText (11.7 MB) and errors (5.8 MB).
 *
 * <p>Tagged "leaks", not "processes": tests/java/run.sh runs it on Java 17 and on Java 25, whose
 * JNI and allocator differ (the other child-JVM tests run on Java 17 only).
 */
@Tag("leaks")
class LeakTest {
    static final long BOUND = 1_500_000;

    @ParameterizedTest
    @ValueSource(strings = {"generator", "generatorsMadeAndClosed", "layoutAndDecode", "composeAndText", "errors",
        "client", "clientsMadeAndClosed"})
    void roundsLeaveNativeMemoryAsItWas(String round) throws IOException, InterruptedException {
        try (TinyServer server = TinyServer.start()) {
            run(round, server.url);
        }
    }

    private static void run(String round, String server) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new java.util.ArrayList<>(List.of(java.toString(), "-Xms96m", "-Xmx96m", "-Xmn4m",
                "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.library.path=/nonexistent"));
        if (Runtime.version().feature() >= 22) {
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), LeakRounds.class.getName(), round, server));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        // tests/java/run.sh's lease directory stays: the process-wide generator leases there.
        builder.environment().keySet().removeIf(name -> name.startsWith("FLAKERY_") && !name.equals("FLAKERY_LEASE_DIR"));
        // One malloc arena: the client's threads allocate where the caller's thread does, so
        // that no arena of their own steps the resident set up or down once.
        builder.environment().put("MALLOC_ARENA_MAX", "1");
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, process.waitFor(), round + " ended with an error: " + out);
        assertTrue(out.startsWith("steps "), out);
        String[] words = out.split(" ");
        long[] steps = new long[LeakRounds.SEGMENTS];
        for (int i = 0; i < steps.length; i++) {
            steps[i] = Long.parseLong(words[1 + i]);
        }
        System.out.println(round + ": the resident set grew by " + out.substring("steps ".length())
                + " bytes over " + LeakRounds.ROUNDS + " rounds");
        long[] sorted = steps.clone();
        Arrays.sort(sorted);
        long slope = sorted[steps.length / 2] * steps.length;
        assertTrue(slope < BOUND, LeakRounds.ROUNDS + " rounds of " + round + " grew the JVM by " + out
                + " bytes: every segment grows it (" + slope + " bytes over the rounds at the median segment's rate, "
                + "bound " + BOUND + "): native memory that is never freed");
    }
}
