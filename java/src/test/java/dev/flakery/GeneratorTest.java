package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GeneratorTest {
    @Test
    void idsCarryTheNodeAndIncrease() {
        try (Generator generator = Generator.builder().layout("twitter").datacenterId(3).workerId(7).build()) {
            assertEquals(3, generator.datacenterId());
            assertEquals(7, generator.workerId());
            assertEquals("twitter", generator.layout().toString());
            long before = System.currentTimeMillis();
            long previous = generator.nextId();
            for (int i = 0; i < 10_000; i++) {
                long id = generator.nextId();
                assertTrue(id > previous);
                previous = id;
            }
            DecodedId parts = generator.decode(previous);
            assertEquals(3, parts.datacenterId());
            assertEquals(7, parts.workerId());
            assertTrue(parts.timestampMs() >= before - 1, parts.toString());
            assertEquals(previous, generator.compose(parts.timestampMs(), 3, 7, parts.sequence()));
            long[] batch = generator.nextIds(10_000);
            assertEquals(10_000, batch.length);
            assertTrue(batch[0] > previous);
            for (int i = 1; i < batch.length; i++) {
                assertTrue(batch[i] > batch[i - 1]);
            }
        }
    }

    @Test
    void everyOptionOfTheBuilderReachesTheCore(@TempDir Path leases) {
        try (Generator generator = Generator.builder().layout(Layout.parse("vesta-max-peak")).workerId(5)
                .sequencePolicy(SequencePolicy.BORROW).maxBorrowMs(50).backwardsToleranceMs(10)
                .randomSequenceStart(true).field("method", 2).namespace("java-test").sessionTimeoutMs(4000)
                .leaseDir(leases).build()) {
            assertEquals(2, generator.decode(generator.nextId()).fields().get("method"));
            assertEquals(5, generator.workerId());
        }
        // With no node ID given, the node comes from a host lease in leaseDir, in this namespace.
        try (Generator generator = Generator.builder().namespace("java-test").leaseDir(leases).build()) {
            generator.nextId();
            assertTrue(listed(leases).stream().anyMatch(name -> name.startsWith("flakery.java-test.")),
                    listed(leases).toString());
        } catch (FlakeryException e) {
            // In a container the implicit host lease is refused, as docs/spec.md#node-identity says.
            assertEquals("coordinator_unavailable", e.code(), e.getMessage());
        }
    }

    static List<String> listed(Path dir) {
        try (var files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).toList();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void theBuilderHasEveryOptionOfTheCoresTable() {
        Set<String> methods = new HashSet<>();
        for (java.lang.reflect.Method method : Generator.Builder.class.getMethods()) {
            if (method.getReturnType() == Generator.Builder.class) {
                methods.add(method.getName());
            }
        }
        // `fields` is set one field at a time: field(name, value).
        List<String> options = List.of(Native.optionNames());
        assertTrue(options.size() >= 14, options.toString());
        for (String option : options) {
            assertTrue(methods.contains(option.equals("fields") ? "field" : option), option + " in " + methods);
        }
    }

    @Test
    void leaseStatusIsTheCoresReport() {
        Generator generator = Generator.builder().workerId(2).build();
        LeaseStatus held = generator.leaseStatus();
        assertEquals("held", held.state());
        assertTrue(held.canIssue());
        assertTrue(held.coordinator().isEmpty());
        generator.close();
        LeaseStatus closed = generator.leaseStatus();
        assertEquals("released", closed.state(), closed.toString());
        assertFalse(closed.canIssue());
    }

    @Test
    void closedMeansLeaseLost() {
        Generator generator = Generator.builder().workerId(2).build();
        generator.nextId();
        generator.close();
        FlakeryException e = assertThrows(FlakeryException.class, generator::nextId);
        assertEquals("lease_lost", e.code(), e.getMessage());
        e = assertThrows(FlakeryException.class, () -> generator.nextIds(3));
        assertEquals("lease_lost", e.code());
        generator.close();
    }

    @Test
    void manyThreadsNoDuplicateIncreasingPerThread() throws Exception {
        int threads = 8;
        int each = 50_000;
        long[][] seen = new long[threads][];
        try (Generator generator = Generator.builder().workerId(9).build()) {
            CountDownLatch start = new CountDownLatch(1);
            Thread[] workers = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                int index = t;
                workers[t] = new Thread(() -> {
                    long[] ids = new long[each];
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    for (int i = 0; i < each; i++) {
                        ids[i] = (i % 100 == 99) ? generator.nextIds(1)[0] : generator.nextId();
                    }
                    seen[index] = ids;
                });
                workers[t].start();
            }
            start.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
        }
        Set<Long> all = new HashSet<>();
        for (long[] ids : seen) {
            for (int i = 0; i < ids.length; i++) {
                assertTrue(all.add(ids[i]), "duplicate " + ids[i]);
                if (i > 0) {
                    assertTrue(ids[i] > ids[i - 1], "decreasing in a thread");
                }
            }
        }
        assertEquals(threads * each, all.size());
    }

    @Test
    void nextIdAllocatesNothing() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Generator generator = Generator.builder().workerId(4).build()) {
            long sum = 0;
            // Warm up: the JIT compiles the call (allocations of the interpreter and of class
            // loading happen here, not below).
            for (int i = 0; i < 200_000; i++) {
                sum += generator.nextId();
            }
            long thread = Thread.currentThread().getId();
            long before = threads.getThreadAllocatedBytes(thread);
            for (int i = 0; i < 1_000_000; i++) {
                sum += generator.nextId();
            }
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            // A single allocation per call would be at least 16 MB; the measuring itself may
            // allocate a little.
            assertTrue(allocated < 64 * 1024, allocated + " bytes allocated over 1,000,000 calls (" + sum + ")");
        }
    }

    @Test
    void theBenchmarkBaselineIsLinked() {
        // bench/java's floor: a native method of nextId's shape that answers without the core.
        assertEquals(42, Native.benchmarkBaselineConstant(7));
    }

    @Test
    void theProcessWideGenerator() {
        // Its node comes from a host lease in FLAKERY_LEASE_DIR (tests/java/run.sh); JarIT
        // checks that it takes FLAKERY_WORKER_ID.
        long a = Flakery.nextId();
        long b = Flakery.nextId();
        assertTrue(b > a);
        long[] more = Flakery.nextIds(5);
        assertTrue(more[0] > b);
        for (int i = 1; i < more.length; i++) {
            assertTrue(more[i] > more[i - 1]);
        }
    }

    @Test
    void layoutsAndPresets() {
        List<String> presets = Layout.presets();
        assertTrue(presets.containsAll(List.of("twitter", "discord", "sonyflake", "baidu")), presets.toString());
        for (String name : presets) {
            assertEquals(name, Layout.parse(name).toString());
        }
        Layout custom = Layout.parse("time:41,worker:10,sequence:12;epoch=1288834974657");
        assertEquals(List.of("time", "worker", "sequence"),
                custom.fields().stream().map(Layout.Field::name).toList());
        assertEquals(new Layout.Field("worker", "worker", 12, 10, 0), custom.fields().get(1));
        assertEquals(1288834974657L, custom.epochMs());
        assertEquals(1, custom.unitMs());
        // Equal by what they are, not how they were spelled; another layout is not equal.
        assertEquals(Layout.parse("twitter"),
                Layout.parse("time:41,datacenter:5,worker:5,sequence:12;epoch=2010-11-04T01:42:54.657Z"));
        assertNotEquals(Layout.parse("twitter"), Layout.parse("sonyflake"));
        assertTrue(Layout.parse("discord").isUnsigned());
    }
}
