package dev.flakery;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A builder's options as the native constructors take them: each option's name in the core's
 * options table (its camelCase name) with its value as text, in the order first given. The core
 * checks every value when the object is built.
 */
final class OptionTexts {
    private final Map<String, String> texts = new LinkedHashMap<>();

    /** Sets {@code name}, replacing what it held. */
    void set(String name, Object value) {
        texts.put(name, String.valueOf(value));
    }

    /** Adds {@code value} to a list option ({@code servers}), comma-separated as the core reads it. */
    void add(String name, String value) {
        texts.merge(name, String.valueOf(value), (held, more) -> held + "," + more);
    }

    String[] names() {
        return texts.keySet().toArray(new String[0]);
    }

    String[] values() {
        return texts.values().toArray(new String[0]);
    }
}
