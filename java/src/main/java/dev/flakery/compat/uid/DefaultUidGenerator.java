package dev.flakery.compat.uid;

import dev.flakery.FlakeryException;
import dev.flakery.Generator;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;

/**
 * uid-generator's {@code com.baidu.fsg.uid.impl.DefaultUidGenerator} as a bean: the same
 * no-argument constructor, setters ({@code timeBits}, {@code workerBits}, {@code seqBits},
 * {@code epochStr}, {@code workerIdAssigner}) and defaults, {@link #afterPropertiesSet()}
 * (Spring's {@code InitializingBean}), {@link #getUID()} and {@link #parseUID(long)}; a bean
 * definition of uid-generator's class switches to this one by its class name alone
 * (docs/java.md#uid-generator). The IDs come from a flakery {@link Generator} of the layout
 * {@code time:<timeBits>,worker:<workerBits>,sequence:<seqBits>;epoch=<epochStr>;unit=s}, which
 * decodes uid-generator's IDs as its own {@code parseUID} does.
 *
 * <p>Spring's {@code spring-beans} is needed on the class path, as uid-generator needs it; the
 * generator is closed by {@link #destroy()} (Spring's {@code DisposableBean}) or {@link #close()}.
 * Unlike uid-generator, a bad setting is refused with a {@link FlakeryException}
 * ({@code invalid_argument}) rather than ignored: a bit count that is not positive, an
 * {@code epochStr} that is not {@code yyyy-MM-dd}, bits that do not add up to 63, a worker ID
 * past the worker bits, and a setter called after {@code afterPropertiesSet()}.
 */
public class DefaultUidGenerator implements UidGenerator, InitializingBean, DisposableBean, AutoCloseable {
    private int timeBits = 28;
    private int workerBits = 22;
    private int seqBits = 13;
    /**
     * The epoch in Unix ms: uid-generator's default is its constant 1463673600000 (2016-05-20 in
     * China Standard Time) whatever the JVM's zone; {@code epochStr} is read in the JVM's zone.
     */
    private long epochMs = 1463673600000L;
    private WorkerIdAssigner workerIdAssigner;
    private volatile FlakeryUidGenerator uid;

    /** A generator of uid-generator's defaults, to be set up by its setters and then {@link #afterPropertiesSet()}. */
    public DefaultUidGenerator() {}

    /**
     * Makes the generator of the settings: asks the worker ID assigner for the worker ID once.
     *
     * @throws FlakeryException {@code invalid_argument} for settings that cannot make
     *     uid-generator's IDs (no assigner, bits that do not add up to 63, a worker ID past the
     *     worker bits) or a second call; {@code time_exhausted} for an epoch whose time bits
     *     have run out (the defaults' ran out on 2024-11-20)
     */
    @Override
    public synchronized void afterPropertiesSet() {
        if (uid != null) {
            throw invalid("afterPropertiesSet() was called already");
        }
        if (workerIdAssigner == null) {
            throw invalid("workerIdAssigner is not set: give it the WorkerIdAssigner bean (uid-generator's "
                    + "DisposableWorkerIdAssigner is taken as it is)");
        }
        if (1 + timeBits + workerBits + seqBits != 64) {
            throw invalid("1 sign bit + timeBits " + timeBits + " + workerBits " + workerBits + " + seqBits " + seqBits
                    + " make " + (1 + timeBits + workerBits + seqBits) + " bits, not uid-generator's 64");
        }
        long workerId = workerIdAssigner.assignWorkerId();
        Generator generator = Generator.builder()
                .layout(layoutSpec())
                .workerId(workerId)
                .build();
        try {
            uid = new FlakeryUidGenerator(generator);
        } catch (RuntimeException e) {
            generator.close();
            throw e;
        }
    }

    /** The layout of uid-generator's IDs of these settings. */
    String layoutSpec() {
        return "time:" + timeBits + ",worker:" + workerBits + ",sequence:" + seqBits + ";epoch=" + epochMs + ";unit=s";
    }

    /**
     * {@inheritDoc}
     *
     * @throws FlakeryException {@code invalid_argument} before {@link #afterPropertiesSet()};
     *     {@code time_exhausted} once the time bits have run out, as uid-generator threw
     */
    @Override
    public long getUID() {
        return ready().getUID();
    }

    /**
     * {@inheritDoc}
     *
     * @throws FlakeryException {@code invalid_argument} before {@link #afterPropertiesSet()}
     *     and for a negative ID
     */
    @Override
    public String parseUID(long uid) {
        return ready().parseUID(uid);
    }

