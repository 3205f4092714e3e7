package dev.flakery;

/**
 * The native methods of bindings-java (src/native.rs, src/client.rs). Handles are the core's
 * generators and layouts and the clients (src/handles.rs); each is owned by a
 * {@link NativeHandle}, released once the owner is unreachable, and every caller keeps its owner
 * reachable across the call.
 */
final class Native {
    static {
        NativeLibrary.load();
    }

    private Native() {}

    /** Nothing but this class's initialization: the library is loaded once it returns. */
    static void ensureLoaded() {}

    static native void init();

    static native String version();

    static native long generatorNew(String[] names, String[] values, String[] fieldNames, long[] fieldValues);

    static native void generatorFree(long generator);

    static native String doctorJson(String[] names, String[] values, String[] fieldNames, long[] fieldValues);

    static native void generatorClose(long generator);

    static native long nextId(long generator);

    /**
     * The core's hot path alone: an ID, or -1 when it has none at once (then {@link #nextId}
     * waits or throws); never throws. Primitive arguments only, so that under
     * {@code -XX:+CriticalJNINatives} (Java 17 to 21) HotSpot calls its critical native.
     */
    static native long nextIdFast(long generator);

    /** A benchmark's baseline (bench/java): a bare JNI call of nextId's shape that returns 42. */
    static native long benchmarkBaselineConstant(long generator);

    /** A benchmark's measure (bench/java): {@code n} IDs by nextId's steps in native code. */
    static native long benchmarkCoreLoop(long generator, int n);

    /** {@code generator} 0: the process-wide generator. */
    static native long[] nextIds(long generator, int n);

    static native long defaultNextId();

    static native long[] generatorNode(long generator);

    static native long generatorLayout(long generator);

    /** {@code [state, canIssue, coordinator or ""]}. */
    static native String[] generatorLeaseStatus(long generator);

    static native long layoutNew(String spec);

    static native void layoutFree(long layout);

    static native String layoutSpec(long layout);

    static native String[] layoutFieldTexts(long layout);

    static native long[] layoutNumbers(long layout);

    static native String[] presetNames();

    static native String[] optionNames();

    /** The core's table of client options: {@code [name, kind, default or ""]} for each, flattened. */
    static native String[] clientOptions();

    static native long[] decode(long layout, long id);

    static native long compose(long layout, long timestampMs, long datacenterId, long workerId, long sequence,
            String[] fieldNames, long[] fieldValues);

    /** {@code fallback}: a generator's handle, shared with the client, or 0 for none. */
    static native long clientNew(String[] names, String[] values, long fallback);

    static native void clientFree(long client);

    static native void clientClose(long client);

    static native long clientNextId(long client);

    static native long[] clientNextIds(long client, int n);

    static native String clientNextIdText(long client, String format);

    static native long clientLayout(long client);

    static native String[] clientServers(long client);

    static native String toText(long id, boolean base62);

    static native long fromText(String text, boolean base62);
}
