package dev.flakery;

import java.lang.ref.Reference;
import java.util.List;

/**
 * IDs from one or more {@code flakery serve} instances, with the calls of a {@link Generator}:
 * switching between an embedded generator and a central server is one line (docs/client.md).
 * The client is flakery's Rust client: it holds a block of IDs and hands them out locally, asks
 * for the next block in the background, skips a server that fails and retries it with backoff,
 * and drops an ID held longer than {@code maxAgeMs}. With a {@linkplain Builder#fallback(Generator)
 * fallback} it takes the IDs of an embedded generator of its own node ID while every server is
 * unavailable.
 *
 * <p>Thread-safe: any number of threads may call {@link #nextId()} at once. In the steady state
 * a call answers from the block it holds; with the block used up it waits for the next, at most
 * {@code timeoutMs}, then fails with {@code servers_unavailable}. {@link #close()} drops what the
 * client holds (never given back); every later call fails with {@code invalid_argument}. The
 * native client is freed once this object is unreachable.
 *
 * <pre>{@code
 * try (Client client = Client.builder().server("http://127.0.0.1:8080").build()) {
 *     long id = client.nextId();
 * }
 * }</pre>
 */
public final class Client extends NativeHandle implements AutoCloseable {
    private final Layout layout;
    private final List<String> servers;

    private Client(long handle) {
        super(handle, Native::clientFree);
        this.layout = Layout.own(Native.clientLayout(handle));
        this.servers = List.of(Native.clientServers(handle));
    }

