package dev.flakery;

/**
 * How {@link Generator#nextId()} reaches the native library, chosen once at run time: on Java
 * 22 and later a downcall of the Foreign Function and Memory API ({@code FfmIdPath}, compiled
 * with {@code --release 22} into the same jar and loaded only there), else the JNI method
 * {@link Native#nextId}. One jar for every Java from 17: a run-time choice rather than a
 * multi-release jar, so that the unit tests (which run on the classes directory, where
 * {@code META-INF/versions} means nothing) take the same path a user of the jar does.
 *
 * <p>{@code -Dflakery.ffm=false} keeps JNI on any Java (the benchmarks set both side by side).
 * If the FFM path cannot be set up on Java 22 or later, JNI serves and {@link #fallbackReason}
 * says why.
 */
abstract class IdPath {
    /** The path every {@code nextId()} takes: a constant, so the JIT inlines its one method. */
    static final IdPath ACTIVE;

    /** Why FFM does not serve on a Java that has it, or {@code null}. */
    static final String fallbackReason;

    static {
        Native.ensureLoaded();
        IdPath chosen = new Jni();
        String reason = null;
        if (Runtime.version().feature() >= 22 && !"false".equals(System.getProperty("flakery.ffm"))) {
            try {
                chosen = (IdPath) Class.forName("dev.flakery.FfmIdPath").getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
                reason = e.toString();
            }
        }
        ACTIVE = chosen;
        fallbackReason = reason;
    }

    /** {@code "ffm"} or {@code "jni"}. */
    abstract String name();

    /** A new ID of the generator behind {@code handle}, or its error as a {@link FlakeryException}. */
    abstract long nextId(long handle);

    /** The core's hot path alone, without the JNI call {@code nextId} behind it: an ID, or -1. */
    abstract long nextIdFast(long handle);

    /** A bare call of {@code nextId}'s shape that returns 42 (bench/java's baseline). */
    abstract long baseline(long handle);

    /**
     * Java 17 to 21, or FFM turned off: {@code nextIdFast} then {@code nextId}, two JNI methods,
     * so that Java 17 to 21 run with {@code -XX:+CriticalJNINatives} call the first as a critical
     * native (docs/java.md); without the flag it costs what one {@code nextId} call did.
     */
    static final class Jni extends IdPath {
        @Override
        String name() {
            return "jni";
        }

        @Override
        long nextId(long handle) {
            // Two native calls only when the hot path has no ID (a used-up millisecond, a lease
            // to renew, an error); the first is a critical native under -XX:+CriticalJNINatives.
            long id = Native.nextIdFast(handle);
            return id >= 0 ? id : Native.nextId(handle);
        }

        @Override
        long nextIdFast(long handle) {
            return Native.nextIdFast(handle);
        }

        @Override
        long baseline(long handle) {
            return Native.benchmarkBaselineConstant(handle);
        }
    }
}
