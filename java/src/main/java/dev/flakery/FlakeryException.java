package dev.flakery;

/**
 * An error of flakery, with the stable code of docs/spec.md#errors.
 *
 * <p>{@link #code()} is one of {@code invalid_layout}, {@code invalid_argument},
 * {@code time_exhausted}, {@code clock_moved_backwards}, {@code lease_lost},
 * {@code coordinator_unavailable}, {@code worker_ids_exhausted}, {@code forked}, and a
 * client's {@code servers_unavailable}, {@code unauthorized}, {@code bad_answer},
 * {@code tls_failed}: the same
 * strings every binding of flakery uses. A bug of flakery's native code is reported as
 * {@code panic} rather than crashing the JVM. The message says what to change; it never holds a
 * password.
 */
public final class FlakeryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @serial the stable code */
    private final String code;

    /**
     * Made by the native library.
     *
     * @param code the stable code
     * @param message what was wrong and what to configure
     */
    public FlakeryException(String code, String message) {
        super(message);
        this.code = code;
    }

    /**
     * The stable code of the error, such as {@code "lease_lost"}.
     *
     * @return the code
     */
    public String code() {
        return code;
    }

    @Override
    public String toString() {
        return "FlakeryException[" + code + "]: " + getMessage();
    }
}