    /**
     * A builder with every option unset: the servers then come from {@code FLAKERY_SERVERS},
     * the token from {@code FLAKERY_SERVER_TOKEN}, the layout from {@code FLAKERY_LAYOUT}, the
     * rest from the defaults of docs/client.md#options.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One new ID: from the block the client holds in the steady state; waits for a block at
     * most {@code timeoutMs} otherwise. With every server unavailable, the fallback generator's
     * ID when the builder was given one.
     *
     * @return the ID
     * @throws FlakeryException {@code servers_unavailable} (no server gave IDs in time, and no
     *     fallback),
     *     {@code unauthorized} (every server refused the token), {@code bad_answer} (no server
     *     answered with IDs of the client's layout), {@code invalid_argument} (closed), or the
     *     fallback generator's own codes ({@code lease_lost} when it was closed)
     */
    public long nextId() {
        try {
            return Native.clientNextId(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * {@code n} new IDs, increasing within each block the client holds (across servers they
     * may interleave: docs/client.md#what-is-guaranteed).
     *
     * @param n how many, 0 or more
     * @return the IDs
     * @throws FlakeryException {@code invalid_argument} for a negative {@code n}, else as
     *     {@link #nextId()}
     */
    public long[] nextIds(int n) {
        try {
            return Native.clientNextIds(handle, n);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * One new ID as text: {@code "decimal"}, or {@code "base32"} (13 characters) or
     * {@code "base62"} (11), whose strings sort as the IDs do.
     *
     * @param format {@code "decimal"}, {@code "base32"} or {@code "base62"}
     * @return the ID's text
     * @throws FlakeryException {@code invalid_argument} for another format, else as
     *     {@link #nextId()}
     */
    public String nextIdText(String format) {
        try {
            return Native.clientNextIdText(handle, format);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Takes an ID apart with the servers' layout.
     *
     * @param id the ID
     * @return its parts
     * @throws FlakeryException {@code invalid_argument} for an ID the layout cannot hold
     */
    public DecodedId decode(long id) {
        return layout.decode(id);
    }

    /**
     * The layout of the servers' IDs (each server's is checked against it before its first IDs
     * are taken).
     *
     * @return the layout
     */
    public Layout layout() {
        return layout;
    }

    /**
     * The servers' base URLs, in the order given.
     *
     * @return the URLs
     */
    public List<String> servers() {
        return servers;
    }

    /**
     * Stops the client: the IDs it holds are dropped, never given back; every later call fails
     * with {@code invalid_argument}. Never waits for a server. Closing twice is fine.
     */
    @Override
    public void close() {
        try {
            Native.clientClose(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The servers and the layout; never the token. */
    @Override
    public String toString() {
        return "Client[servers=" + servers + ", layout=" + layout + "]";
    }

    /**
     * The options of a client, one method per option of docs/client.md#options (named as the
     * Java generator's are, in camelCase, times in milliseconds: the core's table of client
     * options, which ClientTest checks every method against). An option not set comes from its
     * {@code FLAKERY_*} variable or its default. Every value is checked in {@link #build()}.
     */
    public static final class Builder {
        private final OptionTexts options = new OptionTexts();
        private Generator fallback;

        private Builder() {}

        private Builder set(String name, Object value) {
            options.set(name, value);
            return this;
        }

        /**
         * A server's base URL, {@code http://host:port} or {@code https://host:port} (a path
         * prefix allowed); call once per server, or give several separated by commas (default:
         * {@code FLAKERY_SERVERS}). Credentials in the URL are refused.
         *
         * @param url the URL
         * @return this builder
         */
        public Builder server(String url) {
            options.add("servers", url);
            return this;
        }

        /**
         * The bearer token (default: {@code FLAKERY_SERVER_TOKEN}); never shown by
         * {@code toString} or in an error.
         *
         * @param token the token
         * @return this builder
         */
        public Builder token(String token) {
            return set("token", token);
        }

        /**
         * The servers' layout: a preset name or a layout spec (default: {@code FLAKERY_LAYOUT},
         * else {@code twitter}).
         *
         * @param spec the layout
         * @return this builder
         */
        public Builder layout(String spec) {
            return set("layout", spec);
        }

        /**
         * The servers' layout.
         *
         * @param layout the layout
         * @return this builder
         */
        public Builder layout(Layout layout) {
            return set("layout", layout.toString());
        }

        /**
         * An ID held longer than this is dropped, never handed out (default 10000).
         *
         * @param ms milliseconds, 1 or more
         * @return this builder
         */
        public Builder maxAgeMs(long ms) {
            return set("maxAgeMs", ms);
        }

        /**
         * Every call returns or fails within this (default 5000); a batch within this plus
         * the time its count takes at the layout's rate.
         *
         * @param ms milliseconds, 1 or more
         * @return this builder
         */
        public Builder timeoutMs(long ms) {
            return set("timeoutMs", ms);
        }

        /**
         * One request to one server may take this long before the next server is asked
         * (default 1000, at most {@code timeoutMs}).
         *
         * @param ms milliseconds, 1 or more
         * @return this builder
         */
        public Builder requestTimeoutMs(long ms) {
            return set("requestTimeoutMs", ms);
        }

        /**
         * The smallest block of IDs asked for (default 16); the size adapts to the rate of use.
         *
         * @param n 1 to {@code maxBlock}
         * @return this builder
         */
        public Builder minBlock(int n) {
            return set("minBlock", n);
        }

        /**
         * The largest block of IDs asked for (default 10000, at most 100000).
         *
         * @param n {@code minBlock} to 100000
         * @return this builder
         */
        public Builder maxBlock(int n) {
            return set("maxBlock", n);
        }

        /**
         * Ask for the next block in the background when half the current one is used
         * (default true).
         *
         * @param on whether to
         * @return this builder
         */
        public Builder prefetch(boolean on) {
            return set("prefetch", on);
        }

        /**
         * Ask the servers in the order given, the first one first (default false: each process
         * starts at a server of its own, which spreads the load).
         *
         * @param on whether to
         * @return this builder
         */
        public Builder preferFirst(boolean on) {
            return set("preferFirst", on);
        }

        /**
         * The CAs (a PEM file) an {@code https://} server's certificate must be signed by
         * (default: {@code FLAKERY_SERVER_CA}, else the system's roots).
         *
         * @param path the PEM file
         * @return this builder
         */
        public Builder serverCa(String path) {
            return set("serverCa", path);
        }

        /**
         * A certificate (PEM, with its chain) for servers that ask for one (mutual TLS;
         * default: {@code FLAKERY_CLIENT_CERT}); give its key with {@link #clientKey}.
         *
         * @param path the certificate's PEM file
         * @return this builder
         */
        public Builder clientCert(String path) {
            return set("clientCert", path);
        }

        /**
         * The PEM file of the private key of {@link #clientCert} (default:
         * {@code FLAKERY_CLIENT_KEY}). Only its path is ever shown, never what it holds.
         *
         * @param path the key's PEM file
         * @return this builder
         */
        public Builder clientKey(String path) {
            return set("clientKey", path);
        }

        /**
         * Send the token over {@code http://} to a host that is not loopback (default false:
         * such a client is refused with {@code invalid_argument}).
         *
         * @param on whether to
         * @return this builder
         */
        public Builder sendTokenInClear(boolean on) {
            return set("sendTokenInClear", on);
        }

        /**
         * The generator to take IDs from while every server is unavailable
         * ({@code servers_unavailable}; a refused token or an answer that is not IDs stays an
         * error) (default: none). Its IDs are unique against the servers' only if its node ID is
         * one no server ever holds: a datacenter ID of its own, or a worker ID of a range kept
         * for fallbacks (docs/client.md#fallback). The client shares it: closing the generator
         * makes the fallback fail with {@code lease_lost}.
         *
         * @param generator the generator, or {@code null} for none
         * @return this builder
         */
        public Builder fallback(Generator generator) {
            this.fallback = generator;
            return this;
        }

        /**
         * The client of these options. Asks no server yet.
         *
         * @return the client
         * @throws FlakeryException {@code invalid_argument} for a bad option, URL or token (the
         *     message never holds the token), {@code invalid_layout}
         */
        public Client build() {
            try {
                long generator = fallback == null ? 0 : fallback.handle;
                return new Client(Native.clientNew(options.names(), options.values(), generator));
            } finally {
                Reference.reachabilityFence(fallback);
            }
        }
    }
}
