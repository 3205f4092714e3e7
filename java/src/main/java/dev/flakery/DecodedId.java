package dev.flakery;

import java.time.Instant;
import java.util.Map;

/**
 * An ID taken apart by {@link Layout#decode(long)} or {@link Generator#decode(long)}.
 *
 * @param id the ID ({@link Long#toUnsignedString(long)} under an unsigned layout)
 * @param timestampMs Unix milliseconds of the ID's tick
 * @param datacenterId the datacenter field (0 when the layout has none)
 * @param workerId the worker field (0 when the layout has none)
 * @param sequence the sequence field
 * @param fields every field of the layout by name, in layout order, with its raw value (the
 *     time field in ticks since the epoch)
 */
public record DecodedId(long id, long timestampMs, long datacenterId, long workerId, long sequence,
        Map<String, Long> fields) {
    /**
     * The ID's tick as an instant.
     *
     * @return the instant of {@link #timestampMs()}
     */
    public Instant instant() {
        return Instant.ofEpochMilli(timestampMs);
    }
}
