package dev.flakery.compat.uid;

/**
 * The shape of uid-generator's {@code com.baidu.fsg.uid.worker.WorkerIdAssigner}: the worker
 * ID of a {@link DefaultUidGenerator}, asked for once, by {@link DefaultUidGenerator#afterPropertiesSet()}.
 * An assigner of uid-generator's own (its {@code DisposableWorkerIdAssigner}) is taken as it is.
 */
@FunctionalInterface
public interface WorkerIdAssigner {
    /**
     * The worker ID of this process: one that no other process uses for the same IDs.
     *
     * @return the worker ID, 0 to 2^workerBits-1
     */
    long assignWorkerId();
}
