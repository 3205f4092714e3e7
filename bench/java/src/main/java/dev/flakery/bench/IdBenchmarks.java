package dev.flakery.bench;

import com.fasterxml.uuid.Generators;
import com.fasterxml.uuid.impl.TimeBasedEpochGenerator;
import com.github.f4b6a3.tsid.TsidFactory;
import dev.flakery.BenchmarkBaseline;
import dev.flakery.Generator;
import dev.flakery.SequencePolicy;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import me.ahoo.cosid.snowflake.MillisecondSnowflakeId;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One ID per call, in ns: flakery's {@code nextId()} beside CosId's {@code SnowflakeId},
 * tsid-creator, {@code UUID.randomUUID()} and a UUIDv7 (java-uuid-generator).
 *
 * <p>Two flakery layouts: {@code twitter} (12-bit sequence: 4,096 IDs a millisecond, so one
 * thread calling flat out is held to ~244 ns a call by the layout's ceiling, as CosId's and
 * TSID's 12-bit counters are: "sustained") and a 21-bit sequence whose ceiling one thread never
 * reaches ("below the ceiling": the cost of the call itself).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class IdBenchmarks {
    private static final int CORE_LOOP = 1_000;

    private Generator twitter;
    private Generator wide;
    private Generator borrowing;
    private MillisecondSnowflakeId cosid;
    private MillisecondSnowflakeId cosidWide;
    private TsidFactory tsid;
    private TsidFactory tsidWide;
    private TimeBasedEpochGenerator uuidV7;
    private final AtomicLong counter = new AtomicLong();

    /** Makes each generator once. */
    @Setup
    public void setUp() {
        System.out.println("flakery's nextId path: " + BenchmarkBaseline.activePathName());
        twitter = Generator.builder().layout("twitter").datacenterId(1).workerId(1).build();
        wide = Generator.builder().layout("time:41,worker:1,sequence:21;epoch=1288834974657").workerId(1).build();
        borrowing = Generator.builder().layout("twitter").datacenterId(1).workerId(2)
                .sequencePolicy(SequencePolicy.BORROW).build();
        cosid = new MillisecondSnowflakeId(1);
        // The same 21-bit sequence as flakery's "wide": the call's own cost, below any ceiling.
        cosidWide = new MillisecondSnowflakeId(1288834974657L, 41, 1, 21, 1);
        tsid = TsidFactory.newInstance1024(1);
        tsidWide = TsidFactory.builder().withNodeBits(1).withNode(1).build();
        uuidV7 = Generators.timeBasedEpochGenerator();
    }

    /** Releases the generators' leases. */
    @TearDown
    public void tearDown() {
        twitter.close();
        wide.close();
        borrowing.close();
    }

    /** @return a flakery ID, twitter layout (sustained: the 4,096 a millisecond ceiling) */
    @Benchmark
    public long flakeryTwitter() {
        return twitter.nextId();
    }

    /**
     * @return a flakery ID, twitter layout with the borrow policy: a used-up millisecond takes
     *     the next one, up to 1 s ahead of the clock (tsid-creator always does, without a bound)
     */
    @Benchmark
    public long flakeryTwitterBorrow() {
        return borrowing.nextId();
    }

    /** @return a flakery ID, 21-bit sequence (below the ceiling: the call's own cost) */
    @Benchmark
    public long flakeryBelowCeiling() {
        return wide.nextId();
    }

    /**
     * @return a bare JNI call of nextId's shape to a native function returning a constant:
     *     the floor under any JNI binding's call (the goal: flakery within 15 ns of it)
     */
    @Benchmark
    public long jniBaseline() {
        return BenchmarkBaseline.constant(1);
    }

    /**
     * @return a bare call of nextId's shape by the path nextId takes (on Java 22 and later an
     *     FFM downcall, critical as nextId's; JNI before, or with -Dflakery.ffm=false) to a
     *     native function returning a constant: the floor under this path's call
     */
    @Benchmark
    public long activePathBaseline() {
        return BenchmarkBaseline.activePath(1);
    }

    /**
     * @return 1,000 IDs of the 21-bit generator by nextId's steps (the hot path, else the whole
     *     call) in a loop in native code (one JNI call): the core's own cost per ID, no call
     *     from Java in it
     */
    @Benchmark
    @OperationsPerInvocation(CORE_LOOP)
    public long flakeryCoreInNativeLoop() {
        return BenchmarkBaseline.coreLoop(wide, CORE_LOOP);
    }

    /**
     * @return one compare-and-set of a counter in Java, the one atomic step the core's hot path
     *     takes (and any generator that is safe across threads without a lock): the part of
     *     nextId's cost above a bare call that no binding can remove
     */
    @Benchmark
    public long casFloor() {
        long next = counter.get() + 1;
        return counter.compareAndSet(next - 1, next) ? next : -1;
    }

    /** @return a CosId MillisecondSnowflakeId (41/10/12 bits) */
    @Benchmark
    public long cosidSnowflake() {
        return cosid.generate();
    }

    /** @return a CosId MillisecondSnowflakeId of 41/1/21 bits (below the ceiling) */
    @Benchmark
    public long cosidBelowCeiling() {
        return cosidWide.generate();
    }

    /** @return a TSID with a 1-bit node and a 21-bit counter (below the ceiling) */
    @Benchmark
    public long tsidBelowCeiling() {
        return tsidWide.create().toLong();
    }

    /** @return a TSID (1,024 nodes) */
    @Benchmark
    public long tsid() {
        return tsid.create().toLong();
    }

    /** @return a random UUID (v4) */
    @Benchmark
    public UUID uuidRandom() {
        return UUID.randomUUID();
    }

    /** @return a UUIDv7 */
    @Benchmark
    public UUID uuidV7() {
        return uuidV7.generate();
    }
}
