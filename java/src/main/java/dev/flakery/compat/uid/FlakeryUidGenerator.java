package dev.flakery.compat.uid;

import dev.flakery.DecodedId;
import dev.flakery.FlakeryException;
import dev.flakery.Generator;
import dev.flakery.Layout;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Set;
import java.util.TimeZone;

/**
 * uid-generator's {@code DefaultUidGenerator} (and {@code CachedUidGenerator}) answered by
 * flakery's core: {@link #getUID()} is the generator's {@code nextId()}, {@link #parseUID(long)}
 * decodes with the generator's layout and prints uid-generator's JSON byte for byte.
 *
 * <p>The layout must have uid-generator's fields (time, worker, sequence): the {@code baidu}
 * preset with an epoch of yours ({@code "baidu;epoch=2025-01-01T00:00:00+08:00"}: the preset's
 * own ran out in 2024), or the bits you gave {@code timeBits}/{@code workerBits}/{@code seqBits}.
 * With {@code databaseMode("baidu")} the worker ID comes from uid-generator's own
 * {@code WORKER_NODE} table, as its {@code DisposableWorkerIdAssigner} assigns it.
 */
public final class FlakeryUidGenerator implements UidGenerator, AutoCloseable {
    /** uid-generator's DateUtils.DATETIME_PATTERN. */
    private static final DateTimeFormatter DATETIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Generator generator;

    /**
     * A uid-generator over {@code generator}, which this object then owns ({@link #close()}).
     *
     * @param generator a generator whose layout has exactly the fields time, worker and sequence
     * @throws FlakeryException {@code invalid_layout} for a layout of other fields
     */
    public FlakeryUidGenerator(Generator generator) {
        Layout layout = generator.layout();
        Set<String> kinds = Set.of("time", "worker", "sequence");
        boolean shaped = layout.fields().size() == 3
                && layout.fields().stream().allMatch(field -> kinds.contains(field.kind()));
        if (!shaped) {
            throw new FlakeryException("invalid_layout", "uid-generator's IDs have the fields time, worker and "
                    + "sequence; layout '" + layout + "' does not (use 'baidu;epoch=<your epoch>')");
        }
        this.generator = generator;
    }

    @Override
    public long getUID() {
        return generator.nextId();
    }

    /**
     * {@inheritDoc}
     *
     * @throws FlakeryException {@code invalid_argument} for a negative ID, which uid-generator
     *     never issues (it would print a time past its time field)
     */
    @Override
    public String parseUID(long uid) {
        DecodedId parts = generator.decode(uid);
        String time = DATETIME.format(Instant.ofEpochMilli(parts.timestampMs()).atZone(TimeZone.getDefault().toZoneId()));
        return "{\"UID\":\"" + uid + "\",\"timestamp\":\"" + time + "\",\"workerId\":\"" + parts.workerId()
                + "\",\"sequence\":\"" + parts.sequence() + "\"}";
    }

    /**
     * The generator behind this one.
     *
     * @return the generator
     */
    public Generator generator() {
        return generator;
    }

    /** Closes the generator: releases its node's lease. */
    @Override
    public void close() {
        generator.close();
    }
}
