package dev.flakery;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The cross-language vectors of tests/vectors, which every binding checks. */
final class Vectors {
    private Vectors() {}

    static Path dir() {
        // Maven runs the tests in java/; the repository's root is its parent.
        Path root = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
        return root.resolve("tests").resolve("vectors");
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> load(String file) throws IOException {
        return (List<Map<String, Object>>) Json.parse(Files.readString(dir().resolve(file)));
    }

    static long number(Object value) {
        if (value instanceof String text) {
            return Long.parseUnsignedLong(text);
        }
        return ((Json.Number) value).asLong();
    }
}
