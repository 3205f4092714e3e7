package dev.flakery;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the JNI library packed in the jar, once: copies
 * {@code /dev/flakery/native/<platform>/libflakery_java.so} to a private temporary file
 * (mode 0600, as {@code Files.createTempFile} makes it), loads it and deletes the file (the
 * loaded library stays mapped), as sqlite-jdbc and zstd-jni do. An unsupported platform is an
 * {@link UnsatisfiedLinkError} that names it.
 */
final class NativeLibrary {
    /** The platforms this jar carries a library for. */
    static final String SUPPORTED = "linux-x86_64";

    private NativeLibrary() {}

    /** {@code linux-x86_64}, {@code linux-aarch64}, {@code mac-aarch64}, ... */
    static String platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "mac";
        } else if (os.startsWith("windows")) {
            os = "windows";
        }
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        } else if (arch.equals("arm64")) {
            arch = "aarch64";
        }
        return os + "-" + arch;
    }

    /** The resource of the library for {@code platform}. */
    static String resource(String platform) {
        String file = platform.startsWith("windows") ? "flakery_java.dll"
                : platform.startsWith("mac") ? "libflakery_java.dylib" : "libflakery_java.so";
        return "/dev/flakery/native/" + platform + "/" + file;
    }

    static void load() {
        String platform = platform(System.getProperty("os.name", "?"), System.getProperty("os.arch", "?"));
        String resource = resource(platform);
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("flakery's jar has no native library for this platform, "
                        + platform + " (os.name=" + System.getProperty("os.name") + ", os.arch="
                        + System.getProperty("os.arch") + "): it carries " + SUPPORTED
                        + " only (resource " + resource + " is missing)");
            }
            Path file = Files.createTempFile("flakery-java-", ".so");
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toAbsolutePath().toString());
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError("flakery could not extract its native library for "
                    + platform + " to the temporary directory (java.io.tmpdir="
                    + System.getProperty("java.io.tmpdir") + "): " + e);
            error.initCause(e);
            throw error;
        }
        Native.init();
    }
}
