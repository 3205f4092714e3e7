package dev.flakery;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * {@link IdPath} on Java 22 and later (compiled with {@code --release 22}, loaded by
 * {@code IdPath} only there): {@code nextId} is a critical downcall of the FFM API to
 * {@code flakery_java_next_id_fast} (bindings-java/src/ffm.rs) in the library the jar already
 * loaded ({@code SymbolLookup.loaderLookup()}: no second load). That function is the core's hot
 * path, which never blocks nor calls back into Java, as a critical downcall must not; its -1
 * (a used-up tick, a lease to renew, a closed generator, any error) sends the call on to JNI's
 * {@link Native#nextId}, which waits or throws exactly as on Java 17.
 */
final class FfmIdPath extends IdPath {
    // Static finals: the JIT takes them as constants and inlines the downcall.
    private static final MethodHandle NEXT_ID_FAST;
    private static final MethodHandle BASELINE;

    static {
        Native.ensureLoaded();
        SymbolLookup library = SymbolLookup.loaderLookup();
        NEXT_ID_FAST = downcall(library, "flakery_java_next_id_fast");
        BASELINE = downcall(library, "flakery_java_benchmark_baseline_constant");
    }

    @SuppressWarnings("restricted") // the library is the jar's own, already loaded by System.load
    private static MethodHandle downcall(SymbolLookup library, String name) {
        return Linker.nativeLinker().downcallHandle(
                library.find(name).orElseThrow(() -> new UnsatisfiedLinkError("flakery's library has no " + name)),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                Linker.Option.critical(false));
    }

    @Override
    String name() {
        return "ffm";
    }

    @Override
    long nextId(long handle) {
        long id = nextIdFast(handle);
        return id >= 0 ? id : Native.nextId(handle);
    }

    @Override
    long nextIdFast(long handle) {
        try {
            return (long) NEXT_ID_FAST.invokeExact(handle);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e); // the native function throws nothing
        }
    }

    @Override
    long baseline(long handle) {
        try {
            return (long) BASELINE.invokeExact(handle);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }
}
