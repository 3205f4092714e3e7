package dev.flakery.compat.uid;

/**
 * The shape of Baidu uid-generator's {@code com.baidu.fsg.uid.UidGenerator}: code written
 * against it changes only its import (docs/java.md#uid-generator).
 */
public interface UidGenerator {
    /**
     * A new unique ID.
     *
     * @return the ID
     * @throws dev.flakery.FlakeryException with its stable code where uid-generator threw
     *     {@code UidGenerateException}
     */
    long getUID();

    /**
     * The ID's parts as uid-generator's JSON text:
     * {@code {"UID":"..","timestamp":"yyyy-MM-dd HH:mm:ss","workerId":"..","sequence":".."}},
     * the time in the JVM's default time zone.
     *
     * @param uid the ID
     * @return the JSON text
     */
    String parseUID(long uid);
}
