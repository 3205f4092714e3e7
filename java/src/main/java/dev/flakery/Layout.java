package dev.flakery;

import java.lang.ref.Reference;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a 64-bit ID is cut into fields (docs/spec.md#layouts): a preset name ({@code "twitter"},
 * {@code "discord;epoch=2015-01-01T00:00:00Z"}) or a field list
 * ({@code "time:41,worker:10,sequence:12;epoch=1288834974657"}), parsed and checked by
 * flakery's core. Immutable and thread-safe; two layouts are equal when they cut IDs the same
 * way.
 */
public final class Layout extends NativeHandle {
    /**
     * One field of a layout.
     *
     * @param name the field's name ({@code time}, {@code worker}, {@code version}, ...)
     * @param kind {@code time}, {@code datacenter}, {@code worker}, {@code sequence} or
     *     {@code constant}
     * @param shift the position of its lowest bit
     * @param bits its width
     * @param defaultValue a constant field's value when none is given (0 for the others)
     */
    public record Field(String name, String kind, int shift, int bits, long defaultValue) {}

    private final String spec;
    private final List<Field> fields;
    private final long epochMs;
    private final long unitMs;
    private final boolean unsigned;

    private Layout(long handle) {
        super(handle, Native::layoutFree);
        this.spec = Native.layoutSpec(handle);
        String[] texts = Native.layoutFieldTexts(handle);
        long[] numbers = Native.layoutNumbers(handle);
        List<Field> list = new ArrayList<>(texts.length / 2);
        for (int i = 0; i < texts.length / 2; i++) {
            list.add(new Field(texts[2 * i], texts[2 * i + 1], (int) numbers[3 * i], (int) numbers[3 * i + 1],
                    numbers[3 * i + 2]));
        }
        this.fields = Collections.unmodifiableList(list);
        int end = 3 * list.size();
        this.epochMs = numbers[end];
        this.unitMs = numbers[end + 1];
        this.unsigned = numbers[end + 2] != 0;
    }

    /** A layout of a generator: takes ownership of {@code handle}. */
    static Layout own(long handle) {
        return new Layout(handle);
    }

    /**
     * Parses a layout spec or a preset name.
     *
     * @param spec the spec
     * @return the layout
     * @throws FlakeryException {@code invalid_layout} when the spec is not a valid layout
     */
    public static Layout parse(String spec) {
        return new Layout(Native.layoutNew(spec));
    }

    /**
     * The names of the presets (docs/spec.md#presets), in the order {@code flakery layouts} lists
     * them.
     *
     * @return {@code twitter}, {@code discord}, {@code instagram}, ...
     */
    public static List<String> presets() {
        return List.of(Native.presetNames());
    }

    /**
     * The fields, from the highest bits to the lowest as the spec lists them.
     *
     * @return the fields
     */
    public List<Field> fields() {
        return fields;
    }

    /**
     * The epoch: Unix milliseconds of tick 0.
     *
     * @return the epoch
     */
    public long epochMs() {
        return epochMs;
    }

    /**
     * The length of one tick of the time field, in milliseconds.
     *
     * @return 1, 10, 1000, ...
     */
    public long unitMs() {
        return unitMs;
    }

    /**
     * Whether the layout's IDs are unsigned 64-bit integers ({@code discord}): an ID of 2^63 and
     * above is then a negative {@code long} whose {@link Long#toUnsignedString(long)} is the ID.
     *
     * @return whether IDs are unsigned
     */
    public boolean isUnsigned() {
        return unsigned;
    }

    /**
     * Takes an ID apart.
     *
     * @param id the ID (read as unsigned: 2^63 and above only under an unsigned layout)
     * @return its parts
     * @throws FlakeryException {@code invalid_argument} for an ID this layout cannot hold
     */
    public DecodedId decode(long id) {
        long[] values;
        try {
            values = Native.decode(handle, id);
        } finally {
            Reference.reachabilityFence(this);
        }
        Map<String, Long> named = new LinkedHashMap<>();
        for (int i = 0; i < fields.size(); i++) {
            named.put(fields.get(i).name(), values[5 + i]);
        }
        return new DecodedId(values[0], values[1], values[2], values[3], values[4],
                Collections.unmodifiableMap(named));
    }

    /**
     * The ID made of these parts; constant fields take their defaults.
     *
     * @param timestampMs Unix milliseconds
     * @param datacenterId the datacenter field (0 when the layout has none)
     * @param workerId the worker field (0 when the layout has none)
     * @param sequence the sequence field
     * @return the ID
     * @throws FlakeryException {@code invalid_argument} when a part does not fit its field
     */
    public long compose(long timestampMs, long datacenterId, long workerId, long sequence) {
        return compose(timestampMs, datacenterId, workerId, sequence, Map.of());
    }

    /**
     * The ID made of these parts and these values of constant fields.
     *
     * @param timestampMs Unix milliseconds
     * @param datacenterId the datacenter field (0 when the layout has none)
     * @param workerId the worker field (0 when the layout has none)
     * @param sequence the sequence field
     * @param constants values of constant fields by name; a field not named takes its default
     * @return the ID
     * @throws FlakeryException {@code invalid_argument} when a part does not fit its field
     */
    public long compose(long timestampMs, long datacenterId, long workerId, long sequence,
            Map<String, Long> constants) {
        String[] names = constants.keySet().toArray(new String[0]);
        long[] values = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            values[i] = constants.get(names[i]);
        }
        try {
            return Native.compose(handle, timestampMs, datacenterId, workerId, sequence, names, values);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The instant of an ID's tick start.
     *
     * @param id the ID
     * @return when it was made, to the layout's unit
     */
    public Instant instant(long id) {
        return Instant.ofEpochMilli(decode(id).timestampMs());
    }

    /**
     * The layout's spec, as the core writes it: a preset's name where it is one.
     *
     * @return the spec
     */
    @Override
    public String toString() {
        return spec;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Layout layout && layout.spec.equals(spec) && layout.fields.equals(fields)
                && layout.epochMs == epochMs && layout.unitMs == unitMs && layout.unsigned == unsigned;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(new Object[] {spec, fields, epochMs, unitMs, unsigned});
    }
}
