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
}
