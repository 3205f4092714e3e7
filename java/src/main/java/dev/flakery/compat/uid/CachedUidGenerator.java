package dev.flakery.compat.uid;

import dev.flakery.FlakeryException;

/**
 * uid-generator's {@code com.baidu.fsg.uid.impl.CachedUidGenerator} as a bean: a
 * {@link DefaultUidGenerator} that also takes the ring buffer's settings ({@code boostPower},
 * {@code paddingFactor}, {@code scheduleInterval}), checked as uid-generator checks them and
 * then unused: {@link #getUID()} is one native call, with no buffer to fill.
 */
public class CachedUidGenerator extends DefaultUidGenerator {
    /** A generator of uid-generator's defaults, to be set up by its setters and then {@link #afterPropertiesSet()}. */
    public CachedUidGenerator() {}

    /**
     * uid-generator's ring buffer size as a power of two of the IDs of a second; unused.
     *
     * @param boostPower a positive number
     * @throws FlakeryException {@code invalid_argument} for 0 or less, as uid-generator refused it
     */
    public void setBoostPower(int boostPower) {
        require(boostPower > 0, "boostPower must be positive, not " + boostPower);
    }

    /**
     * uid-generator's percentage of the ring buffer under which it is filled again; unused.
     *
     * @param paddingFactor 1 to 99
     * @throws FlakeryException {@code invalid_argument} outside 1 to 99, as uid-generator refused it
     */
    public void setPaddingFactor(int paddingFactor) {
        require(paddingFactor > 0 && paddingFactor < 100, "paddingFactor must be from 1 to 99, not " + paddingFactor);
    }

    /**
     * uid-generator's period of filling the ring buffer, in seconds; unused.
     *
     * @param scheduleInterval a positive number
     * @throws FlakeryException {@code invalid_argument} for 0 or less, as uid-generator refused it
     */
    public void setScheduleInterval(long scheduleInterval) {
        require(scheduleInterval > 0, "scheduleInterval must be positive, not " + scheduleInterval);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new FlakeryException("invalid_argument", message);
        }
    }
}
