package dev.flakery;

import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A generator of IDs: one layout, one node identity (datacenter and worker ID) and its
 * policies, made by flakery's core. Every ID it returns is larger than every ID it returned
 * before, on any thread; it never returns a duplicate and fails closed (a
 * {@link FlakeryException} with a stable code) when it cannot promise that.
 *
 * <p>Thread-safe: any number of threads may call {@link #nextId()} at once. {@link #close()}
 * releases the node's lease; every later {@code nextId()} fails with {@code lease_lost}. The
 * native generator itself is freed once this object is unreachable.
 *
 * <pre>{@code
 * try (Generator generator = Generator.builder().workerId(3).build()) {
 *     long id = generator.nextId();
 * }
 * }</pre>
 */
public final class Generator extends NativeHandle implements AutoCloseable {
    private final Layout layout;
    private final Map<String, Long> constants;

    private Generator(long handle, Map<String, Long> given) {
        super(handle, Native::generatorFree);
        this.layout = Layout.own(Native.generatorLayout(handle));
        Map<String, Long> stamped = new LinkedHashMap<>();
        for (Layout.Field field : layout.fields()) {
            if (field.kind().equals("constant")) {
                stamped.put(field.name(), given.getOrDefault(field.name(), field.defaultValue()));
            }
        }
        this.constants = Collections.unmodifiableMap(stamped);
    }

    /**
     * A builder with every option unset: each then comes from its {@code FLAKERY_*} variable or
     * its default (docs/spec.md#generator-options).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * One new ID. Blocks at most one tick when the tick's sequence is used up, or the backwards
     * tolerance when the clock stepped back a little. Allocates nothing.
     *
     * @return the ID
     * @throws FlakeryException {@code lease_lost} (closed, or the lease was lost),
     *     {@code clock_moved_backwards}, {@code time_exhausted}, {@code forked}
     */
    public long nextId() {
        try {
            return IdPath.ACTIVE.nextId(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * {@code n} new IDs in increasing order; much cheaper per ID than {@code n} calls of
     * {@link #nextId()}.
     *
     * @param n how many, 0 or more
     * @return the IDs
     * @throws FlakeryException {@code invalid_argument} for a negative {@code n}, else as
     *     {@link #nextId()}
     */
    public long[] nextIds(int n) {
        try {
            return Native.nextIds(handle, n);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Takes an ID apart with this generator's layout.
     *
     * @param id the ID
     * @return its parts
     * @throws FlakeryException {@code invalid_argument} for an ID the layout cannot hold
     */
    public DecodedId decode(long id) {
        return layout.decode(id);
    }

    /**
     * The ID of these parts under this generator's layout (see {@link Layout#compose}).
     *
     * @param timestampMs Unix milliseconds
     * @param datacenterId the datacenter field
     * @param workerId the worker field
     * @param sequence the sequence field
     * @return the ID
     */
    public long compose(long timestampMs, long datacenterId, long workerId, long sequence) {
        return layout.compose(timestampMs, datacenterId, workerId, sequence);
    }

    /**
     * The layout of every ID this generator makes.
     *
     * @return the layout
     */
    public Layout layout() {
        return layout;
    }

    /**
     * The values of the constant fields this generator stamps into every ID (Vesta's
     * {@code version}, {@code type}, {@code method}): those given to
     * {@link Builder#field(String, long)}, else the layout's defaults.
     *
     * @return field name to value, in the layout's order
     */
    public Map<String, Long> constants() {
        return constants;
    }

    /**
     * The node's datacenter ID (0 when the layout has no datacenter field).
     *
     * @return the datacenter ID
     */
    public long datacenterId() {
        return node()[0];
    }

    /**
     * The node's worker ID (0 when the layout has no worker field).
     *
     * @return the worker ID
     */
    public long workerId() {
        return node()[1];
    }

    /**
     * The lease's report of itself now: whether IDs can be issued and, when a coordinator keeps
     * the node ID, which one. For health checks (the Spring Boot starter's health indicator).
     *
     * @return the lease's status
     */
    public LeaseStatus leaseStatus() {
        try {
            return LeaseStatus.of(Native.generatorLeaseStatus(handle));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    private long[] node() {
        try {
            return Native.generatorNode(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Releases the node's lease now; every later {@link #nextId()} fails with
     * {@code lease_lost}. Closing twice is fine.
     */
    @Override
    public void close() {
        try {
            Native.generatorClose(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The options of a generator, one method per option of docs/spec.md#generator-options
     * (named as the core's options table names them in camelCase). An option not set comes from
     * its {@code FLAKERY_*} variable or its default. Every value is checked by the core in
     * {@link #build()}.
     */
    public static final class Builder {
        private final OptionTexts options = new OptionTexts();
        private final List<String> fieldNames = new ArrayList<>();
        private final List<Long> fieldValues = new ArrayList<>();

        private Builder() {}

        private Builder set(String name, Object value) {
            options.set(name, value);
            return this;
        }

        /**
         * How an ID is cut into fields: a preset name or a layout spec (default:
         * {@code FLAKERY_LAYOUT}, else {@code twitter}).
         *
         * @param spec the layout
         * @return this builder
         */
        public Builder layout(String spec) {
            return set("layout", spec);
        }

        /**
         * How an ID is cut into fields.
         *
         * @param layout the layout
         * @return this builder
         */
        public Builder layout(Layout layout) {
            return set("layout", layout.toString());
        }

        /**
         * The node's datacenter field, fixed (default: {@code FLAKERY_DATACENTER_ID}, else leased).
         *
         * @param id 0 to the layout's largest datacenter ID
         * @return this builder
         */
        public Builder datacenterId(long id) {
            return set("datacenterId", id);
        }

        /**
         * The node's worker field, fixed (default: {@code FLAKERY_WORKER_ID}, else leased).
         *
         * @param id 0 to the layout's largest worker ID
         * @return this builder
         */
        public Builder workerId(long id) {
            return set("workerId", id);
        }

        /**
         * What a used-up tick does (default {@link SequencePolicy#WAIT}).
         *
         * @param policy the policy
         * @return this builder
         */
        public Builder sequencePolicy(SequencePolicy policy) {
            return set("sequencePolicy", policy.text());
        }

        /**
         * How far {@code borrow} may run ahead of the clock (default 1000).
         *
         * @param ms milliseconds
         * @return this builder
         */
        public Builder maxBorrowMs(long ms) {
            return set("maxBorrowMs", ms);
        }

        /**
         * The clock step back that is waited out rather than refused (default 1000).
         *
         * @param ms milliseconds
         * @return this builder
         */
        public Builder backwardsToleranceMs(long ms) {
            return set("backwardsToleranceMs", ms);
        }

        /**
         * Start each tick at a random sequence number (default false).
         *
         * @param on whether to
         * @return this builder
         */
        public Builder randomSequenceStart(boolean on) {
            return set("randomSequenceStart", on);
        }

        /**
         * The value of a constant field (Vesta's {@code version}, {@code type}, {@code method}).
         *
         * @param name the field
         * @param value its value, which must fit the field
         * @return this builder
         */
        public Builder field(String name, long value) {
            fieldNames.add(name);
            fieldValues.add(value);
            return this;
        }

        /**
         * Lease the node ID from ZooKeeper: {@code [user:password@]host:port[,...][/chroot]}
         * (default: {@code FLAKERY_ZOOKEEPER}).
         *
         * @param connect the connect string
         * @return this builder
         */
        public Builder zookeeper(String connect) {
            return set("zookeeper", connect);
        }

        /**
         * Lease the node ID from PostgreSQL or MySQL/MariaDB: {@code postgres://...} or
         * {@code mysql://...} (default: {@code FLAKERY_DATABASE_URL}). Its password never
         * appears in an error.
         *
         * @param url the database URL
         * @return this builder
         */
        public Builder databaseUrl(String url) {
            return set("databaseUrl", url);
        }

        /**
         * {@code lease} (flakery's table, the default) or {@code baidu} (uid-generator's
         * {@code WORKER_NODE}).
         *
         * @param mode the mode
         * @return this builder
         */
        public Builder databaseMode(String mode) {
            return set("databaseMode", mode);
        }

        /**
         * The namespace of the leases (default: {@code FLAKERY_NAMESPACE}, else {@code default}).
         *
         * @param namespace 1 to 64 letters, digits, {@code -}, {@code _} or {@code .}
         * @return this builder
         */
        public Builder namespace(String namespace) {
            return set("namespace", namespace);
        }

        /**
         * The ZooKeeper session timeout (default: {@code FLAKERY_SESSION_TIMEOUT_MS}, else 10000).
         *
         * @param ms milliseconds
         * @return this builder
         */
        public Builder sessionTimeoutMs(long ms) {
            return set("sessionTimeoutMs", ms);
        }

        /**
         * The directory of the host-local lease files (default: {@code FLAKERY_LEASE_DIR}, else
         * {@code /run/lock} outside containers).
         *
         * @param dir the directory
         * @return this builder
         */
        public Builder leaseDir(Path dir) {
            return set("leaseDir", dir.toString());
        }

        /**
         * The generator of these options.
         *
         * @return the generator
         * @throws FlakeryException {@code invalid_layout}, {@code invalid_argument}, or the
         *     node-identity errors of docs/spec.md#node-identity
         *     ({@code coordinator_unavailable}, {@code worker_ids_exhausted})
         */
        public Generator build() {
            long[] values = fieldValueArray();
            Map<String, Long> given = new LinkedHashMap<>();
            for (int i = 0; i < values.length; i++) {
                given.put(fieldNames.get(i), values[i]);
            }
            long handle = Native.generatorNew(options.names(), options.values(), fieldNames.toArray(new String[0]),
                    values);
            return new Generator(handle, given);
        }

        /**
         * The budgets report of docs/doctor.md for these options (those not set come from the
         * {@code FLAKERY_*} environment), as {@code flakery doctor --json} prints it: one JSON
         * object whose {@code exit_code} is 0 when all is well, 1 with warnings (each with its
         * fix) and 2 when a generator would be refused. Takes no node ID lease.
         *
         * @return the report as JSON text
         * @throws FlakeryException {@code invalid_layout}, {@code invalid_argument}
         */
        public String doctorJson() {
            return Native.doctorJson(options.names(), options.values(), fieldNames.toArray(new String[0]),
                    fieldValueArray());
        }

        private long[] fieldValueArray() {
            long[] values = new long[fieldValues.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = fieldValues.get(i);
            }
            return values;
        }
    }
}
