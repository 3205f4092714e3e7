package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The path of {@code nextId()}: FFM on Java 22 and later, JNI before (IdPath). */
class IdPathTest {
    private static final boolean FFM = Runtime.version().feature() >= 22;

    @Test
    void ffmServesOnJava22AndLaterJniBefore() {
        assertEquals(FFM ? "ffm" : "jni", IdPath.ACTIVE.name(), "fallback: " + IdPath.fallbackReason);
    }

    /**
     * The hot path itself answers (FFM's downcall, or JNI's nextIdFast, a critical native under
     * -XX:+CriticalJNINatives), not the JNI call behind it: IDs, increasing.
     */
    @Test
    void theDowncallIssuesIds() {
        try (Generator generator = wide()) {
            long previous = generator.nextId();
            int fast = 0;
            for (int i = 0; i < 1_000; i++) {
                long id = IdPath.ACTIVE.nextIdFast(generator.handle);
                if (id >= 0) {
                    assertTrue(id > previous, id + " after " + previous);
                    previous = id;
                    fast++;
                }
            }
            assertTrue(fast > 0, "no ID came from the hot path");
            assertTrue(generator.nextId() > previous);
        }
    }

    /**
     * Four threads through the active path, on the 4,096-a-millisecond layout so that used-up
     * ticks send calls on to JNI in between: every ID is unique and each thread's increase.
     */
    @Test
    void idsAreUniqueAndIncreaseAcrossThreads() throws InterruptedException {
        int threads = 4;
        int each = 50_000;
        long[][] ids = new long[threads][each];
        try (Generator generator = Generator.builder().layout("twitter").workerId(5).build()) {
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> running = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long[] mine = ids[t];
                Thread thread = new Thread(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < each; i++) {
                            mine[i] = generator.nextId();
                        }
                    } catch (Throwable e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                });
                thread.start();
                running.add(thread);
            }
            start.countDown();
            for (Thread thread : running) {
                thread.join();
            }
            assertEquals(List.of(), failures);
        }
        Set<Long> seen = new HashSet<>();
        for (long[] mine : ids) {
            for (int i = 0; i < each; i++) {
                assertTrue(i == 0 || mine[i] > mine[i - 1], "not increasing at " + i);
                assertTrue(seen.add(mine[i]), "duplicate " + mine[i]);
            }
        }
    }

    /** Errors come through the path as on JNI: the same exception, the same code. */
    @Test
    void aClosedGeneratorFailsWithLeaseLost() {
        Generator generator = wide();
        generator.nextId();
        generator.close();
        assertEquals(-1, IdPath.ACTIVE.nextIdFast(generator.handle));
        FlakeryException e = assertThrows(FlakeryException.class, generator::nextId);
        assertEquals("lease_lost", e.code());
    }

    /**
     * {@code close()} racing {@code nextId()} on other threads, round after round: a call
     * returns an ID or throws {@code lease_lost}, never anything else (no -1 of the downcall let
     * through, no crash: close releases the lease and the Cleaner alone frees the native
     * generator, once it is unreachable); no ID after a {@code lease_lost}, each thread's IDs
     * increase, and a call begun after {@code close()} returned throws.
     */
    @Test
    void closeRacingNextIdIsLeaseLostNeverAnIdAfterIt() throws InterruptedException {
        int threads = 3;
        for (int round = 0; round < 50; round++) {
            Generator generator = wide();
            CountDownLatch running = new CountDownLatch(threads);
            CountDownLatch closed = new CountDownLatch(1);
            List<Thread> callers = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        running.countDown();
                        long previous = -1;
                        boolean lost = false;
                        // Until close() has returned (the count only stops a broken close).
                        for (int i = 0; i < 100_000_000 && closed.getCount() > 0; i++) {
                            try {
                                long id = generator.nextId();
                                if (lost || id <= previous) {
                                    throw new AssertionError("ID " + id + " after " + (lost ? "lease_lost" : previous));
                                }
                                previous = id;
                            } catch (FlakeryException e) {
                                if (!e.code().equals("lease_lost")) {
                                    throw e;
                                }
                                lost = true;
                            }
                        }
                        closed.await();
                        FlakeryException e = assertThrows(FlakeryException.class, generator::nextId);
                        assertEquals("lease_lost", e.code());
                    } catch (Throwable e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                });
                thread.start();
                callers.add(thread);
            }
            running.await();
            // Vary where in the callers' loops the close lands.
            for (int spin = 0; spin < round * 40; spin++) {
                Thread.onSpinWait();
            }
            generator.close();
            closed.countDown();
            for (Thread thread : callers) {
                thread.join();
            }
            assertEquals(List.of(), failures, "round " + round);
        }
    }

    @Test
    void theBaselineAnswers42() {
        assertEquals(42, IdPath.ACTIVE.baseline(0));
    }

    private static Generator wide() {
        return Generator.builder().layout("time:41,worker:1,sequence:21;epoch=1288834974657").workerId(1).build();
    }
}
