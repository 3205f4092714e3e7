package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leaf's switch on a real clock step: a JVM under libfaketime (its offset read from a file
 * that this test rewrites) has the clock set back 10 s between two {@code get} calls, and
 * answers as Leaf's {@code SnowflakeIDGenImpl} does for a step back of more than its 5 ms,
 * {@code Result{id=-3, status=EXCEPTION}}; once the clock is set right, IDs come again, above
 * every ID before the step.
 */
@Tag("processes")
class LeafClockTest {
    private static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");

    private static final String PROGRAM = """
            import dev.flakery.Generator;
            import dev.flakery.compat.leaf.FlakeryIDGen;
            import dev.flakery.compat.leaf.Result;
            import dev.flakery.compat.leaf.Status;
            import java.io.BufferedReader;
            import java.io.InputStreamReader;

            public class Check {
                public static void main(String[] args) throws Exception {
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
                    // Leaf waits out a step back of up to 5 ms: so does this generator.
                    try (FlakeryIDGen gen = new FlakeryIDGen(Generator.builder().layout(FlakeryIDGen.LEAF_LAYOUT)
                            .workerId(1).backwardsToleranceMs(5).build())) {
                        Result first = gen.get("order");
                        System.out.println(first.getStatus() + " " + first.getId());
                        for (String line; (line = in.readLine()) != null; ) {
                            // libfaketime reads its file at most once a second: the step shows
                            // within that second, and the loop ends when it does.
                            Status wanted = Status.valueOf(line);
                            Result result;
                            while ((result = gen.get("order")).getStatus() != wanted) {
                                Thread.sleep(1);
                            }
                            System.out.println(result);
                        }
                    }
                }
            }
            """;

    @Test
    void aClockSetBackIsLeafsMinusThree(@TempDir Path dir) throws Exception {
        assertTrue(Files.exists(LIBFAKETIME), "libfaketime is not installed (tests/java/run.sh installs it)");
        Path offset = dir.resolve("faketime");
        Files.writeString(offset, "+0\n");
        Path program = dir.resolve("Check.java");
        Files.writeString(program, PROGRAM);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                program.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().keySet().removeIf(name -> name.startsWith("FLAKERY_"));
        builder.environment().put("LD_PRELOAD", LIBFAKETIME.toString());
        builder.environment().put("FAKETIME_TIMESTAMP_FILE", offset.toString());
        builder.environment().put("FAKETIME_CACHE_DURATION", "1");
        // The wall clock steps; the JVM's own timers keep the monotonic clock.
        builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        Process process = builder.start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                Writer in = process.outputWriter(StandardCharsets.UTF_8)) {
            String[] first = out.readLine().split(" ");
            assertEquals("SUCCESS", first[0]);
            long before = Long.parseLong(first[1]);

            Files.writeString(offset, "-10\n");
            in.write("EXCEPTION\n");
            in.flush();
            assertEquals("Result{id=-3, status=EXCEPTION}", out.readLine());

            Files.writeString(offset, "+0\n");
            in.write("SUCCESS\n");
            in.flush();
            String again = out.readLine();
            assertTrue(again.startsWith("Result{id=") && again.endsWith(", status=SUCCESS}"), again);
            long after = Long.parseLong(again.substring("Result{id=".length(), again.indexOf(',')));
            assertTrue(after > before, after + " is not above " + before);
        }
        assertEquals(0, process.waitFor());
    }
}
