package dev.flakery.compat.leaf;

import dev.flakery.FlakeryException;
import dev.flakery.Generator;

/**
 * Leaf's snowflake mode ({@code SnowflakeIDGenImpl}) answered by flakery's core:
 * {@link #get(String)} is the generator's {@code nextId()} in Leaf's {@link Result}. The key is
 * not read, as Leaf's snowflake mode does not read it.
 *
 * <p>Where Leaf returned an error number flakery returns the same one: {@code -3} when the
 * clock stepped back beyond the generator's tolerance ({@code clock_moved_backwards}, Leaf's
 * "more than 5 ms"), and {@code -1} for every other refusal (a lost lease, a used-up time
 * field, a fork): Leaf's "no ID now". {@link #nextId()} gives the error's stable code instead.
 */
public final class FlakeryIDGen implements IDGen, AutoCloseable {
    /** Leaf's snowflake bits and epoch: Twitter's epoch, a 10-bit worker, a 12-bit sequence. */
    public static final String LEAF_LAYOUT = "time:41,worker:10,sequence:12;epoch=1288834974657;unit=ms";

    private final Generator generator;

    /**
     * Leaf's IDGen over {@code generator}, which this object then owns ({@link #close()}).
     *
     * @param generator the generator, for Leaf's IDs of layout {@link #LEAF_LAYOUT}
     */
    public FlakeryIDGen(Generator generator) {
        this.generator = generator;
    }

    @Override
    public Result get(String key) {
        try {
            return new Result(generator.nextId(), Status.SUCCESS);
        } catch (FlakeryException e) {
            return new Result(e.code().equals("clock_moved_backwards") ? -3 : -1, Status.EXCEPTION);
        }
    }

    /**
     * Always true: the generator was ready when it was built (its errors are thrown by
     * {@link Generator.Builder#build()}).
     *
     * @return true
     */
    @Override
    public boolean init() {
        return true;
    }

    /**
     * A new ID, or the refusal with its stable code (rather than Leaf's error number).
     *
     * @return the ID
     * @throws FlakeryException as {@link Generator#nextId()}
     */
    public long nextId() {
        return generator.nextId();
    }

    /** Closes the generator: releases its node's lease. */
    @Override
    public void close() {
        generator.close();
    }
}
