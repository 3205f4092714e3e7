package dev.flakery;

import java.util.Optional;

/**
 * What a generator's lease says of itself now (docs/identity.md): the core's report, read
 * without a lock. It is a report, never a permission: {@link Generator#nextId()} alone decides.
 *
 * @param state {@code acquiring}, {@code held}, {@code suspect}, {@code lost} or
 *     {@code released}
 * @param canIssue whether IDs can be issued in this state ({@code held})
 * @param coordinator the coordinator as its errors name it (address and namespace, never a
 *     password), or empty for a node ID no coordinator keeps (explicit, environment, host lease)
 */
public record LeaseStatus(String state, boolean canIssue, Optional<String> coordinator) {
    static LeaseStatus of(String[] report) {
        return new LeaseStatus(report[0], Boolean.parseBoolean(report[1]),
                report[2].isEmpty() ? Optional.empty() : Optional.of(report[2]));
    }
}
