package dev.flakery;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A throw-away server of the repository's test harnesses on 127.0.0.1 (a free port, a
 * temporary directory, stopped by PID): ZooKeeper (tests/zookeeper/zkserver.py) or
 * PostgreSQL (tests/db/dbserver.py).
 */
final class TestServer {
    private static final Path ROOT = Path.of(System.getProperty("flakery.repo", "..")).toAbsolutePath().normalize();
    private static final Path ZKSERVER = ROOT.resolve("tests/zookeeper/zkserver.py");
    private static final Path DBSERVER = ROOT.resolve("tests/db/dbserver.py");

    /** What the harness printed when it started: connect, url, password, pid, port, dir. */
    final Map<String, Object> info;
    private final Path harness;
    private final List<String> stop;

    private TestServer(Map<String, Object> info, Path harness, List<String> stop) {
        this.info = info;
        this.harness = harness;
        this.stop = stop;
    }

    @SuppressWarnings("unchecked")
    static TestServer zookeeper() throws IOException, InterruptedException {
        Map<String, Object> info = (Map<String, Object>) Json.parse(run(ZKSERVER, "start"));
        return new TestServer(info, ZKSERVER, List.of("stop", String.valueOf(Vectors.number(info.get("pid"))),
                (String) info.get("dir")));
    }

    @SuppressWarnings("unchecked")
    static TestServer postgres() throws IOException, InterruptedException {
        Map<String, Object> info = (Map<String, Object>) Json.parse(run(DBSERVER, "start", "postgres"));
        return new TestServer(info, DBSERVER, List.of("stop", (String) info.get("dir")));
    }

    /** A 127.0.0.1 address where nothing listens. */
    static String closedZookeeperAddress() throws IOException, InterruptedException {
        return run(ZKSERVER, "closed-port").strip();
    }

    String text(String name) {
        return (String) info.get(name);
    }

    private static String run(Path script, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("python3", script.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException(script.getFileName() + " " + String.join(" ", args) + " failed: " + out);
        }
        return out;
    }

    /** Stops the server by its PID and removes its directory. */
    void stop() throws IOException, InterruptedException {
        run(harness, stop.toArray(new String[0]));
    }
}
