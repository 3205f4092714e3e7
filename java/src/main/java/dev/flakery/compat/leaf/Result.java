package dev.flakery.compat.leaf;

/**
 * Leaf's {@code com.sankuai.inf.leaf.common.Result}: an ID, or a negative number and
 * {@link Status#EXCEPTION}. Its getters, setters and {@code toString()} are Leaf's.
 */
public class Result {
    private long id;
    private Status status;

    /** An empty result (id 0, no status), as Leaf's. */
    public Result() {}

    /**
     * A result.
     *
     * @param id the ID, or a negative error number
     * @param status whether {@code id} is an ID
     */
    public Result(long id, Status status) {
        this.id = id;
        this.status = status;
    }

    /**
     * The ID, or a negative error number when the status is {@link Status#EXCEPTION}.
     *
     * @return the ID
     */
    public long getId() {
        return id;
    }

    /**
     * Sets the ID.
     *
     * @param id the ID
     */
    public void setId(long id) {
        this.id = id;
    }

    /**
     * Whether {@link #getId()} is an ID.
     *
     * @return the status
     */
    public Status getStatus() {
        return status;
    }

    /**
     * Sets the status.
     *
     * @param status the status
     */
    public void setStatus(Status status) {
        this.status = status;
    }

    @Override
    public String toString() {
        return "Result{id=" + id + ", status=" + status + '}';
    }
}
