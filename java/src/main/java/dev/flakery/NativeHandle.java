package dev.flakery;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;

/**
 * An object that owns one native value of bindings-java (a generator, a client, a layout) by its
 * handle (src/handles.rs), as zstd-jni's and sqlite-jdbc's objects own theirs: the handle is
 * released by one {@link Cleaner} once the owner is unreachable, never earlier, and every native
 * call of the owner keeps it reachable across the call ({@code Reference.reachabilityFence}), so
 * no call can race the release.
 */
abstract class NativeHandle {
    private static final Cleaner CLEANER = Cleaner.create();

    /** The handle, valid while this object is reachable. */
    final long handle;

    /**
     * Owns {@code handle}: {@code release} is called with it once, when this object is
     * unreachable (also when a subclass's constructor throws after this one returned).
     */
    NativeHandle(long handle, LongConsumer release) {
        this.handle = handle;
        // The action holds the handle and the release only: holding this object would keep it
        // reachable for ever.
        CLEANER.register(this, () -> release.accept(handle));
    }
}
