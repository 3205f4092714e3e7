package dev.flakery.bench;

import dev.flakery.Generator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** {@code nextIds(1_000_000)}, in ms a batch, below the layout's ceiling (21-bit sequence). */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class BatchBenchmarks {
    private Generator wide;

    /** Makes the generator. */
    @Setup
    public void setUp() {
        wide = Generator.builder().layout("time:41,worker:1,sequence:21;epoch=1288834974657").workerId(1).build();
    }

    /** Releases its lease. */
    @TearDown
    public void tearDown() {
        wide.close();
    }

    /** @return a million IDs */
    @Benchmark
    public long[] nextIdsMillion() {
        return wide.nextIds(1_000_000);
    }
}
