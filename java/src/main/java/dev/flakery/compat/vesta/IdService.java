package dev.flakery.compat.vesta;

import java.util.Date;

/**
 * Vesta's {@code com.robert.vesta.service.intf.IdService}: code written against it changes
 * only its import. {@code time} is in the ticks of the layout (seconds since the epoch for
 * max-peak, milliseconds for min-granularity), {@code machine} is the worker ID.
 */
public interface IdService {
    /**
     * A new ID.
     *
     * @return the ID
     */
    long genId();

    /**
     * An ID taken apart.
     *
     * @param id the ID
     * @return its parts
     */
    Id expId(long id);

    /**
     * The ID of these parts, with this service's machine, method, type and version.
     *
     * @param time ticks since the epoch
     * @param seq the sequence
     * @return the ID
     */
    long makeId(long time, long seq);

    /**
     * The ID of these parts, with this service's method, type and version.
     *
     * @param time ticks since the epoch
     * @param seq the sequence
     * @param machine the machine (worker ID)
     * @return the ID
     */
    long makeId(long time, long seq, long machine);

    /**
     * The ID of these parts, with this service's type and version.
     *
     * @param genMethod the generation method field
     * @param time ticks since the epoch
     * @param seq the sequence
     * @param machine the machine (worker ID)
     * @return the ID
     */
    long makeId(long genMethod, long time, long seq, long machine);

    /**
     * The ID of these parts in the layout of {@code type}, with this service's version.
     *
     * @param type 0 max-peak, 1 min-granularity
     * @param genMethod the generation method field
     * @param time ticks since the epoch
     * @param seq the sequence
     * @param machine the machine (worker ID)
     * @return the ID
     */
    long makeId(long type, long genMethod, long time, long seq, long machine);

    /**
     * The ID of these parts in the layout of {@code type}.
     *
     * @param version the version field (0: flakery refuses 1, a negative ID)
     * @param type 0 max-peak, 1 min-granularity
     * @param genMethod the generation method field
     * @param time ticks since the epoch
     * @param seq the sequence
     * @param machine the machine (worker ID)
     * @return the ID
     */
    long makeId(long version, long type, long genMethod, long time, long seq, long machine);

    /**
     * The instant of a time field value.
     *
     * @param time ticks since the epoch
     * @return its date
     */
    Date transTime(long time);
}
