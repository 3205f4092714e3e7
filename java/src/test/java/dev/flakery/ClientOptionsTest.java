package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Client.Builder} against the core's table of client options
 * (core/src/option_table/client.rs, read through {@code Native.clientOptions}): a method per
 * option under its camelCase name, of the Java type of its kind, documented with the table's
 * default, and every name the builder sends is one the native side finds in the table. No
 * server: it runs on every JDK of tests/java.
 */
class ClientOptionsTest {
    /** One row of the table: the camelCase name, the kind, the default ("" for none). */
    private record Option(String name, String kind, String defaultText) {
        /** The builder's method: {@code server} adds one server at a time. */
        String method() {
            return name.equals("servers") ? "server" : name;
        }
    }

    /** The parameter types of the builder's method for each kind of the table. */
    private static final Map<String, Set<Class<?>>> TYPES = Map.of(
            "Servers", Set.of(String.class),
            "Secret", Set.of(String.class),
            "Path", Set.of(String.class),
            "Layout", Set.of(String.class, Layout.class),
            "Duration", Set.of(long.class),
            "BlockSize", Set.of(int.class),
            "Flag", Set.of(boolean.class),
            "Fallback", Set.of(Generator.class));

    private static List<Option> table() {
        String[] texts = Native.clientOptions();
        List<Option> table = new ArrayList<>();
        for (int i = 0; i < texts.length; i += 3) {
            table.add(new Option(texts[i], texts[i + 1], texts[i + 2]));
        }
        assertTrue(table.size() >= 11, table::toString);
        return table;
    }

    /** The builder's setters: name to the parameter type of each overload. */
    private static Map<String, Set<Class<?>>> setters() {
        Map<String, Set<Class<?>>> setters = new HashMap<>();
        for (Method method : Client.Builder.class.getMethods()) {
            if (method.getReturnType() == Client.Builder.class) {
                assertEquals(1, method.getParameterCount(), method::toString);
                setters.computeIfAbsent(method.getName(), k -> new HashSet<>()).add(method.getParameterTypes()[0]);
            }
        }
        return setters;
    }

    @Test
    void theBuilderHasAMethodOfTheKindsTypeForEveryOptionAndNoOther() {
        Map<String, Set<Class<?>>> setters = setters();
        Set<String> methods = new HashSet<>();
        for (Option option : table()) {
            Set<Class<?>> types = TYPES.get(option.kind());
            assertNotNull(types, option + ": a kind Client.Builder has no type for (add it here and a method)");
            assertEquals(types, setters.get(option.method()), option + ": Client.Builder." + option.method());
            if (option.kind().equals("Duration")) {
                assertTrue(option.name().endsWith("Ms"), option + ": Java's times are milliseconds, named *Ms");
            }
            methods.add(option.method());
        }
        assertEquals(methods, setters.keySet(), "Client.Builder's methods against the table's options");
    }

    /** Each method's Javadoc says "(default X)" with the table's X; the table is the truth. */
    @Test
    void theBuildersDocsGiveTheTablesDefaults() throws Exception {
        Path root = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
        String source = Files.readString(root.resolve("java/src/main/java/dev/flakery/Client.java"));
        for (Option option : table()) {
            if (option.defaultText().isEmpty()) {
                continue;
            }
            Matcher doc = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*public Builder " + option.method() + "\\(",
                    Pattern.DOTALL).matcher(source);
            assertTrue(doc.find(), option + ": no documented Client.Builder." + option.method());
            Matcher given = Pattern.compile("\\(default ([^),:]*)[),:]").matcher(doc.group(1));
            assertTrue(given.find(), option + ": its Javadoc gives no (default ...)");
            assertEquals(option.defaultText(), given.group(1), option + ": the default in Client.Builder's Javadoc");
        }
    }

    /**
     * Every option set through its method, to the table's default where it has one: the names
     * the builder sends are the table's (the native side looks each up there and refuses
     * another), and the values are read as the defaults they say.
     */
    @Test
    void everyNameTheBuilderSendsIsTheTables(@TempDir Path certs) throws Exception {
        String url = "http://127.0.0.1:" + IdServer.freePort();
        Client.Builder builder = Client.builder();
        Map<String, Object> given = Map.of("Servers", url, "Secret", "a-token", "Layout", "sonyflake");
        // The TLS files are read when the client is built: real ones, of tests/tls_certs.py.
        Path root = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
        Process made = new ProcessBuilder("python3", root.resolve("tests/tls_certs.py").toString(), certs.toString())
                .redirectErrorStream(true).start();
        String madeLog = new String(made.getInputStream().readAllBytes());
        assertEquals(0, made.waitFor(), madeLog);
        Map<String, String> files = Map.of("serverCa", "ca.pem", "clientCert", "client.crt", "clientKey", "client.key");
        try (Generator fallback = Generator.builder().layout("sonyflake").workerId(3).build()) {
            for (Option option : table()) {
                Object value = switch (option.kind()) {
                    case "Duration" -> Long.parseLong(option.defaultText());
                    case "BlockSize" -> Integer.parseInt(option.defaultText());
                    case "Flag" -> Boolean.parseBoolean(option.defaultText());
                    case "Fallback" -> fallback;
                    case "Path" -> certs.resolve(files.get(option.name())).toString();
                    default -> given.get(option.kind());
                };
                assertNotNull(value, option::toString);
                Class<?> type = value instanceof Generator ? Generator.class
                        : value instanceof Long ? long.class
                        : value instanceof Integer ? int.class
                        : value instanceof Boolean ? boolean.class : String.class;
                Client.Builder.class.getMethod(option.method(), type).invoke(builder, value);
            }
            try (Client client = builder.build()) {
                assertEquals(List.of(url), client.servers());
                assertEquals("sonyflake", client.layout().toString());
            }
        }
    }

    /** A token over http:// to a host that is not loopback: refused when built, never shown. */
    @Test
    void aTokenInClearIsRefused() {
        FlakeryException e = assertThrows(FlakeryException.class,
                () -> Client.builder().server("http://10.0.0.1:9").token("s3cret-java").build());
        assertEquals("invalid_argument", e.code());
        assertTrue(e.getMessage().contains("sendTokenInClear"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret-java"), e.getMessage());
    }
}
