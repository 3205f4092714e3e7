package dev.flakery.spring;

import dev.flakery.Generator;
import dev.flakery.LeaseStatus;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The generator's lease on the health endpoint: UP while it can issue IDs (the lease is
 * {@code held}), DOWN otherwise (acquiring, suspect, lost, released), with the lease's state,
 * its coordinator (never a password) and the node. A report read from the core without a lock.
 */
public class FlakeryHealthIndicator extends AbstractHealthIndicator {
    private final Generator generator;

    /**
     * The health of {@code generator}'s lease.
     *
     * @param generator the generator
     */
    public FlakeryHealthIndicator(Generator generator) {
        super("flakery health check failed");
        this.generator = generator;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        LeaseStatus lease = generator.leaseStatus();
        (lease.canIssue() ? builder.up() : builder.down())
                .withDetail("lease", lease.state())
                .withDetail("layout", generator.layout().toString())
                .withDetail("datacenterId", generator.datacenterId())
                .withDetail("workerId", generator.workerId());
        lease.coordinator().ifPresent(coordinator -> builder.withDetail("coordinator", coordinator));
    }
}
