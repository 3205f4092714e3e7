package dev.flakery;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The real {@code flakery serve} on a free port of 127.0.0.1, with a lease directory of its
 * own, stopped by its PID: the CLI that tests/java/run.sh built ({@code FLAKERY_BIN}), else the
 * repository's debug build.
 */
final class IdServer implements AutoCloseable {
    private static final Path ROOT = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
    /** How long a server may take to become ready before the harness gives up (not a test). */
    private static final long FAILSAFE_MS = 60_000;

    final int port;
    private final Process process;
    private final Path dir;
    /**
     * For a server of {@code --tls-cert}: the harness's own requests (its readiness) over TLS,
     * checking no certificate, showing the test's client.p12 from beside the certificate
     * (tests/tls_certs.py) to a server of mutual TLS. Null for plain HTTP.
     */
    private final SSLContext tls;

    private IdServer(int port, Process process, Path dir, SSLContext tls) {
        this.port = port;
        this.process = process;
        this.dir = dir;
        this.tls = tls;
    }

    /** The harness's context for a server of the certificate `cert` (see `tls`). */
    private static SSLContext harnessContext(Path cert) throws IOException {
        try {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(cert.resolveSibling("client.p12"))) {
                keys.load(in, "flakery-test".toCharArray());
            }
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, "flakery-test".toCharArray());
            TrustManager anything = new X509TrustManager() {
                @Override
                public void checkClientTrusted(X509Certificate[] chain, String authType) {}

                @Override
                public void checkServerTrusted(X509Certificate[] chain, String authType) {}

                @Override
                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            };
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), new TrustManager[] {anything}, null);
            return context;
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException(e);
        }
    }

    static Path binary() {
        String given = System.getenv("FLAKERY_BIN");
        Path binary = given != null && !given.isEmpty() ? Path.of(given) : ROOT.resolve("target/debug/flakery");
        if (!Files.isExecutable(binary)) {
            throw new IllegalStateException("no flakery CLI at " + binary + ": run tests/java/run.sh, which builds it");
        }
        return binary;
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** A server with these extra arguments and variables; ready (/readyz 200) when it returns. */
    static IdServer start(Map<String, String> env, String... args) throws IOException, InterruptedException {
        int port = freePort();
        Path dir = Files.createTempDirectory("java-client-test-");
        List<String> command = new ArrayList<>(List.of(binary().toString(), "serve", "--listen", "127.0.0.1:" + port));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("server.log").toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("FLAKERY_"));
        builder.environment().put("FLAKERY_LEASE_DIR", dir.resolve("leases").toString());
        builder.environment().put("FLAKERY_DRAIN_DELAY_MS", "0");
        builder.environment().putAll(env);
        Files.createDirectories(dir.resolve("leases"));
        int cert = List.of(args).indexOf("--tls-cert");
        SSLContext tls = cert < 0 ? null : harnessContext(Path.of(args[cert + 1]));
        IdServer server = new IdServer(port, builder.start(), dir, tls);
        long deadline = System.currentTimeMillis() + FAILSAFE_MS;
        while (server.status("/readyz") != 200) {
            if (!server.process.isAlive() || System.currentTimeMillis() > deadline) {
                String log = Files.readString(dir.resolve("server.log"));
                server.close();
                throw new IllegalStateException("flakery serve did not come up: " + log);
            }
            Thread.sleep(50);
        }
        return server;
    }

    static IdServer start(String... args) throws IOException, InterruptedException {
        return start(Map.of(), args);
    }

    private int status(String path) {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(url() + path).toURL().openConnection();
            if (c instanceof HttpsURLConnection https) {
                https.setSSLSocketFactory(tls.getSocketFactory());
                https.setHostnameVerifier((host, session) -> true);
            }
            c.setConnectTimeout(1000);
            c.setReadTimeout(1000);
            try {
                return c.getResponseCode();
            } finally {
                c.disconnect();
            }
        } catch (IOException e) {
            return -1;
        }
    }

    /** {@code https://localhost:PORT} for a server of TLS (its certificate's name). */
    String url() {
        return tls == null ? "http://127.0.0.1:" + port : "https://localhost:" + port;
    }

    boolean alive() {
        return process.isAlive();
    }

    /** SIGKILL, and waits for it to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** SIGSTOP or SIGCONT, by PID. */
    void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /** Resumes it if stopped, kills it, removes its files. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                signal("CONT");
                kill();
            }
        } catch (IOException | IllegalStateException e) {
            process.destroyForcibly(); // gone by now, or SIGKILL ends it stopped too
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // Temporary files only.
        }
    }
}
