package dev.flakery.spring;

import dev.flakery.Generator;
import dev.flakery.SequencePolicy;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code flakery.*} properties: one per option of flakery's options table
 * (docs/spec.md#generator-options), named as {@link Generator.Builder}'s methods are
 * ({@code flakery.worker-id}, {@code flakery.database-url}, ...). A property not set is not
 * given to the builder: the option then comes from its {@code FLAKERY_*} variable or its
 * default, as in every binding.
 */
@ConfigurationProperties(prefix = "flakery")
public class FlakeryProperties {
    private String layout;
    private Long datacenterId;
    private Long workerId;
    private SequencePolicy sequencePolicy;
    private Long maxBorrowMs;
    private Long backwardsToleranceMs;
    private Boolean randomSequenceStart;
    private Map<String, Long> fields = new LinkedHashMap<>();
    private String zookeeper;
    private String namespace;
    private Long sessionTimeoutMs;
    private Path leaseDir;
    private String databaseUrl;
    private String databaseMode;

    /** Every property unset. */
    public FlakeryProperties() {}

    /**
     * A builder with every property that is set.
     *
     * @return the builder
     */
    public Generator.Builder builder() {
        Generator.Builder builder = Generator.builder();
        given(layout, builder::layout);
        given(datacenterId, builder::datacenterId);
        given(workerId, builder::workerId);
        given(sequencePolicy, builder::sequencePolicy);
        given(maxBorrowMs, builder::maxBorrowMs);
        given(backwardsToleranceMs, builder::backwardsToleranceMs);
        given(randomSequenceStart, builder::randomSequenceStart);
        fields.forEach(builder::field);
        given(zookeeper, builder::zookeeper);
        given(namespace, builder::namespace);
        given(sessionTimeoutMs, builder::sessionTimeoutMs);
        given(leaseDir, builder::leaseDir);
        given(databaseUrl, builder::databaseUrl);
        given(databaseMode, builder::databaseMode);
        return builder;
    }

    /** Gives {@code value} to the builder's {@code option} only when the property is set. */
    private static <T> void given(T value, Consumer<T> option) {
        if (value != null) {
            option.accept(value);
        }
    }

    /** @return {@code flakery.layout}: a preset name or a layout spec */
    public String getLayout() {
        return layout;
    }

    /** @param layout {@code flakery.layout}: a preset name or a layout spec */
    public void setLayout(String layout) {
        this.layout = layout;
    }

    /** @return {@code flakery.datacenter-id}: the node's datacenter field, fixed */
    public Long getDatacenterId() {
        return datacenterId;
    }

    /** @param datacenterId {@code flakery.datacenter-id}: the node's datacenter field, fixed */
    public void setDatacenterId(Long datacenterId) {
        this.datacenterId = datacenterId;
    }

    /** @return {@code flakery.worker-id}: the node's worker field, fixed */
    public Long getWorkerId() {
        return workerId;
    }

    /** @param workerId {@code flakery.worker-id}: the node's worker field, fixed */
    public void setWorkerId(Long workerId) {
        this.workerId = workerId;
    }

    /** @return {@code flakery.sequence-policy}: {@code wait} or {@code borrow} */
    public SequencePolicy getSequencePolicy() {
        return sequencePolicy;
    }

    /** @param sequencePolicy {@code flakery.sequence-policy}: {@code wait} or {@code borrow} */
    public void setSequencePolicy(SequencePolicy sequencePolicy) {
        this.sequencePolicy = sequencePolicy;
    }

    /** @return {@code flakery.max-borrow-ms}: how far {@code borrow} may run ahead of the clock */
    public Long getMaxBorrowMs() {
        return maxBorrowMs;
    }

    /** @param maxBorrowMs {@code flakery.max-borrow-ms}: how far {@code borrow} may run ahead */
    public void setMaxBorrowMs(Long maxBorrowMs) {
        this.maxBorrowMs = maxBorrowMs;
    }

    /** @return {@code flakery.backwards-tolerance-ms}: the clock step back waited out */
    public Long getBackwardsToleranceMs() {
        return backwardsToleranceMs;
    }

    /** @param backwardsToleranceMs {@code flakery.backwards-tolerance-ms}: the step back waited out */
    public void setBackwardsToleranceMs(Long backwardsToleranceMs) {
        this.backwardsToleranceMs = backwardsToleranceMs;
    }

    /** @return {@code flakery.random-sequence-start}: start each tick at a random sequence */
    public Boolean getRandomSequenceStart() {
        return randomSequenceStart;
    }

    /** @param randomSequenceStart {@code flakery.random-sequence-start} */
    public void setRandomSequenceStart(Boolean randomSequenceStart) {
        this.randomSequenceStart = randomSequenceStart;
    }

    /** @return {@code flakery.fields.NAME}: values of constant fields */
    public Map<String, Long> getFields() {
        return fields;
    }

    /** @param fields {@code flakery.fields.NAME}: values of constant fields */
    public void setFields(Map<String, Long> fields) {
        this.fields = fields;
    }

    /** @return {@code flakery.zookeeper}: lease the node ID from ZooKeeper */
    public String getZookeeper() {
        return zookeeper;
    }

    /** @param zookeeper {@code flakery.zookeeper}: {@code [user:password@]host:port[,...][/chroot]} */
    public void setZookeeper(String zookeeper) {
        this.zookeeper = zookeeper;
    }

    /** @return {@code flakery.namespace}: the namespace of the leases */
    public String getNamespace() {
        return namespace;
    }

    /** @param namespace {@code flakery.namespace}: the namespace of the leases */
    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    /** @return {@code flakery.session-timeout-ms}: the ZooKeeper session timeout */
    public Long getSessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    /** @param sessionTimeoutMs {@code flakery.session-timeout-ms}: the ZooKeeper session timeout */
    public void setSessionTimeoutMs(Long sessionTimeoutMs) {
        this.sessionTimeoutMs = sessionTimeoutMs;
    }

    /** @return {@code flakery.lease-dir}: the directory of the host-local lease files */
    public Path getLeaseDir() {
        return leaseDir;
    }

    /** @param leaseDir {@code flakery.lease-dir}: the directory of the host-local lease files */
    public void setLeaseDir(Path leaseDir) {
        this.leaseDir = leaseDir;
    }

    /** @return {@code flakery.database-url}: lease the node ID from PostgreSQL or MySQL */
    public String getDatabaseUrl() {
        return databaseUrl;
    }

    /** @param databaseUrl {@code flakery.database-url}: {@code postgres://...} or {@code mysql://...} */
    public void setDatabaseUrl(String databaseUrl) {
        this.databaseUrl = databaseUrl;
    }

    /** @return {@code flakery.database-mode}: {@code lease} or {@code baidu} */
    public String getDatabaseMode() {
        return databaseMode;
    }


    /** @param databaseMode {@code flakery.database-mode}: {@code lease} or {@code baidu} */
    public void setDatabaseMode(String databaseMode) {
        this.databaseMode = databaseMode;
    }

    /** The database URL's password never shows: Spring prints properties objects in errors. */
    @Override
    public String toString() {
        return "FlakeryProperties[layout=" + layout + ", workerId=" + workerId + ", datacenterId=" + datacenterId + "]";
    }
}