    private FlakeryUidGenerator ready() {
        FlakeryUidGenerator ready = uid;
        if (ready == null) {
            throw invalid("the DefaultUidGenerator is not set up: call afterPropertiesSet() after its setters "
                    + "(Spring calls it)");
        }
        return ready;
    }

    /** Closes the generator (Spring's {@code DisposableBean}); later calls are refused. */
    @Override
    public void destroy() {
        close();
    }

    /** Closes the generator; later calls are refused. */
    @Override
    public synchronized void close() {
        if (uid != null) {
            uid.close();
        }
    }

    /**
     * Bits of the time field, in seconds since the epoch (default 28).
     *
     * @param timeBits a positive number
     * @throws FlakeryException {@code invalid_argument} for 0 or less (uid-generator kept its default)
     */
    public synchronized void setTimeBits(int timeBits) {
        this.timeBits = positive("timeBits", timeBits);
    }

    /**
     * Bits of the worker ID (default 22).
     *
     * @param workerBits a positive number
     * @throws FlakeryException {@code invalid_argument} for 0 or less (uid-generator kept its default)
     */
    public synchronized void setWorkerBits(int workerBits) {
        this.workerBits = positive("workerBits", workerBits);
    }

    /**
     * Bits of the sequence within a second (default 13).
     *
     * @param seqBits a positive number
     * @throws FlakeryException {@code invalid_argument} for 0 or less (uid-generator kept its default)
     */
    public synchronized void setSeqBits(int seqBits) {
        this.seqBits = positive("seqBits", seqBits);
    }

    /**
     * The epoch: midnight of this day in the JVM's default time zone when this is called, as
     * uid-generator reads it (default: 2016-05-20 in China Standard Time).
     *
     * @param epochStr a day, {@code yyyy-MM-dd}
     * @throws FlakeryException {@code invalid_argument} for anything else (uid-generator kept
     *     its default for a blank one)
     */
    public synchronized void setEpochStr(String epochStr) {
        unset();
        LocalDate day;
        try {
            day = LocalDate.parse(String.valueOf(epochStr));
        } catch (DateTimeParseException e) {
            throw invalid("epochStr must be a day written yyyy-MM-dd, not '" + epochStr + "'");
        }
        this.epochMs = day.atStartOfDay(ZoneId.systemDefault()).toInstant().toEpochMilli();
    }

    /**
     * The worker ID assigner: a {@link WorkerIdAssigner}, or any object with a public
     * {@code long assignWorkerId()}, as uid-generator's {@code DisposableWorkerIdAssigner} (or an
     * assigner of yours for uid-generator's interface), so that its bean is referred to as before.
     *
     * @param workerIdAssigner the assigner
     * @throws FlakeryException {@code invalid_argument} for null or an object without {@code long assignWorkerId()}
     */
    public synchronized void setWorkerIdAssigner(Object workerIdAssigner) {
        unset();
        this.workerIdAssigner = assigner(workerIdAssigner);
    }

    /** {@code assigner} as a WorkerIdAssigner: itself, or its {@code assignWorkerId()} called by reflection. */
    private static WorkerIdAssigner assigner(Object assigner) {
        if (assigner instanceof WorkerIdAssigner own) {
            return own;
        }
        Method method = null;
        try {
            method = assigner == null ? null : assigner.getClass().getMethod("assignWorkerId");
        } catch (NoSuchMethodException e) {
            // refused below
        }
        if (method == null || method.getReturnType() != long.class || !method.trySetAccessible()) {
            throw invalid("workerIdAssigner must be a WorkerIdAssigner (an object with a public long "
                    + "assignWorkerId()), not " + (assigner == null ? "null" : assigner.getClass().getName()));
        }
        Method assign = method;
        return () -> {
            try {
                return (long) assign.invoke(assigner);
            } catch (InvocationTargetException e) {
                throw e.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(e.getCause());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private int positive(String name, int bits) {
        unset();
        if (bits <= 0) {
            throw invalid(name + " must be a positive number of bits, not " + bits);
        }
        return bits;
    }

    /** Setters are refused once the generator is made: its layout would no longer be theirs. */
    private void unset() {
        if (uid != null) {
            throw invalid("the DefaultUidGenerator is set up already: its settings can no longer change");
        }
    }

    private static FlakeryException invalid(String message) {
        return new FlakeryException("invalid_argument", message);
    }
}
