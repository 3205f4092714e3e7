package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Node IDs leased from a coordinator through the Java API, against real servers on 127.0.0.1
 * (tests/zookeeper/zkserver.py, tests/db/dbserver.py; tests/java/run.sh installs both): two
 * generators never share a node ID, close() gives it back at once, a coordinator that cannot
 * be reached or refuses is an error with its code that never shows a password.
 */
@Tag("processes")
class LeaseTest {
    /** One bit of worker: two holders fill it, so who holds what is never left to chance. */
    private static final String TWO_WORKERS = "time:41,worker:1,sequence:12;epoch=1288834974657";
    private static final String SECRET = "s3cr3t-java-pw";

    private static TestServer zookeeper;
    private static TestServer postgres;

    @BeforeAll
    static void start() throws Exception {
        zookeeper = TestServer.zookeeper();
        postgres = TestServer.postgres();
    }

    @AfterAll
    static void stop() throws Exception {
        if (zookeeper != null) {
            zookeeper.stop();
        }
        if (postgres != null) {
            postgres.stop();
        }
    }

    /**
     * Two holders of a two-node namespace get both node IDs and issue disjoint IDs; a third is
     * refused; close() makes the closed one's ID free at once, and the closed one issues no more.
     */
    private static void twoHoldersThenClose(UnaryOperator<Generator.Builder> coordinator, String kind) {
        var builder = (java.util.function.Supplier<Generator>) () ->
                coordinator.apply(Generator.builder().layout(TWO_WORKERS)).build();
        Generator first = builder.get();
        Generator second = builder.get();
        try {
            assertNotEquals(first.workerId(), second.workerId());
            for (Generator g : List.of(first, second)) {
                LeaseStatus status = g.leaseStatus();
                assertTrue(status.canIssue(), status.toString());
                assertTrue(status.coordinator().orElse("").toLowerCase(java.util.Locale.ROOT).contains(kind),
                        status.toString());
            }
            Set<Long> ids = new HashSet<>();
            for (long id : first.nextIds(5000)) {
                ids.add(id);
            }
            for (long id : second.nextIds(5000)) {
                ids.add(id);
            }
            assertEquals(10_000, ids.size());
            FlakeryException full = assertThrows(FlakeryException.class, builder::get);
            assertEquals("worker_ids_exhausted", full.code(), full.getMessage());

            long taken = first.workerId();
            first.close();
            assertEquals("lease_lost", assertThrows(FlakeryException.class, first::nextId).code());
            assertFalse(first.leaseStatus().canIssue());
            try (Generator third = builder.get()) {
                assertEquals(taken, third.workerId(), "close() gave the node ID back");
                assertTrue(third.nextId() > 0);
            }
        } finally {
            first.close();
            second.close();
        }
    }

    @Test
    void zookeeperLeasesDistinctNodeIdsAndCloseGivesThemBack() {
        twoHoldersThenClose(b -> b.zookeeper(zookeeper.text("connect")).namespace("java-api").sessionTimeoutMs(4000),
                "zookeeper");
    }

    @Test
    void postgresLeasesDistinctNodeIdsAndCloseGivesThemBack() {
        String url = postgres.text("url");
        twoHoldersThenClose(b -> b.databaseUrl(url).namespace("java-api"), "postgres");
        try (Generator generator = Generator.builder().databaseUrl(url).namespace("java-shown").build()) {
            String password = postgres.text("password");
            assertFalse(generator.leaseStatus().toString().contains(password));
        }
    }

    @Test
    void zookeeperDownIsCoordinatorUnavailableNamingTheAddress() throws Exception {
        String address = TestServer.closedZookeeperAddress();
        FlakeryException e = assertThrows(FlakeryException.class,
                () -> Generator.builder().zookeeper(address).sessionTimeoutMs(2000).build());
        assertEquals("coordinator_unavailable", e.code());
        assertTrue(e.getMessage().contains(address), e.getMessage());
    }

    @Test
    void aPasswordThePostgresRefusesIsNeverShown() {
        String wrong = postgres.text("url").replace(postgres.text("password"), SECRET);
        FlakeryException e = assertThrows(FlakeryException.class, () -> Generator.builder().databaseUrl(wrong).build());
        assertEquals("coordinator_unavailable", e.code());
        assertTrue(e.getMessage().contains("127.0.0.1"), e.getMessage());
        assertFalse(e.toString().contains(SECRET), e.toString());
        for (String url : List.of("redis://flakery:" + SECRET + "@127.0.0.1:6379/0", "flakery:" + SECRET + "@127.0.0.1/db")) {
            FlakeryException other = assertThrows(FlakeryException.class, () -> Generator.builder().databaseUrl(url).build());
            assertEquals("invalid_argument", other.code());
            assertFalse(other.toString().contains(SECRET), other.toString());
        }
    }

    /**
     * In a container (this machine is one; KUBERNETES_SERVICE_HOST makes it one anywhere) the
     * process-wide generator refuses the implicit host lease, and leases from ZooKeeper when
     * FLAKERY_ZOOKEEPER says so.
     */
    @Test
    void theProcessWideGeneratorLeasesFromFlakeryZookeeperInAContainer(@TempDir Path dir) throws Exception {
        String program = """
                public class Check {
                    public static void main(String[] args) {
                        try {
                            long id = dev.flakery.Flakery.nextId();
                            System.out.println("id " + (id > 0));
                        } catch (dev.flakery.FlakeryException e) {
                            System.out.println(e.code() + ": " + e.getMessage());
                        }
                    }
                }
                """;
        Map<String, String> container = Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1");
        String refused = child(dir, program, container);
        assertTrue(refused.startsWith("invalid_argument: "), refused);
        assertTrue(refused.contains("container") && refused.contains("FLAKERY_LEASE_DIR"), refused);
        String leased = child(dir, program, Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1",
                "FLAKERY_ZOOKEEPER", zookeeper.text("connect"), "FLAKERY_NAMESPACE", "java-env"));
        assertEquals("id true", leased.strip());
    }

    /** A JVM of this classpath running {@code source}, with no FLAKERY_* but {@code env}. */
    static String child(Path dir, String source, Map<String, String> env) throws Exception {
        Path program = dir.resolve("Check.java");
        Files.writeString(program, source);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                program.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().keySet().removeIf(name -> name.startsWith("FLAKERY_") || name.equals("KUBERNETES_SERVICE_HOST"));
        builder.environment().putAll(env);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), output);
        return output;
    }
}
