package dev.flakery.compat.vesta;

import dev.flakery.DecodedId;
import dev.flakery.FlakeryException;
import dev.flakery.Generator;
import dev.flakery.Layout;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * Vesta's {@code IdServiceImpl} answered by flakery's core, over a generator of one of Vesta's
 * layouts ({@code vesta-max-peak}, type 0, or {@code vesta-min-granularity}, type 1; any epoch).
 * IDs are made, composed and decoded by the core; this class only maps Vesta's names onto the
 * layout's fields ({@code genMethod} is the field {@code method}, {@code machine} the worker).
 *
 * <p>Where Vesta gives a wrong answer flakery refuses with {@code invalid_argument}: a machine
 * past the worker field (Vesta lets it run into the sequence), version 1 (a negative ID),
 * a negative ID to {@code expId}.
 */
public final class FlakeryIdService implements IdService, AutoCloseable {
    /** Vesta's layouts by the value of their type field (Vesta's {@code IdType}). */
    private static final List<String> TYPES = List.of("vesta-max-peak", "vesta-min-granularity");

    private final Generator generator;
    private final Layout layout;
    private final long ownType;
    private final long ownVersion;
    private final long ownMethod;
    private final long ownMachine;

    /**
     * Vesta's IdService over {@code generator}, which this object then owns ({@link #close()}):
     * {@code Generator.builder().layout("vesta-max-peak").field("method", 2).workerId(1022)}.
     *
     * @param generator a generator of a Vesta layout
     * @throws FlakeryException {@code invalid_layout} when its layout is not one of Vesta's;
     *     {@code invalid_argument} when its fields {@code type} or {@code version} are not the
     *     layout's own (Vesta never stamps others)
     */
    public FlakeryIdService(Generator generator) {
        this.layout = generator.layout();
        this.ownType = typeOf(layout);
        this.generator = generator;
        Map<String, Long> constants = generator.constants();
        if (constants.get("type") != ownType || constants.get("version") != 0) {
            throw new FlakeryException("invalid_argument", "fields type=" + constants.get("type") + ", version="
                    + constants.get("version") + " contradict layout '" + layout + "', whose IDs Vesta always gives type="
                    + ownType + ", version=0; leave them out, or choose the layout of that type");
        }
        this.ownVersion = constants.get("version");
        this.ownMethod = constants.get("method");
        this.ownMachine = generator.workerId();
    }

    /** The type of a Vesta layout, or {@code invalid_layout}. */
    private static long typeOf(Layout layout) {
        for (int type = 0; type < TYPES.size(); type++) {
            Layout preset = Layout.parse(TYPES.get(type));
            if (preset.fields().equals(layout.fields()) && preset.unitMs() == layout.unitMs()) {
                return type;
            }
        }
        throw new FlakeryException("invalid_layout", "layout '" + layout + "' is not one of Vesta's ("
                + String.join(", ", TYPES) + ", with any epoch)");
    }

    /** The layout Vesta's {@code makeId} builds an ID of {@code type} in, with this epoch. */
    private Layout layoutOf(long type) {
        if (type == ownType) {
            return layout;
        }
        if (type < 0 || type >= TYPES.size()) {
            throw new FlakeryException("invalid_argument",
                    "type=" + type + " is not a Vesta ID type (0 max-peak, 1 min-granularity)");
        }
        return Layout.parse(TYPES.get((int) type) + ";epoch=" + layout.epochMs());
    }

    /** Unix milliseconds of tick {@code time} of {@code in}; the core checks the range. */
    private static long msOfTick(Layout in, long time) {
        try {
            return Math.addExact(in.epochMs(), Math.multiplyExact(time, in.unitMs()));
        } catch (ArithmeticException e) {
            throw new FlakeryException("invalid_argument", "time=" + time + " does not fit the layout's time field");
        }
    }

    @Override
    public long genId() {
        return generator.nextId();
    }

    @Override
    public Id expId(long id) {
        DecodedId parts = generator.decode(id);
        Map<String, Long> fields = parts.fields();
        return new Id(parts.workerId(), parts.sequence(), fields.get("time"), fields.get("method"), fields.get("type"),
                fields.get("version"));
    }

    @Override
    public long makeId(long time, long seq) {
        return makeId(time, seq, ownMachine);
    }

    @Override
    public long makeId(long time, long seq, long machine) {
        return makeId(ownMethod, time, seq, machine);
    }

    @Override
    public long makeId(long genMethod, long time, long seq, long machine) {
        return makeId(ownType, genMethod, time, seq, machine);
    }

    @Override
    public long makeId(long type, long genMethod, long time, long seq, long machine) {
        return makeId(ownVersion, type, genMethod, time, seq, machine);
    }

    @Override
    public long makeId(long version, long type, long genMethod, long time, long seq, long machine) {
        Layout in = layoutOf(type);
        return in.compose(msOfTick(in, time), 0, machine, seq,
                Map.of("version", version, "type", type, "method", genMethod));
    }

    /**
     * {@inheritDoc}
     *
     * @throws FlakeryException {@code invalid_argument} for a time past the layout's time field
     */
    @Override
    public Date transTime(long time) {
        long ms = msOfTick(layout, time);
        layout.compose(ms, 0, 0, 0); // the core refuses a time its field cannot hold
        return new Date(ms);
    }

    /**
     * The generator behind this service.
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
