package dev.flakery;

/**
 * The benchmarks' way to the JNI baseline ({@code Native} is package-private, and the jar
 * offers no such call): in flakery's package, on the benchmarks' classpath only.
 */
public final class BenchmarkBaseline {
    private BenchmarkBaseline() {}

    /**
     * A bare JNI call of {@code nextId}'s shape to a native function that returns a constant.
     *
     * @param handle passed as {@code nextId} passes its generator's handle; not read
     * @return 42
     */
    public static long constant(long handle) {
        return Native.benchmarkBaselineConstant(handle);
    }

    /**
     * A bare call of {@code nextId}'s shape by the path {@code nextId} takes (IdPath): on Java 22
     * and later a downcall of the FFM API, as critical as {@code nextId}'s, to a native function
     * that returns a constant; JNI's {@link #constant} before.
     *
     * @param handle passed as {@code nextId} passes its generator's handle; not read
     * @return 42
     */
    public static long activePath(long handle) {
        return IdPath.ACTIVE.baseline(handle);
    }

    /**
     * {@code n} IDs by {@code nextId}'s steps in a loop in native code (one JNI call for all):
     * the core's own cost per ID in the library Java loads.
     *
     * @param generator the generator
     * @param n how many calls
     * @return the last ID, or -1
     */
    public static long coreLoop(Generator generator, int n) {
        try {
            return Native.benchmarkCoreLoop(generator.handle, n);
        } finally {
            java.lang.ref.Reference.reachabilityFence(generator);
        }
    }

    /** @return {@code "ffm"} or {@code "jni"}: the path {@code nextId} takes in this JVM */
    public static String activePathName() {
        return IdPath.ACTIVE.name();
    }
}
