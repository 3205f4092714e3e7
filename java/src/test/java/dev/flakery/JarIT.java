package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar (run by failsafe after {@code package}): it carries the library for this
 * platform, and a JVM with only the jar on its classpath and no library path loads it from
 * inside the jar.
 */
class JarIT {
    static Path jar() {
        return Path.of(System.getProperty("flakery.jar"));
    }

    @Test
    void theJarCarriesTheLibraryForThisPlatform() throws IOException {
        try (ZipFile zip = new ZipFile(jar().toFile())) {
            assertTrue(zip.getEntry("dev/flakery/native/linux-x86_64/libflakery_java.so") != null);
            assertTrue(zip.getEntry("dev/flakery/Generator.class") != null);
            // The FFM path of Java 22 and later, in the same jar (IdPath).
            assertTrue(zip.getEntry("dev/flakery/FfmIdPath.class") != null);
        }
    }

    static String run(Path dir, String source, String... jvmArgs) throws Exception {
        return run(dir, source, Map.of(), jvmArgs);
    }

    static String run(Path dir, String source, Map<String, String> env, String... jvmArgs) throws Exception {
        Path program = dir.resolve("Check.java");
        Files.writeString(program, source);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new java.util.ArrayList<>(List.of(java.toString(), "-cp", jar().toString()));
        command.addAll(List.of(jvmArgs));
        command.add(program.toString());
        // Standard error is not the answer: Java 24 and later warn there about System.load
        // unless --enable-native-access is given (docs/java.md).
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(dir.resolve("stderr").toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("FLAKERY_") || name.equals("LD_LIBRARY_PATH"));
        builder.environment().putAll(env);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return output + Files.readString(dir.resolve("stderr")).lines()
                .filter(line -> !line.startsWith("WARNING: ")).map(line -> line + "\n")
                .reduce("", String::concat);
    }

    @Test
    void onlyTheJarOnTheClasspath(@TempDir Path dir) throws Exception {
        String output = run(dir, """
                public class Check {
                    public static void main(String[] args) {
                        try (var generator = dev.flakery.Generator.builder().workerId(3).build()) {
                            long id = generator.nextId();
                            System.out.println("worker=" + generator.decode(id).workerId()
                                    + " path=" + System.getProperty("java.library.path"));
                        }
                    }
                }
                """, "-Djava.library.path=" + dir);
        assertEquals("worker=3 path=" + dir, output.strip());
        // Nothing is left in the temporary directory: the extracted file is deleted once loaded.
    }

    @Test
    void theProcessWideGeneratorTakesTheEnvironment(@TempDir Path dir) throws Exception {
        String output = run(dir, """
                public class Check {
                    public static void main(String[] args) {
                        long id = dev.flakery.Flakery.nextId();
                        System.out.println("worker=" + dev.flakery.Layout.parse("twitter").decode(id).workerId());
                    }
                }
                """, Map.of("FLAKERY_WORKER_ID", "11", "FLAKERY_DATACENTER_ID", "2"));
        assertEquals("worker=11", output.strip());
    }

    @Test
    void anUnsupportedPlatformIsNamed(@TempDir Path dir) throws Exception {
        String output = run(dir, """
                public class Check {
                    public static void main(String[] args) {
                        try {
                            dev.flakery.Flakery.toBase32(1);
                        } catch (UnsatisfiedLinkError e) {
                            System.out.println(e.getMessage());
                        }
                    }
                }
                """, "-Dos.arch=sparc");
        assertTrue(output.contains("no native library for this platform, linux-sparc"), output);
        assertTrue(output.contains("linux-x86_64"), output);
    }
}
