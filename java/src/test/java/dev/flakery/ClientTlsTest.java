package dev.flakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Client} over TLS against real {@code flakery serve --tls-cert} instances with the
 * certificates of tests/tls_certs.py: IDs from two servers, the first killed midway, none
 * twice; a server of mutual TLS refuses a client without a certificate ({@code tls_failed})
 * and takes one with the test CA's.
 */
@Tag("processes")
class ClientTlsTest {
    private static final int HALF = 500;

    private static long worker(long id) {
        return (id >> 12) & 0x3FF; // twitter: 10 bits of node ID above 12 of sequence
    }

    @Test
    void idsOverTlsFromTwoServersTheFirstKilledMidway(@TempDir Path certs) throws Exception {
        Path root = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
        Process made = new ProcessBuilder("python3", root.resolve("tests/tls_certs.py").toString(), certs.toString())
                .redirectErrorStream(true).start();
        String log = new String(made.getInputStream().readAllBytes());
        assertEquals(0, made.waitFor(), log);
        String ca = certs.resolve("ca.pem").toString();
        String[] tls = {"--tls-cert", certs.resolve("server.crt").toString(), "--tls-key", certs.resolve("server.key").toString()};
        try (IdServer a = IdServer.start(concat(tls, "--worker-id", "1"));
                IdServer b = IdServer.start(concat(tls, "--worker-id", "2"));
                IdServer mtls = IdServer.start(concat(tls, "--worker-id", "5", "--tls-client-ca", ca))) {
            // Blocks of 100 asked for when needed, the first server first: the second half asks
            // the killed server, then the other.
            List<Long> ids = new ArrayList<>();
            try (Client client = Client.builder().server(a.url()).server(b.url()).serverCa(ca).preferFirst(true)
                    .prefetch(false).minBlock(100).maxBlock(100).build()) {
                for (long id : client.nextIds(HALF)) {
                    ids.add(id);
                }
                a.kill();
                for (long id : client.nextIds(HALF)) {
                    ids.add(id);
                }
            }
            assertEquals(2 * HALF, new HashSet<>(ids).size(), "no ID twice");
            assertEquals(Set.of(1L), workers(ids.subList(0, HALF)), "the first server first");
            assertEquals(Set.of(2L), workers(ids.subList(HALF, 2 * HALF)), "the second once the first is dead");

            try (Client none = Client.builder().server(mtls.url()).serverCa(ca).build()) {
                FlakeryException e = assertThrows(FlakeryException.class, none::nextId);
                assertEquals("tls_failed", e.code(), e.getMessage());
                assertTrue(e.getMessage().contains("no client certificate"), e.getMessage());
            }
            try (Client with = Client.builder().server(mtls.url()).serverCa(ca)
                    .clientCert(certs.resolve("client.crt").toString()).clientKey(certs.resolve("client.key").toString())
                    .build()) {
                assertEquals(5, worker(with.nextId()));
            }
        }
    }

    private static Set<Long> workers(List<Long> ids) {
        Set<Long> workers = new HashSet<>();
        for (long id : ids) {
            workers.add(worker(id));
        }
        return workers;
    }

    private static String[] concat(String[] head, String... tail) {
        String[] all = new String[head.length + tail.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }
}
