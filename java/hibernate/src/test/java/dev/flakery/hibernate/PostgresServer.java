package dev.flakery.hibernate;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A throw-away PostgreSQL on 127.0.0.1 (tests/db/dbserver.py: a free port, a temporary data
 * directory, stopped by PID and removed by {@link #stop()}).
 */
final class PostgresServer {
    private static final Path DBSERVER = Path.of(System.getProperty("flakery.repo", "../.."), "tests", "db",
            "dbserver.py").toAbsolutePath().normalize();

    final String jdbcUrl;
    final String password;
    private final String dir;

    private PostgresServer(String jdbcUrl, String password, String dir) {
        this.jdbcUrl = jdbcUrl;
        this.password = password;
        this.dir = dir;
    }

    static PostgresServer start() throws IOException, InterruptedException {
        String json = run("start", "postgres");
        return new PostgresServer("jdbc:postgresql://127.0.0.1:" + field(json, "port") + "/flakery",
                field(json, "password"), field(json, "dir"));
    }

    /** A value of dbserver.py's one-line JSON object (strings and numbers only). */
    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\\s*\"?([^\",}]*)").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("dbserver.py printed no " + name + ": " + json);
        }
        return m.group(1);
    }

    private static String run(String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 2];
        command[0] = "python3";
        command[1] = DBSERVER.toString();
        System.arraycopy(args, 0, command, 2, args.length);
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException("dbserver.py " + String.join(" ", args) + " failed: " + out);
        }
        return out;
    }

    void stop() throws IOException, InterruptedException {
        run("stop", dir);
    }
}
