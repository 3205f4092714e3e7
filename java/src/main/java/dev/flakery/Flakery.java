package dev.flakery;

/**
 * The process-wide generator and the text forms of IDs.
 *
 * <p>{@link #nextId()} uses one generator per process, made on first use from the
 * {@code FLAKERY_*} environment variables (docs/spec.md#node-identity). The text forms are
 * fixed-length and sort as the IDs do: base32 (13 characters, Crockford's alphabet, any case)
 * and base62 (11 characters).
 */
public final class Flakery {
    private Flakery() {}

    /**
     * One new ID from the process-wide generator.
     *
     * @return the ID
     * @throws FlakeryException as {@link Generator#nextId()}, or the node-identity errors when
     *     the process-wide generator cannot be made
     */
    public static long nextId() {
        return Native.defaultNextId();
    }

    /**
     * {@code n} new IDs from the process-wide generator, in increasing order.
     *
     * @param n how many, 0 or more
     * @return the IDs
     */
    public static long[] nextIds(int n) {
        return Native.nextIds(0, n);
    }

    /**
     * The names of every option of the core's options table (docs/spec.md#generator-options),
     * spelt as {@link Generator.Builder}'s methods are ({@code layout}, {@code workerId},
     * {@code fields}, ...): for integrations that must offer each one (the Spring Boot starter's
     * {@code flakery.*} properties).
     *
     * @return the option names, in the table's order
     */
    public static java.util.List<String> optionNames() {
        return java.util.List.of(Native.optionNames());
    }

    /**
     * The version of the native library, such as {@code "0.1.0"}.
     *
     * @return the version
     */
    public static String version() {
        return Native.version();
    }

    /**
     * An ID as 13 characters of Crockford's base32.
     *
     * @param id a non-negative ID
     * @return its text
     * @throws FlakeryException {@code invalid_argument} for a negative ID
     */
    public static String toBase32(long id) {
        return Native.toText(id, false);
    }

    /**
     * The ID of a base32 text (any case; {@code O} reads as 0, {@code I} and {@code L} as 1).
     *
     * @param text 13 characters
     * @return the ID
     * @throws FlakeryException {@code invalid_argument} for anything else
     */
    public static long fromBase32(String text) {
        return Native.fromText(text, false);
    }

    /**
     * An ID as 11 characters of base62 ({@code 0-9A-Za-z}).
     *
     * @param id a non-negative ID
     * @return its text
     * @throws FlakeryException {@code invalid_argument} for a negative ID
     */
    public static String toBase62(long id) {
        return Native.toText(id, true);
    }

    /**
     * The ID of a base62 text.
     *
     * @param text 11 characters
     * @return the ID
     * @throws FlakeryException {@code invalid_argument} for anything else
     */
    public static long fromBase62(String text) {
        return Native.fromText(text, true);
    }
}
