package dev.flakery.compat.vesta;

import java.io.Serializable;

/**
 * Vesta's {@code com.robert.vesta.service.bean.Id}: an ID's parts, with Vesta's getters,
 * setters and {@code toString()}.
 */
public class Id implements Serializable {
    private static final long serialVersionUID = 6870931236218221183L;

    /** @serial the machine (worker ID) */
    private long machine;
    /** @serial the sequence */
    private long seq;
    /** @serial ticks since the epoch */
    private long time;
    /** @serial the generation method */
    private long genMethod;
    /** @serial the type: 0 max-peak, 1 min-granularity */
    private long type;
    /** @serial the version */
    private long version;

    /**
     * The parts, in Vesta's order.
     *
     * @param machine the machine (worker ID)
     * @param seq the sequence
     * @param time ticks since the epoch
     * @param genMethod the generation method
     * @param type the type
     * @param version the version
     */
    public Id(long machine, long seq, long time, long genMethod, long type, long version) {
        this.machine = machine;
        this.seq = seq;
        this.time = time;
        this.genMethod = genMethod;
        this.type = type;
        this.version = version;
    }

    /** Every part 0. */
    public Id() {}

    /** {@return the sequence} */
    public long getSeq() {
        return seq;
    }

    /**
     * Sets the sequence.
     *
     * @param seq the sequence
     */
    public void setSeq(long seq) {
        this.seq = seq;
    }

    /** {@return ticks since the epoch} */
    public long getTime() {
        return time;
    }

    /**
     * Sets ticks since the epoch.
     *
     * @param time ticks since the epoch
     */
    public void setTime(long time) {
        this.time = time;
    }

    /** {@return the machine (worker ID)} */
    public long getMachine() {
        return machine;
    }

    /**
     * Sets the machine (worker ID).
     *
     * @param machine the machine (worker ID)
     */
    public void setMachine(long machine) {
        this.machine = machine;
    }

    /** {@return the generation method} */
    public long getGenMethod() {
        return genMethod;
    }

    /**
     * Sets the generation method.
     *
     * @param genMethod the generation method
     */
    public void setGenMethod(long genMethod) {
        this.genMethod = genMethod;
    }

    /** {@return the type} */
    public long getType() {
        return type;
    }

    /**
     * Sets the type.
     *
     * @param type the type
     */
    public void setType(long type) {
        this.type = type;
    }

    /** {@return the version} */
    public long getVersion() {
        return version;
    }

    /**
     * Sets the version.
     *
     * @param version the version
     */
    public void setVersion(long version) {
        this.version = version;
    }

    @Override
    public String toString() {
        return "[machine=" + machine + ",seq=" + seq + ",time=" + time + ",genMethod=" + genMethod + ",type=" + type
                + ",version=" + version + "]";
    }
}
